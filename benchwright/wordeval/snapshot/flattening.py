"""Flattening to {key: value}, keyed by the reference document's indices.

``flatten`` writes each kind of record in turn (stories, tables, sections, fields, notes,
comments, revisions, bookmarks, styles, content controls, properties and settings), always in
that order, so the keys of equal snapshots come out in the same order."""
from __future__ import annotations

from typing import Any

from benchwright.wordeval.snapshot.alignment import Alignment, identity_alignment
from benchwright.wordeval.snapshot.records import Snapshot

# story -> paragraph index -> the paragraph's key (``body/P12``), which fields, notes, comments,
# revisions and bookmarks name their paragraph by
ParagraphKeys = dict[str, dict[int, str]]


def flatten(snap: Snapshot, al: Alignment) -> dict[str, Any]:
    out: dict[str, Any] = {}
    pkey = _stories(snap, al, out)
    _tables(snap, al, out)
    _sections(snap, al, out)
    _fields(snap, al, pkey, out)
    _notes_and_comments(snap, al, pkey, out)
    _revisions_and_bookmarks(snap, al, pkey, out)
    _document(snap, out)
    return out


def _stories(snap: Snapshot, al: Alignment, out: dict[str, Any]) -> ParagraphKeys:
    pkey: ParagraphKeys = {}
    for s, paras in snap.stories.items():
        rs = al.stories.get(s, s)
        m = al.paragraphs.get(s, {})
        keys = {}
        for i, p in enumerate(paras):
            k = f"{rs}/P{m[i]}" if i in m else f"{rs}/X{i}"
            keys[i] = k
            out[k + "/text"] = p.text
            if p.style is not None:
                out[k + "/style"] = p.style
            if p.loc:
                out[k + "/loc"] = p.loc
            for pk, pv in p.para.items():
                out[f"{k}/para.{pk}"] = pv
            for ck, segs in p.chars.items():
                out[f"{k}/chars.{ck}"] = segs   # [[start, end, value], ...], never mutated
            for nk, nv in p.num.items():
                out[f"{k}/num.{nk}"] = nv
            for di, d in enumerate(p.drawings):
                for dk, dv in d.items():
                    out[f"{k}/draw{di}.{dk}"] = dv
        pkey[s] = keys
        out[f"{rs}/count"] = len(paras)
    return pkey


def _tables(snap: Snapshot, al: Alignment, out: dict[str, Any]) -> None:
    for j, t in enumerate(snap.tables):
        k = f"tables/T{al.tables[j]}" if j in al.tables else f"tables/X{j}"
        out[k + "/rows"] = len(t["rows"])
        out[k + "/cols"] = max((len(r) for r in t["cells"]), default=0)
        out[k + "/grid"] = t["grid"]
        out[k + "/text"] = t["text"]
        if t["style"]:
            out[k + "/style"] = t["style"]
        if t["caption"]:
            out[k + "/caption"] = t["caption"]
        for pk, pv in t["tbl"].items():
            out[f"{k}/tbl.{pk}"] = pv
        for ri, row in enumerate(t["rows"]):
            for pk, pv in row.items():
                out[f"{k}/row{ri + 1}.{pk}"] = pv
        for ri, row in enumerate(t["cells"]):
            for ci, cell in enumerate(row):
                for pk, pv in cell.items():
                    out[f"{k}/cell{ri + 1}.{ci + 1}.{pk}"] = pv
    out["tables/count"] = len(snap.tables)


def _sections(snap: Snapshot, al: Alignment, out: dict[str, Any]) -> None:
    for j, sec in enumerate(snap.sections):
        k = f"sections/S{al.sections[j]}" if j in al.sections else f"sections/XS{j}"
        for pk, pv in sec["props"].items():
            out[f"{k}/{pk}"] = pv
        out[f"{k}/paragraphs"] = sec["n_paras"]
        for hf, info in sec["hf"].items():
            out[f"{k}/{hf}.linked"] = info["linked"]
            out[f"{k}/{hf}.exists"] = info["part"] is not None
    out["sections/count"] = len(snap.sections)


def _fields(snap: Snapshot, al: Alignment, pkey: ParagraphKeys, out: dict[str, Any]) -> None:
    el_index: dict[str, dict] = {}   # story -> {w:p element: paragraph index}
    for s, flist in snap.fields.items():
        rs = al.stories.get(s, s)
        for i, f in enumerate(flist):
            k = f"fields/{rs}/F{i}"
            out[k + "/code"] = f["code"]
            out[k + "/result"] = f["result"]
            if f.get("locked"):
                out[k + "/locked"] = True
            if "entries" in f:
                out[k + "/entries"] = f["entries"]
            for n, e in enumerate(f.get("layout", ())):
                _entry_layout(f"{k}/E{n}", e, out)
            if s not in el_index:
                el_index[s] = {p.el: i for i, p in enumerate(snap.stories.get(s, []))}
            out[k + "/para"] = pkey.get(s, {}).get(el_index[s].get(f["para"]))


def _entry_layout(ek: str, e: dict, out: dict[str, Any]) -> None:
    """One entry of a multi-paragraph field result, formatted as a paragraph is."""
    if e["style"] is not None:
        out[ek + "/style"] = e["style"]
    for pk, pv in e["para"].items():
        out[f"{ek}/para.{pk}"] = pv
    for nk, nv in e["num"].items():
        out[f"{ek}/num.{nk}"] = nv
    for ck, segs in e["chars"].items():
        out[f"{ek}/chars.{ck}"] = segs


def _notes_and_comments(snap: Snapshot, al: Alignment, pkey: ParagraphKeys, out: dict[str, Any]) -> None:
    for kind, notes in snap.notes.items():
        for j, n in enumerate(notes):
            rs = al.stories.get(n["story"], n["story"])
            out[f"{rs}/ref"] = pkey["body"].get(n["para"])
        out[f"{kind}/count"] = len(notes)

    for j, c in enumerate(snap.comments):
        rs = al.stories.get(c["story"], c["story"])
        out[f"{rs}/anchor"] = c["anchor"]
        out[f"{rs}/author"] = c["author"]
        out[f"{rs}/initials"] = c["initials"]
        out[f"{rs}/para"] = pkey["body"].get(c["para"]) if c["para"] is not None else None
        if c.get("parent"):
            out[f"{rs}/parent"] = al.stories.get(c["parent"], c["parent"])
        if c.get("done"):
            out[f"{rs}/done"] = True
    out["comment/count"] = len(snap.comments)


def _revisions_and_bookmarks(snap: Snapshot, al: Alignment, pkey: ParagraphKeys, out: dict[str, Any]) -> None:
    for s, revs in snap.revisions.items():
        rs = al.stories.get(s, s)
        for i, r in enumerate(revs):
            k = f"revisions/{rs}/R{i}"
            for rk, rv in r.items():
                if rk == "para":
                    rv = pkey.get(s, {}).get(rv)
                out[f"{k}/{rk}"] = rv
    out["revisions/count"] = sum(len(v) for v in snap.revisions.values())

    for name, b in snap.bookmarks.items():
        out[f"bookmarks/{name}/text"] = b["text"]
        out[f"bookmarks/{name}/para"] = pkey["body"].get(b["para"])


def _document(snap: Snapshot, out: dict[str, Any]) -> None:
    """Styles, content controls, document properties and settings: keyed by name, not aligned."""
    for name, st in snap.styles.items():
        for sk, sv in st.items():
            if isinstance(sv, dict):
                for pk, pv in sv.items():
                    out[f"styles/{name}/{sk}.{pk}"] = pv
            elif sv is not None and sv is not False:
                out[f"styles/{name}/{sk}"] = sv

    for i, sdt in enumerate(snap.sdts):
        for sk, sv in sdt.items():
            out[f"sdts/D{i}/{sk}"] = sv
    out["sdts/count"] = len(snap.sdts)
    for pk, pv in snap.props.items():
        out[f"props/{pk}"] = pv
    for sk, sv in snap.settings.items():
        out[f"settings/{sk}"] = sv


def snapshot_dict(snap: Snapshot) -> dict[str, Any]:
    """Reference-indexed flat dict of a snapshot on its own (identity alignment)."""
    return flatten(snap, identity_alignment(snap))
