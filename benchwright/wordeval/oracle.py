"""WordEval oracle: compare a snapshot of an output .docx with the case's reference snapshot.

``compare(ref, out, oracle)`` runs the checks a case passes when

1. every *target* (the unit's object-properties, located by stable anchors in the reference,
   :func:`resolve_anchor`) equals the reference within tolerance, and
2. *preservation*: everything else in the canonical snapshot equals the reference, after removing
   the unit's allowed side effects and volatile parts (rsids, paraIds, drawing ids, proofErr,
   lastRenderedPageBreak, dates, app.xml, generated bookmark names, field results, authors).

Domain code with no I/O beyond the snapshot: the case builder uses it to refuse an edit with no
observable effect, the evaluator (``benchwright.evaluation.wordeval``) to score outputs.
"""
from __future__ import annotations

import fnmatch
import hashlib
import re
from typing import Any

from benchwright.formats.ooxml.package import Package
from benchwright.memo import Memo
from benchwright.wordeval.snapshot import Snapshot, align_snapshots, extract_snapshot, flatten, snapshot_dict

# Never compared in the preservation check (a unit may still target them explicitly).
VOLATILE = (
    "props/core.lastModifiedBy", "props/core.revision", "props/core.created", "props/core.modified",
    "props/core.lastPrinted", "comment/*/author", "comment/*/initials", "revisions/*/author",
    "fields/*/result", "styles/*/used", "styles/*/priority", "styles/*/hidden", "styles/*/semiHidden", "styles/*/qFormat",
    "styles/*/custom",
    # formatting inside comment bodies (Word and LibreOffice restyle them freely); the comment's
    # text, anchor and position are still compared
    "comment/*/P*/chars.*", "comment/*/P*/para.*", "comment/*/P*/style",
)
DEFAULT_TOLERANCE = (
    ("*/para.ind.*", 2), ("*/para.spacing.*", 2), ("*/para.tabs", 2), ("sections/*/pg*", 20),
    ("sections/*/cols.space", 2), ("tables/*/grid", 2), ("tables/*/tbl.tblW.w", 2), ("tables/*/tbl.tblInd.w", 2),
    ("tables/*/cell*.tcW.w", 2), ("tables/*/row*.trHeight*", 2), ("tables/*/tbl.tblCellMar.*", 2),
    ("*/draw*.cx", 12700), ("*/draw*.cy", 12700), ("*/draw*.offset", 12700), ("styles/*/pPr.*", 2),
    ("*/chars.spacing", 2),
)


# --------------------------------------------------------------------------- comparison


def _compile(patterns, flags: int = 0) -> re.Pattern | None:
    pats = list(patterns)
    if not pats:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in pats), flags)


_VOLATILE_RE = _compile(VOLATILE)
_DEFAULT_TOL = [(re.compile(fnmatch.translate(p)), float(t)) for p, t in DEFAULT_TOLERANCE]


def _tolerance(key: str, overrides: dict) -> float:
    for pat, tol in overrides.items():
        if fnmatch.fnmatchcase(key, pat) or fnmatch.fnmatchcase(key.rsplit("/", 1)[-1], pat):
            return float(tol)
    for rx, tol in _DEFAULT_TOL:
        if rx.match(key):
            return tol
    return 0.0


def close(a: Any, b: Any, tol: float) -> bool:
    if a == b:
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= tol
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        return all(close(x, y, tol) for x, y in zip(a, b))
    return False


def _style_names(flat: dict) -> set[str]:
    return {k.split("/", 2)[1] for k in flat if k.startswith("styles/")}


def _para_index_to_section(snap: Snapshot, idx: int) -> int:
    acc = 0
    for i, sec in enumerate(snap.sections):
        acc += sec["n_paras"]
        if idx < acc:
            return i
    return len(snap.sections) - 1


def _find_para(paras, prefix: str) -> int | None:
    want = prefix.strip()
    for i, p in enumerate(paras):
        if p.read.strip().startswith(want):
            return i
    return None


def resolve_anchor(snap: Snapshot, anchor: dict | None) -> list[str]:
    """Key prefixes of the object an anchor names, in the (reference) snapshot; [] if not found."""
    if anchor is None:
        return [""]
    a = anchor
    if "document" in a:
        return [a["document"]] if a["document"] in ("settings", "props", "sections", "tables", "fields") else [""]
    body = snap.stories.get("body", [])
    story = a.get("story", "body")
    if story in ("header", "footer"):
        sidx = _para_index_to_section(snap, _find_para(body, a["section"]) or 0) if a.get("section") else \
            len(snap.sections) - 1
        typ = {"primary": "default", "first": "first", "even": "even"}[a.get("hf_type", "primary")]
        sname = f"{story}/S{sidx}/{typ}"
        if "paragraph" in a:
            j = _find_para(snap.stories.get(sname, []), a["paragraph"])
            return [f"{sname}/P{j}"] if j is not None else []
        return [sname]
    if story in ("footnote", "endnote") and "note" in a:
        for n in snap.notes.get(story, []):
            txt = "\n".join(p.read for p in snap.stories[n["story"]]).strip()
            if txt.startswith(a["note"]):
                return [n["story"]]
        return []
    if "comment" in a:
        for c in snap.comments:
            if c["text"].startswith(a["comment"]):
                return [c["story"]]
        return []
    if "paragraphs" in a:
        out = []
        for pfx in a["paragraphs"]:
            i = _find_para(body, pfx)
            if i is None:
                return []
            out.append(f"body/P{i}")
        return out
    if "table" in a:
        spec = a["table"]
        for i, t in enumerate(snap.tables):
            if "caption" in spec and (t.get("caption") or "").startswith(spec["caption"]):
                return [f"tables/T{i}"]
            if "first_cell" in spec and t["text"] and t["text"][0] and t["text"][0][0].startswith(spec["first_cell"]):
                return [f"tables/T{i}"]
        return []
    if "image" in a:
        for i, p in enumerate(body):
            # a picture or shape by its alternative text, or a shape by the text it holds
            if any(d.get("descr") == a["image"]["descr"] if "descr" in a["image"]
                   else (d.get("text") or "").startswith(a["image"]["text"]) for d in p.drawings):
                return [f"body/P{i}"]
        return []
    if "paragraph" in a:
        i = _find_para(body, a["paragraph"])
        return [f"body/P{i}"] if i is not None else []
    if "section" in a:
        i = _find_para(body, a["section"]) if a["section"] else None
        return [f"sections/S{_para_index_to_section(snap, i) if i is not None else len(snap.sections) - 1}"]
    if "style" in a:
        for name in snap.styles:
            if name.lower() == str(a["style"]).lower():
                return [f"styles/{name}"]
        return []
    if "bookmark" in a:
        return [f"bookmarks/{a['bookmark']}"]
    if "content_control" in a:
        for i, s in enumerate(snap.sdts):
            if s.get("tag") == a["content_control"]:
                return [f"sdts/D{i}"]
        return []
    if "property" in a:
        return ["props"]
    return [""]


def _patterns(prefixes: list[str], keys: list[str]) -> list[str]:
    out = []
    for pfx in prefixes:
        for k in keys:
            out.append(k if not pfx or k.startswith("/") else f"{pfx}/{k}")
    return [p.lstrip("/") for p in out]


def compare(ref: Snapshot, out: Snapshot, oracle: dict, ref_flat: dict | None = None,
            max_differences: int = 25, extra_allowed: tuple = ()) -> dict:
    """Target and preservation checks of ``out`` against ``ref`` under ``oracle``."""
    al = align_snapshots(ref, out)
    rf = ref_flat if ref_flat is not None else snapshot_dict(ref)
    of = flatten(out, al)
    tol_over = oracle.get("tolerance") or {}
    union = set(rf) | set(of)
    checks = []
    extra_re = _compile(extra_allowed, re.IGNORECASE)
    target_keys: set[str] = set()
    all_target_prefixes: list[str] = []
    for t in oracle.get("targets", []):
        prefixes = resolve_anchor(ref, t.get("anchor"))
        all_target_prefixes += [p for p in prefixes if p]
        rx = _compile(_patterns(prefixes, t["keys"]), re.IGNORECASE)
        keys = sorted(k for k in union if rx.match(k) and not (extra_re is not None and extra_re.match(k))) \
            if rx is not None else []
        name = "target:" + ",".join(t["keys"])
        if not prefixes:
            checks.append({"name": name, "passed": False, "anchor": t.get("anchor"),
                           "reason": "target not found in reference"})
            continue
        if not keys:
            # the property is at its default (absent) in both documents
            checks.append({"name": name, "passed": True, "anchor": t.get("anchor"), "keys": 0})
            continue
        diffs = [{"key": k, "expected": rf.get(k), "actual": of.get(k)} for k in keys
                 if not close(rf.get(k), of.get(k), _tolerance(k, tol_over))]
        target_keys.update(keys)
        checks.append({"name": name, "passed": not diffs, "anchor": t.get("anchor"), "keys": len(keys),
                       "differences": diffs[:max_differences]})
    # preservation
    allowed = list(extra_allowed)
    for pat in oracle.get("allowed_side_effects", []):
        if "{target}" in pat:
            allowed += [pat.replace("{target}", p) for p in all_target_prefixes]
        else:
            allowed.append(pat)
    ref_styles, out_styles = _style_names(rf), _style_names(of)
    allowed_re = _compile(allowed, re.IGNORECASE)
    found = []   # (key, difference): sorted once at the end, only the differences
    missing = object()
    for k in union - target_keys:
        a, b = rf.get(k, missing), of.get(k, missing)
        if a == b:
            continue
        a = None if a is missing else a
        b = None if b is missing else b
        if _VOLATILE_RE.match(k) or (allowed_re is not None and allowed_re.match(k)):
            continue
        if k.startswith("styles/"):
            name = k.split("/", 2)[1]
            if name not in ref_styles:
                continue   # extra styles in the output are harmless; their effects show in effective values
            if not (rf.get(f"styles/{name}/used") or rf.get(f"styles/{name}/custom")):
                continue   # definitions of unused built-in styles: only compared when a unit targets them
            if name not in out_styles:
                if rf.get(f"styles/{name}/used") or rf.get(f"styles/{name}/custom"):
                    if k.endswith("/type"):
                        found.append((k, {"key": f"styles/{name}", "expected": "present", "actual": "missing"}))
                continue
        if not close(a, b, _tolerance(k, tol_over)):
            found.append((k, {"key": k, "expected": a, "actual": b}))
    diffs = [d for _, d in sorted(found, key=lambda kd: kd[0])]
    checks.append({"name": "preservation", "passed": not diffs, "n_differences": len(diffs),
                   "differences": diffs[:max_differences]})
    return {"passed": all(c["passed"] for c in checks), "checks": checks}


_REF_CACHE: "Memo[tuple[Snapshot, dict]]" = Memo(64)


def reference_snapshot(reference_docx: bytes, members: dict[str, bytes] | None = None) -> tuple[Snapshot, dict]:
    """Snapshot and flat dict of a reference .docx, memoised by content (the last 64). ``members``: what
    this process wrote ``reference_docx`` from (``WordDoc.to_archive``), read instead of the archive."""
    def extract() -> tuple[Snapshot, dict]:
        source = reference_docx if members is None else \
            Package.from_written(reference_docx, members, "reference.docx", read_only=True)
        snap = extract_snapshot(source, "reference.docx")
        return snap, snapshot_dict(snap)

    return _REF_CACHE.get(hashlib.sha256(reference_docx).hexdigest(), extract)


__all__ = ["compare", "resolve_anchor", "reference_snapshot", "close", "VOLATILE", "DEFAULT_TOLERANCE"]
