"""Base documents: synthetic recipes and packaged real documents, with their anchor roles.

``base_document(name) -> bytes`` builds (or loads) one base document deterministically;
``BASEDOCS`` is the parsed ``catalogue/basedocs.yaml``.  Synthetic documents start from
python-docx's default template; the few Word-validity defects of that template are fixed here
(``w:zoom`` without the required ``w:percent``).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from benchwright import strict_yaml
from benchwright.errors import SourceError
from benchwright.formats.ooxml.ns import qn

HERE = Path(__file__).parent
CATALOGUE_DIR = HERE / "catalogue"
BASEDOC_DIR = HERE / "basedocs"


@lru_cache(maxsize=1)
def basedocs_spec() -> dict:
    with open(CATALOGUE_DIR / "basedocs.yaml", encoding="utf-8") as fh:
        return strict_yaml.load(fh)["basedocs"]


def roles(name: str) -> dict:
    return basedocs_spec()[name].get("roles", {})


def _fix_template(doc) -> None:
    settings = doc.settings.element
    zoom = settings.find(qn("w:zoom"))
    if zoom is not None and zoom.get(qn("w:percent")) is None:
        zoom.set(qn("w:percent"), "100")
    # Word's own Normal template turns widow/orphan control on for every paragraph
    from benchwright.formats.ooxml.schema_order import get_or_add
    dd = doc.styles.element.find(qn("w:docDefaults"))
    if dd is not None:
        get_or_add(get_or_add(get_or_add(dd, "w:pPrDefault"), "w:pPr"), "w:widowControl")
    cp = doc.core_properties
    cp.author = "WordEval"
    cp.last_modified_by = "WordEval"
    cp.title = ""
    cp.revision = 1


def _caption(doc, label: str, text: str, number: int) -> None:
    from benchwright.wordeval.docmodel import make_run
    from benchwright.wordeval.ops.common import field_runs
    p = doc.add_paragraph(style="Caption")
    p._p.append(make_run(label + " "))
    for r in field_runs(f"SEQ {label} \\* ARABIC", str(number)):
        p._p.append(r)
    p._p.append(make_run(": " + text))


def build_recipe(spec: dict) -> bytes:
    import docx
    from docx.enum.section import WD_SECTION

    from benchwright.wordeval.docmodel import WordDoc
    from benchwright.wordeval.ops.tables import cell_set_text

    doc = docx.Document()
    _fix_template(doc)
    counters: dict[str, int] = {}
    for block in spec["recipe"]:
        if "table" in block:
            t = block["table"]
            cells = t["cells"]
            table = doc.add_table(rows=len(cells), cols=max(len(r) for r in cells))
            if t.get("style"):
                table.style = doc.styles[t["style"]]
            for r, row in enumerate(cells):
                for c, text in enumerate(row):
                    cell_set_text(table.cell(r, c)._tc, text)
        elif "caption" in block:
            label = block.get("label", "Table")
            counters[label] = counters.get(label, 0) + 1
            _caption(doc, label, block["caption"], counters[label])
        elif "section_break" in block:
            doc.add_section({"nextPage": WD_SECTION.NEW_PAGE, "continuous": WD_SECTION.CONTINUOUS}
                            [block["section_break"]])
            # python-docx ends the section with an extra empty paragraph; Word puts the break on
            # the section's last paragraph: move the w:sectPr there and drop the empty paragraph
            paras = doc.paragraphs
            empty, last = paras[-1]._p, paras[-2]._p
            sect = empty.pPr.sectPr
            from benchwright.formats.ooxml.schema_order import get_or_add, insert_child
            insert_child(get_or_add(last, "w:pPr"), sect)
            empty.getparent().remove(empty)
        else:
            doc.add_paragraph(block["text"], style=block.get("style"))
    if spec.get("header"):
        hdr = doc.sections[0].header
        hdr.is_linked_to_previous = False
        hdr.paragraphs[0].text = spec["header"]
    import io
    buf = io.BytesIO()
    doc.save(buf)
    return WordDoc(buf.getvalue(), "recipe").to_bytes()


@lru_cache(maxsize=None)
def base_document(name: str) -> bytes:
    """Bytes of base document ``name`` (deterministic)."""
    specs = basedocs_spec()
    if name not in specs:
        raise SourceError(f"unknown base document {name!r}")
    spec = specs[name]
    if "file" in spec:
        from benchwright.wordeval.docmodel import WordDoc
        data = (BASEDOC_DIR / spec["file"]).read_bytes()
        return WordDoc(data, spec["file"]).to_bytes()
    return build_recipe(spec)


__all__ = ["base_document", "basedocs_spec", "roles", "build_recipe"]
