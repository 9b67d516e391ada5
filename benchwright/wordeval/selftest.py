"""Oracle self-tests: every unit's oracle is itself tested.

For a built case:

* the reference passes;
* the unedited input fails (and fails a *target* check, not only preservation);
* a mutation of an untouched property (alignment of a paragraph the unit does not touch) fails;
* an equivalent alternative passes: (a) the reference rewritten into equivalent XML (runs split,
  explicit on/off values) for every unit, and (b) where the unit asks for the effective value of a
  character property, the same value applied through a new character style instead of direct
  formatting;
* a LibreOffice re-save of the reference passes where the unit declares the property survives
  (``libreoffice_survives``).
"""
from __future__ import annotations

import fnmatch
import json

from docx.shared import Inches

from benchwright.formats.ooxml.ns import qn
from benchwright.wordeval import ops
from benchwright.wordeval import text as T
from benchwright.wordeval.catalogue import Catalogue, load_catalogue
from benchwright.wordeval.docmodel import WordDoc, split_run
from benchwright.wordeval.ops.generic import ensure_pgmar


# Properties LibreOffice rewrites on every round trip although the document is unchanged for a
# reader: it writes 0 header/footer distances when a section has no header, materialises table
# styles into fixed layout / explicit widths / cell borders, and adds document language and
# hyphenation settings.  The LibreOffice self-test tolerates exactly these; a unit whose *target*
# is among them declares ``libreoffice_survives: false``.
LIBREOFFICE_LOSSY = (
    "sections/*/pgMar.header", "sections/*/pgMar.footer", "settings/autoHyphenation", "props/core.language",
    "tables/*/tbl.tblLayout.type", "tables/*/tbl.tblW.*", "tables/*/cell*.tcBorders*",
    # LibreOffice moves document defaults into the Normal style and writes widow control and the
    # footnote/endnote options explicitly
    "styles/*/pPr.widowControl", "styles/*/tblPr.tblInd.*", "*/para.widowControl",
    "settings/footnotePr.*", "settings/endnotePr.*",
    # it recomputes cell widths, writes the line-numbering distance and page-border colours
    "tables/*/cell*.tcW.*", "sections/*/lnNumType.distance", "sections/*/pgBorders.*.color",
    "*/para.pBdr.*.color",
    # it gives every section explicit header/footer references (same content, no longer "linked")
    "sections/*/header.*.linked", "sections/*/footer.*.linked",
    # with line numbering on it marks header/footer paragraphs as not numbered
    "header/*/para.suppressLineNumbers", "footer/*/para.suppressLineNumbers", "styles/*/pPr.suppressLineNumbers",
)
# LibreOffice also drops empty paragraphs that only carry a section break and rewrites
# hyperlinks with fragments or relative targets, which some real fixture documents contain; the
# round-trip self-test therefore uses the synthetic base documents.
LIBREOFFICE_TEST_BASES = ("report", "memo", "brief")


def _oracle(case: dict) -> dict:
    return json.loads(case["oracle"]) if isinstance(case["oracle"], str) else case["oracle"]


def _target_prefixes(oracle: dict) -> list[str]:
    out = []
    for t in oracle.get("targets", []):
        a = t.get("anchor") or {}
        for k in ("paragraph", "section"):
            if isinstance(a.get(k), str):
                out.append(a[k])
        out += list(a.get("paragraphs", []))
    tgt = oracle.get("target") or {}
    for k in ("paragraph", "section"):
        if isinstance(tgt.get(k), str):
            out.append(tgt[k])
    out += list(tgt.get("paragraphs", []))
    return out


def mutate_untouched(reference_docx: bytes, oracle: dict) -> bytes:
    """Change the alignment of a body paragraph the unit does not target (right <-> centre)."""
    wd = WordDoc(reference_docx, "mutation")
    avoid = _target_prefixes(oracle)
    candidates = []
    for p in T.iter_block_paragraphs(wd.body):
        txt = T.paragraph_read_text(p).strip()
        if not txt or any(txt.startswith(a) or a.startswith(txt[:20]) for a in avoid):
            continue
        if any(anc.tag == qn("w:tbl") for anc in p.iterancestors()):
            continue
        candidates.append(p)
    if not candidates:
        # fall back to the first section's page setup: one inch more (far beyond the 20-twip
        # tolerance of sections/*/pg*) on a measure the oracle neither targets nor allows
        if not wd.doc.sections:
            # a body without w:sectPr (valid: the page setup is the application's default) gets one:
            # the page height it then states is the mutation
            wd.doc.element.body.get_or_add_sectPr()
        sec = wd.doc.sections[0]
        covered = [k for t in oracle.get("targets", []) if not t.get("anchor") or "section" in t["anchor"]
                   for k in t.get("keys", [])] + list(oracle.get("allowed_side_effects", []))
        attr = next((a for key, a in (("pgSz.h", "page_height"), ("pgMar.left", "left_margin"),
                                      ("pgMar.bottom", "bottom_margin"))
                     if not any(fnmatch.fnmatchcase(f"sections/S0/{key}", k) or fnmatch.fnmatchcase(key, k)
                                for k in covered)), "page_height")
        if attr != "page_height":
            ensure_pgmar(sec._sectPr)
        current = getattr(sec, attr)
        # python-docx lengths are EMU: an inch is Inches(1), not 1440
        setattr(sec, attr, (current if current is not None else Inches(11 if attr == "page_height" else 1))
                + Inches(1))
        return wd.to_bytes()
    p = candidates[-1]
    jc = p.find(qn("w:pPr") + "/" + qn("w:jc"))
    new = "center" if jc is not None and jc.get(qn("w:val")) == "right" else "right"
    ops.set_locus(p, "w:pPr/w:jc@w:val", "attr", new)
    return wd.to_bytes()


def xml_variant(reference_docx: bytes) -> bytes:
    """An equivalent rewrite of the reference: text runs split in two, on/off flags written
    explicitly (``w:val="1"``), hex colours in lower case.  Word shows the same document."""
    wd = WordDoc(reference_docx, "variant")
    onoff = {qn("w:" + t) for t in ("b", "i", "caps", "smallCaps", "strike", "dstrike", "vanish", "keepNext",
                                    "keepLines", "pageBreakBefore")}
    for root in wd._all_story_roots():
        for r in list(root.iter(qn("w:r"))):
            ts = r.findall(qn("w:t"))
            if len(ts) == 1 and ts[0].text and len(ts[0].text) > 3 and \
                    not any(c.tag in (qn("w:fldChar"), qn("w:instrText")) for c in r):
                split_run(r, len(ts[0].text) // 2)
        for el in root.iter(*onoff):
            if el.get(qn("w:val")) is None:
                el.set(qn("w:val"), "1")
        for el in root.iter(qn("w:color")):
            v = el.get(qn("w:val"))
            if v and v != "auto":
                el.set(qn("w:val"), v.lower())
    return wd.to_bytes()


def char_style_alternative(case: dict, cat: Catalogue | None = None) -> bytes | None:
    """For character-property units: the same value through a character style (effective value)."""
    cat = cat or load_catalogue()
    oracle = _oracle(case)
    unit = cat.units.get(oracle.get("unit_id"))
    if unit is None or "char_style" not in unit.get("alternatives", []):
        return None
    from benchwright.wordeval.cases import _resolve_unit
    # the same target and value draws as build_case
    _, _, _, target, native, _, _ = _resolve_unit(unit, case["seed"], case["base_document"], cat)
    wd = WordDoc(case["input_docx"], "alternative")
    ops.apply(wd, "char_style_equivalent", target, native)
    return wd.to_bytes()


__all__ = ["LIBREOFFICE_LOSSY", "mutate_untouched", "xml_variant", "char_style_alternative"]
