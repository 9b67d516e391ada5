"""Per-format writers of the synthetic Workspace-Bench release: each file type written with the
library made for it (python-docx, openpyxl, python-pptx, fpdf2, nbformat, tomli_w, PyYAML, Pillow,
sqlite3, pyarrow, numpy, zipfile, tarfile, gzip, email, wave, difflib, configparser, ElementTree...).

A file is described by a ``FileSpec`` (its path inside the workspace, its format, a title, a table of
numbers, the references it carries); ``write_file`` writes it. A ``Ref`` is one planted explicit
dependency: the writer puts its reference text into the file where that format keeps references
(a .docx hyperlink relationship, an .xlsx formula, a LaTeX ``\\input``, a Python import...), written
relative to the referring file's folder (``style="relative"``) or as the bare file name
(``style="bare"``). The planted truth (``synth.py``) is made from the same ``Ref`` objects, so a
reference is listed exactly when it is written.

Determinism: no clocks and no random ids. Office files get fixed core properties and are re-zipped
with fixed entry times; PDFs a fixed creation date; notebooks fixed cell ids; zip/tar/gzip members
fixed times; e-mails fixed dates, Message-IDs and MIME boundaries.
"""
from __future__ import annotations

import configparser
import csv
import difflib
import gzip
import io
import json
import math
import posixpath
import random
import sqlite3
import struct
import tarfile
import wave
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

from benchwright.workspace_bench.synth_content import MONTHS, Words

FIXED_DATETIME = datetime(2024, 6, 28, 9, 30, 0)
FIXED_ZIP_TIME = (2024, 6, 28, 9, 30, 0)
AUTHOR = "benchwright synth"


@dataclass(frozen=True)
class Ref:
    """One planted explicit reference from the file that carries it to ``dst`` (a path in the same
    workspace). ``edge_type`` is one of schemas.workspace_bench.EXPLICIT_EDGE_TYPES."""

    edge_type: str
    dst: str
    style: str = "relative"          # "relative" to the referring file's folder, or "bare" file name


@dataclass
class FileSpec:
    """One file to write: ``path`` inside its workspace ('/'-separated), ``fmt`` (a key of WRITERS),
    ``persona`` and ``seed`` for its prose, an optional ``table`` (header row + rows) whose numbers
    derived files repeat, the references it carries and writer options (``extra``)."""

    path: str
    fmt: str
    persona: str
    seed: int
    title: str = ""
    table: list | None = None
    refs: list[Ref] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def embeds(self) -> bool:
        """Whether the writer copies another file's bytes into this one (so that file goes first)."""
        return self.fmt in ("docx", "pptx") and any(r.edge_type in ("image", "embedded_object") for r in self.refs)


def file_type(path: str) -> str:
    """The type a file counts as: lower-case extension, or the name when there is none."""
    name = posixpath.basename(path)
    stem, dot, ext = name.rpartition(".")
    return ext.lower() if dot and stem else name


def ref_text(src: str, ref: Ref) -> str:
    """The reference as written in ``src``: the path of ``ref.dst`` relative to src's folder, or its
    bare name."""
    if ref.style == "bare":
        return posixpath.basename(ref.dst)
    return posixpath.relpath(ref.dst, posixpath.dirname(src) or ".")


def _refs(spec: FileSpec, *types: str) -> list[Ref]:
    return [r for r in spec.refs if r.edge_type in types]


def _words(spec: FileSpec) -> Words:
    return Words(spec.persona, random.Random(spec.seed))


def _title(spec: FileSpec) -> str:
    return spec.title or posixpath.basename(spec.path).rsplit(".", 1)[0].replace("_", " ").capitalize()


def _table(spec: FileSpec) -> list[list]:
    if spec.table:
        return spec.table
    r = random.Random(spec.seed + 1)
    return [["item", "quantity", "amount"]] + [[f"{MONTHS[i][:3]}", r.randint(1, 90), r.randint(100, 9000)]
                                               for i in range(r.randint(3, 8))]


def _link_label(dst: str) -> str:
    return posixpath.basename(dst).rsplit(".", 1)[0].replace("_", " ")


# ---------------------------------------------------------------------------------------------
# Shared helpers: fixed zip entry times, fixed core properties
# ---------------------------------------------------------------------------------------------

def fixed_zip(data: bytes) -> bytes:
    """Re-zip ``data`` with every entry at FIXED_ZIP_TIME (library writers stamp the current time)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=FIXED_ZIP_TIME)
            fixed.compress_type = info.compress_type
            fixed.external_attr = info.external_attr
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


def _fix_core(props, title: str) -> None:
    props.author = AUTHOR
    props.last_modified_by = AUTHOR
    props.title = title
    props.revision = 1
    props.created = FIXED_DATETIME
    props.modified = FIXED_DATETIME
    props.last_printed = FIXED_DATETIME


def _save_ooxml(doc, title: str) -> bytes:
    _fix_core(doc.core_properties, title)
    buf = io.BytesIO()
    doc.save(buf)
    return fixed_zip(buf.getvalue())


# ---------------------------------------------------------------------------------------------
# Office and PDF
# ---------------------------------------------------------------------------------------------

def _docx(spec: FileSpec, root: Path) -> bytes:
    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn
    from docx.shared import Inches

    w = _words(spec)
    doc = docx.Document()
    doc.add_heading(_title(spec), level=1)
    for _ in range(spec.extra.get("paragraphs", 2)):
        doc.add_paragraph(w.paragraph())
    for line in spec.extra.get("lines", ()):
        doc.add_paragraph(line)
    table = _table(spec)
    grid = doc.add_table(rows=len(table), cols=len(table[0]))
    for i, row in enumerate(table):
        for j, value in enumerate(row):
            grid.cell(i, j).text = f"{value:,}" if isinstance(value, int) else str(value)
    for ref in _refs(spec, "link"):
        # python-docx has no hyperlink call: an external relationship on the document part plus a
        # w:hyperlink element pointing at it, as Word writes it
        p = doc.add_paragraph("See also: ")
        r_id = p.part.relate_to(ref_text(spec.path, ref), RT.HYPERLINK, is_external=True)
        link = OxmlElement("w:hyperlink")
        link.set(qn("r:id"), r_id)
        run = OxmlElement("w:r")
        text = OxmlElement("w:t")
        text.text = _link_label(ref.dst)
        run.append(text)
        link.append(run)
        p._p.append(link)
    for ref in _refs(spec, "image"):
        # the picture's cNvPr name keeps the embedded file's name; the bytes are the file's bytes
        doc.add_picture(str(root / ref.dst), width=Inches(4))
    return _save_ooxml(doc, _title(spec))


def _pptx(spec: FileSpec, root: Path) -> bytes:
    import pptx
    from pptx.enum.shapes import PROG_ID
    from pptx.util import Inches

    w = _words(spec)
    prs = pptx.Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[0])
    slide.shapes.title.text = _title(spec)
    slide.placeholders[1].text = w.topic().capitalize()
    body = prs.slides.add_slide(prs.slide_layouts[1])
    body.shapes.title.text = "Highlights"
    frame = body.placeholders[1].text_frame
    frame.text = w.sentence()
    for _ in range(2):
        frame.add_paragraph().text = w.sentence()
    for ref in _refs(spec, "link"):
        run = frame.add_paragraph().add_run()
        run.text = f"Source: {_link_label(ref.dst)}"
        run.hyperlink.address = ref_text(spec.path, ref)
    table = _table(spec)
    data = prs.slides.add_slide(prs.slide_layouts[5])
    data.shapes.title.text = "Figures"
    shape = data.shapes.add_table(len(table), len(table[0]), Inches(0.5), Inches(1.5), Inches(9), Inches(4))
    for i, row in enumerate(table):
        for j, value in enumerate(row):
            shape.table.cell(i, j).text = f"{value:,}" if isinstance(value, int) else str(value)
    for ref in _refs(spec, "image"):
        pic = prs.slides.add_slide(prs.slide_layouts[5])
        pic.shapes.title.text = _link_label(ref.dst).capitalize()
        pic.shapes.add_picture(str(root / ref.dst), Inches(1), Inches(1.5), width=Inches(6))
    for ref in _refs(spec, "embedded_object"):
        ole = prs.slides.add_slide(prs.slide_layouts[5])
        ole.shapes.title.text = "Attached workbook"
        frame_shape = ole.shapes.add_ole_object(str(root / ref.dst), PROG_ID.XLSX, Inches(1), Inches(1.5))
        frame_shape.name = posixpath.basename(ref.dst)
    return _save_ooxml(prs, _title(spec))


def _xlsx(spec: FileSpec, root: Path) -> bytes:
    import openpyxl
    from openpyxl.packaging.relationship import Relationship
    from openpyxl.workbook.external_link.external import ExternalBook, ExternalLink, ExternalSheetNames
    from openpyxl.writer.excel import ExcelWriter

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Summary"
    table = _table(spec)
    for row in table:
        ws.append(row)
    last = len(table)
    total_row = last + 1
    ws.cell(total_row, 1, "Total")
    for j in range(2, len(table[0]) + 1):
        col = openpyxl.utils.get_column_letter(j)
        ws.cell(total_row, j, f"=SUM({col}2:{col}{last})")
    row = total_row + 2
    for line in spec.extra.get("lines", ()):
        ws.cell(row, 1, line)
        row += 1
    for ref in _refs(spec, "formula"):
        # a formula naming another workbook, as typed: '<folder>/[book.xlsx]Sheet'!B2
        text = ref_text(spec.path, ref)
        folder, name = posixpath.split(text)
        book = f"{folder}/[{name}]" if folder else f"[{name}]"
        ws.cell(row, 1, f"From {name}")
        ws.cell(row, 2, f"='{book}Summary'!B2")
        row += 1
    for ref in _refs(spec, "link"):
        cell = ws.cell(row, 1, f"Open {_link_label(ref.dst)}")
        cell.hyperlink = ref_text(spec.path, ref)
        row += 1
    for k, ref in enumerate(_refs(spec, "external_link"), 1):
        # a real external-link part (xl/externalLinks/externalLinkN.xml) whose relationship targets the
        # other workbook, and a formula using it by index as Excel stores it: [N]Summary!B2
        link = ExternalLink(externalBook=ExternalBook(sheetNames=ExternalSheetNames(["Summary"]), id="rId1"))
        link.file_link = Relationship(
            type="externalLinkPath", Target=ref_text(spec.path, ref), TargetMode="External", Id="rId1")
        wb._external_links.append(link)
        ws.cell(row, 1, f"Linked {_link_label(ref.dst)}")
        ws.cell(row, 2, f"=[{k}]Summary!B2")
        row += 1
    wb.properties.creator = AUTHOR
    wb.properties.lastModifiedBy = AUTHOR
    wb.properties.title = _title(spec)
    wb.properties.created = FIXED_DATETIME
    wb.properties.modified = FIXED_DATETIME
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        # ExcelWriter directly: save_workbook would stamp the current time as the modified date
        ExcelWriter(wb, archive).save()
    return fixed_zip(buf.getvalue())


def _pdf(spec: FileSpec, root: Path) -> bytes:
    from fpdf import FPDF

    w = _words(spec)
    pdf = FPDF()
    pdf.set_creation_date(FIXED_DATETIME.replace(tzinfo=timezone.utc))
    pdf.set_author(AUTHOR)
    pdf.set_title(_title(spec))
    pdf.add_page()
    pdf.set_font("helvetica", "B", 14)
    pdf.multi_cell(0, 8, _title(spec), new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("helvetica", size=10)
    for _ in range(spec.extra.get("paragraphs", 2)):
        pdf.multi_cell(0, 5, w.paragraph(), new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
    for line in spec.extra.get("lines", ()):
        pdf.multi_cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
    for row in _table(spec):
        pdf.cell(0, 5, "   ".join(f"{v:,}" if isinstance(v, int) else str(v) for v in row),
                 new_x="LMARGIN", new_y="NEXT")
    for ref in _refs(spec, "link"):
        # a link annotation (/URI) over the text
        pdf.set_text_color(0, 0, 200)
        pdf.cell(0, 6, f"Related: {_link_label(ref.dst)}", link=ref_text(spec.path, ref),
                 new_x="LMARGIN", new_y="NEXT")
        pdf.set_text_color(0, 0, 0)
    return bytes(pdf.output())


# ---------------------------------------------------------------------------------------------
# Notebooks, code, markup
# ---------------------------------------------------------------------------------------------

_READERS = {"csv": "pd.read_csv", "tsv": "pd.read_table", "xlsx": "pd.read_excel", "json": "json.load",
            "parquet": "pd.read_parquet", "feather": "pd.read_feather", "npy": "np.load", "npz": "np.load",
            "yaml": "yaml.safe_load", "yml": "yaml.safe_load", "jsonl": "pd.read_json", "txt": "open",
            "sqlite": "sqlite3.connect", "db": "sqlite3.connect"}


def _py_module(src: str, dst: str) -> str:
    rel = posixpath.relpath(dst, posixpath.dirname(src) or ".")
    return rel[:-3].replace("/", ".")


def _py_import_lines(spec: FileSpec) -> list[str]:
    lines = []
    for ref in _refs(spec, "import"):
        module = _py_module(spec.path, ref.dst)
        if "." in module:
            package, name = module.rsplit(".", 1)
            lines.append(f"from {package} import {name}")
        elif spec.extra.get("package"):
            lines.append(f"from .{module} import *  # noqa: F403")
        else:
            lines.append(f"import {module}")
    return lines


def _py_path_lines(spec: FileSpec, var: str = "data") -> list[str]:
    lines = []
    for k, ref in enumerate(_refs(spec, "path_literal")):
        text = ref_text(spec.path, ref)
        ext = file_type(ref.dst)
        reader = _READERS.get(ext, "open")
        name = f"{var}_{k}"
        if spec.extra.get("writes") and k == 0:
            lines.append(f'summary.to_csv("{text}", index=False)' if ext == "csv" else
                         f'with open("{text}", "w", encoding="utf-8") as fh:\n    fh.write(str(summary))')
        elif reader == "json.load":
            lines.append(f'with open("{text}", encoding="utf-8") as fh:\n    {name} = json.load(fh)')
        elif reader == "yaml.safe_load":
            lines.append(f'with open("{text}", encoding="utf-8") as fh:\n    {name} = yaml.safe_load(fh)')
        elif reader == "open":
            lines.append(f'with open("{text}", encoding="utf-8") as fh:\n    {name} = fh.read()')
        else:
            lines.append(f'{name} = {reader}("{text}")')
    return lines


def _py(spec: FileSpec, root: Path) -> bytes:
    w = _words(spec)
    head = [f'"""{_title(spec)}: {w.sentence()}"""', "import json", "", "import numpy as np",
            "import pandas as pd", "import sqlite3", "import yaml", ""]
    imports = _py_import_lines(spec)
    body = ["", "", "def main():"]
    paths = _py_path_lines(spec)
    if spec.extra.get("writes"):
        body.append("    summary = pd.DataFrame({'total': [0]})")
    body += ["    " + line.replace("\n", "\n    ") for line in paths] or ["    pass"]
    table = _table(spec)
    funcs = []
    for row in table[1:4]:
        name = "".join(c if c.isalnum() else "_" for c in str(row[0]).lower())
        funcs += ["", "", f"def total_{name}(values):", f'    """{w.sentence()}"""',
                  f"    return sum(values) + {row[1]}"]
    tail = ["", "", 'if __name__ == "__main__":', "    main()", ""]
    return "\n".join(head + imports + funcs + body + tail).encode()


def _ipynb(spec: FileSpec, root: Path) -> bytes:
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    w = _words(spec)
    md = [f"# {_title(spec)}", "", w.paragraph()]
    md += [f"- [{_link_label(r.dst)}]({ref_text(spec.path, r)})" for r in _refs(spec, "link")]
    md += [f"![{_link_label(r.dst)}]({ref_text(spec.path, r)})" for r in _refs(spec, "image")]
    code = ["import json", "import numpy as np", "import pandas as pd", "import sqlite3", "import yaml"]
    code += _py_import_lines(spec)
    cells = [new_markdown_cell("\n".join(md), id="intro"), new_code_cell("\n".join(code), id="imports")]
    paths = _py_path_lines(spec, var="frame")
    if paths:
        cells.append(new_code_cell("\n".join(paths), id="load"))
    table = _table(spec)
    cells.append(new_code_cell(f"values = {[r[1] for r in table[1:]]}\nprint(sum(values))", id="totals"))
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    return nbformat.writes(nb).encode()


def _js_like(spec: FileSpec, root: Path) -> bytes:
    ext = file_type(spec.path)
    w = _words(spec)
    lines = [f"// {_title(spec)}: {w.sentence()}"]
    for k, ref in enumerate(_refs(spec, "import")):
        text = ref_text(spec.path, ref)
        if not text.startswith("."):
            text = "./" + text
        if ext in ("ts", "tsx"):
            text = text.rsplit(".", 1)[0] if file_type(ref.dst) in ("ts", "tsx") else text
        name = "".join(c for c in _link_label(ref.dst).title() if c.isalnum()) or f"Mod{k}"
        if ext == "js" and k % 2 == 1:
            lines.append(f"const {name} = require('{text}');")
        else:
            lines.append(f"import {name} from '{text}';")
    table = _table(spec)
    typed = ext in ("ts", "tsx")
    lines += ["", f"export const ROWS{': number[]' if typed else ''} = {[r[1] for r in table[1:]]};", "",
              f"export function total(rows{': number[]' if typed else ''}){': number' if typed else ''} {{",
              "  return rows.reduce((a, b) => a + b, 0);", "}", ""]
    if ext in ("jsx", "tsx"):
        lines += ["export default function Panel() {", f"  return <section><h2>{_title(spec)}</h2>"
                  f"<p>{{total(ROWS)}}</p></section>;", "}", ""]
    return "\n".join(lines).encode()


def _md(spec: FileSpec, root: Path) -> bytes:
    w = _words(spec)
    lines = [f"# {_title(spec)}", "", w.paragraph(), ""]
    lines += list(spec.extra.get("lines", ()))
    if spec.table:
        header, *rows = spec.table
        lines += ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(f"{v:,}" if isinstance(v, int) else str(v) for v in row) + " |" for row in rows]
        lines.append("")
    links = _refs(spec, "link")
    if links:
        lines += ["## Related files", ""] + [f"- [{_link_label(r.dst)}]({ref_text(spec.path, r)})" for r in links]
        lines.append("")
    for r in _refs(spec, "image"):
        lines += [f"![{_link_label(r.dst)}]({ref_text(spec.path, r)})", ""]
    lines += [w.paragraph(2), ""]
    return "\n".join(lines).encode()


def _rst(spec: FileSpec, root: Path) -> bytes:
    w = _words(spec)
    title = _title(spec)
    return f"{title}\n{'=' * len(title)}\n\n{w.paragraph()}\n\nNotes\n-----\n\n{w.paragraph(2)}\n".encode()


def _txt(spec: FileSpec, root: Path) -> bytes:
    w = _words(spec)
    lines = [_title(spec), "", w.paragraph(), ""] + list(spec.extra.get("lines", ()))
    if spec.table:
        lines += ["  ".join(f"{v:>10}" for v in row) for row in spec.table]
    lines += ["", w.paragraph(2), ""]
    return "\n".join(lines).encode()


def _html(spec: FileSpec, root: Path) -> bytes:
    from html import escape

    w = _words(spec)
    head = [f"<title>{escape(_title(spec))}</title>", '<meta charset="utf-8">']
    for ref in _refs(spec, "include"):
        text = escape(ref_text(spec.path, ref))
        head.append(f'<link rel="stylesheet" href="{text}">' if file_type(ref.dst) == "css"
                    else f'<script src="{text}"></script>')
    body = [f"<h1>{escape(_title(spec))}</h1>", f"<p>{escape(w.paragraph())}</p>"]
    body += [f'<p><a href="{escape(ref_text(spec.path, r))}">{escape(_link_label(r.dst))}</a></p>'
             for r in _refs(spec, "link")]
    body += [f'<img src="{escape(ref_text(spec.path, r))}" alt="{escape(_link_label(r.dst))}">'
             for r in _refs(spec, "image")]
    rows = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row) + "</tr>" for row in _table(spec))
    body.append(f"<table>{rows}</table>")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n" + "\n".join(head) + "\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n").encode()


def _css(spec: FileSpec, root: Path) -> bytes:
    lines = [f'@import "{ref_text(spec.path, r)}";' for r in _refs(spec, "include")]
    r = random.Random(spec.seed)
    lines += ["", "body {", "  font-family: system-ui, sans-serif;", f"  color: #{r.randrange(0x1000000):06x};", "}"]
    for ref in _refs(spec, "image"):
        lines += [".banner {", f'  background-image: url("{ref_text(spec.path, ref)}");', "}"]
    lines += ["h1 { font-size: 1.6rem; }", "table { border-collapse: collapse; }", ""]
    return "\n".join(lines).encode()


def _svg(spec: FileSpec, root: Path) -> bytes:
    r = random.Random(spec.seed)
    ns = "http://www.w3.org/2000/svg"
    ET.register_namespace("", ns)
    ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    svg = ET.Element(f"{{{ns}}}svg", {"width": "320", "height": "200", "viewBox": "0 0 320 200"})
    ET.SubElement(svg, f"{{{ns}}}title").text = _title(spec)
    for k in range(r.randint(3, 7)):
        ET.SubElement(svg, f"{{{ns}}}rect", {"x": str(10 + 40 * k), "y": str(r.randint(20, 120)), "width": "30",
                                           "height": str(r.randint(20, 80)), "fill": f"#{r.randrange(0x1000000):06x}"})
    for ref in _refs(spec, "image"):
        ET.SubElement(svg, f"{{{ns}}}image", {"href": ref_text(spec.path, ref), "x": "200", "y": "10",
                                            "width": "100", "height": "60"})
    return ET.tostring(svg, encoding="utf-8", xml_declaration=True) + b"\n"


def _tex(spec: FileSpec, root: Path) -> bytes:
    w = _words(spec)
    standalone = spec.extra.get("main", False)
    lines = []
    if standalone:
        lines += [r"\documentclass{article}", r"\usepackage{graphicx}", f"\\title{{{_title(spec)}}}",
                  r"\begin{document}", r"\maketitle"]
    else:
        lines += [f"\\section{{{_title(spec)}}}"]
    lines.append(w.paragraph())
    for k, ref in enumerate(_refs(spec, "include")):
        text = ref_text(spec.path, ref)
        text = text[:-4] if text.endswith(".tex") else text
        lines.append(f"\\{'include' if k % 2 else 'input'}{{{text}}}")
    for ref in _refs(spec, "image"):
        lines += [r"\begin{figure}[t]", r"\centering", f"\\includegraphics[width=0.8\\linewidth]"
                  f"{{{ref_text(spec.path, ref)}}}", f"\\caption{{{_link_label(ref.dst).capitalize()}.}}",
                  r"\end{figure}"]
    for ref in _refs(spec, "bibliography"):
        text = ref_text(spec.path, ref)
        lines += [r"\bibliographystyle{plain}", f"\\bibliography{{{text[:-4] if text.endswith('.bib') else text}}}"]
    if standalone:
        lines.append(r"\end{document}")
    return ("\n".join(lines) + "\n").encode()


_SURNAMES = ("Abe", "Bianchi", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ivanova", "Jensen",
             "Kim", "Larsen", "Moreau", "Nakamura", "Okafor", "Petrov", "Quinn", "Rossi", "Sato", "Tanaka")
_VENUES = ("ACL", "CVPR", "ICLR", "ICML", "KDD", "NAACL", "NeurIPS", "SIGIR", "TACL", "WWW")


def _bib(spec: FileSpec, root: Path) -> bytes:
    # authors as "Surname, X." and venues as acronyms: no run of capitalised words that two
    # unrelated bibliographies would share (an extractor would read it as a shared entity)
    r = random.Random(spec.seed)
    w = _words(spec)
    out = []
    for k in range(r.randint(3, 6)):
        year = r.choice((2019, 2020, 2021, 2022, 2023, 2024))
        authors = " and ".join(f"{r.choice(_SURNAMES)}, {r.choice('ABCDEFGHJKLMNPRST')}."
                               for _ in range(r.randint(1, 3)))
        out.append(f"@inproceedings{{ref{k}{year},\n  title = {{{w.topic().capitalize()} revisited}},\n"
                   f"  author = {{{authors}}},\n  booktitle = {{{r.choice(_VENUES)}}},\n  year = {{{year}}}\n}}\n")
    return "\n".join(out).encode()


def _sql(spec: FileSpec, root: Path) -> bytes:
    lines = [f"-- {_title(spec)}"] + [f"\\i {ref_text(spec.path, r)}" for r in _refs(spec, "include")]
    table = _table(spec)
    name = "".join(c if c.isalnum() else "_" for c in posixpath.basename(spec.path).rsplit(".", 1)[0])
    cols = ", ".join(f"{c} {'TEXT' if j == 0 else 'INTEGER'}" for j, c in enumerate(table[0]))
    lines += [f"CREATE TABLE IF NOT EXISTS {name} ({cols});"]
    for row in table[1:]:
        values = ", ".join(f"'{v}'" if isinstance(v, str) else str(v) for v in row)
        lines.append(f"INSERT INTO {name} VALUES ({values});")
    lines.append("")
    return "\n".join(lines).encode()


def _sh(spec: FileSpec, root: Path) -> bytes:
    w = _words(spec)
    lines = ["#!/usr/bin/env bash", f"# {_title(spec)}: {w.sentence()}", "set -euo pipefail"]
    lines += [f"source {ref_text(spec.path, r)}" for r in _refs(spec, "include")]
    r = random.Random(spec.seed)
    port = 8000 + r.randint(1, 99)
    lines += ["", "log_info() { echo \"[info] $*\"; }", "check_health() {",
              f"  curl -fsS http://localhost:{port}/health > /dev/null", "}", 'log_info "starting"',
              "check_health", ""]
    return "\n".join(lines).encode()


_CODE_TEMPLATES = {
    "java": "// {title}\npublic class {cls} {{\n    public static int total(int[] rows) {{\n        int s = 0;\n"
            "        for (int r : rows) s += r;\n        return s + {n};\n    }}\n}}\n",
    "go": "// {title}\npackage main\n\nimport \"fmt\"\n\nfunc total(rows []int) int {{\n\ts := {n}\n"
          "\tfor _, r := range rows {{\n\t\ts += r\n\t}}\n\treturn s\n}}\n\nfunc main() {{\n\tfmt.Println(total([]int{{1, 2, 3}}))\n}}\n",
    "rs": "// {title}\nfn total(rows: &[i64]) -> i64 {{\n    rows.iter().sum::<i64>() + {n}\n}}\n\nfn main() {{\n"
          "    println!(\"{{}}\", total(&[1, 2, 3]));\n}}\n",
    "c": "/* {title} */\n#include <stdio.h>\n\nint total(const int *rows, int n) {{\n    int s = {n};\n"
         "    for (int i = 0; i < n; i++) s += rows[i];\n    return s;\n}}\n",
    "h": "/* {title} */\n#ifndef {guard}\n#define {guard}\n\nint total(const int *rows, int n);\n\n#endif\n",
    "cpp": "// {title}\n#include <numeric>\n#include <vector>\n\nint total(const std::vector<int>& rows) {{\n"
           "    return std::accumulate(rows.begin(), rows.end(), {n});\n}}\n",
    "rb": "# {title}\ndef total(rows)\n  rows.sum + {n}\nend\n\nputs total([1, 2, 3])\n",
    "php": "<?php\n// {title}\nfunction total(array $rows): int {{\n    return array_sum($rows) + {n};\n}}\n",
    "lua": "-- {title}\nlocal function total(rows)\n  local s = {n}\n  for _, r in ipairs(rows) do s = s + r end\n"
           "  return s\nend\nprint(total({{1, 2, 3}}))\n",
    "pl": "# {title}\nuse strict;\nuse warnings;\nmy $s = {n};\n$s += $_ for (1, 2, 3);\nprint \"$s\\n\";\n",
    "r": "# {title}\ntotal <- function(rows) sum(rows) + {n}\nprint(total(c(1, 2, 3)))\n",
    "bat": "@echo off\nREM {title}\nset TOTAL={n}\necho %TOTAL%\n",
    "ps1": "# {title}\n$total = {n}\nWrite-Output \"Total: $total\"\n",
    "proto": "// {title}\nsyntax = \"proto3\";\n\npackage {pkg};\n\nmessage {cls} {{\n  string id = 1;\n"
             "  int64 total = 2;\n}}\n",
    "graphql": "# {title}\ntype {cls} {{\n  id: ID!\n  total: Int\n}}\n\ntype Query {{\n  {pkg}: [{cls}!]!\n}}\n",
    "Dockerfile": "# {title}\nFROM python:3.11-slim\nWORKDIR /app\nRUN pip install --no-cache-dir uvicorn\n"
                  "EXPOSE {port}\nCMD [\"uvicorn\", \"app:api\", \"--port\", \"{port}\"]\n",
    "Makefile": "# {title}\n.PHONY: test lint\n\ntest:\n\tpytest -q\n\nlint:\n\truff check .\n\n"
                "port:\n\t@echo {port}\n",
    "dot": "// {title}\ndigraph {pkg} {{\n  ingest -> clean;\n  clean -> report;\n  report -> review;\n}}\n",
    "mmd": "%% {title}\nflowchart LR\n  A[Request] --> B[Review]\n  B --> C[Decision]\n",
    "properties": "# {title}\napp.name={pkg}\napp.port={port}\napp.threads={n}\n",
    "env": "# {title}\nAPP_NAME={pkg}\nAPP_PORT={port}\nLOG_LEVEL=info\n",
}


def _code(spec: FileSpec, root: Path) -> bytes:
    r = random.Random(spec.seed)
    stem = posixpath.basename(spec.path).rsplit(".", 1)[0]
    ident = "".join(c if c.isalnum() else "_" for c in stem).strip("_") or "item"
    cls = "".join(part.capitalize() for part in ident.split("_")) or "Item"
    # a task's stored copy of a Makefile is data/<hex>_Makefile: its type comes with the spec
    text = _CODE_TEMPLATES[spec.extra.get("type", file_type(spec.path))].format(
        title=_title(spec), cls=cls, pkg=ident.lower(), guard=ident.upper() + "_H", n=r.randint(1, 99),
        port=8000 + r.randint(1, 99))
    return text.encode()


# ---------------------------------------------------------------------------------------------
# Data and configuration
# ---------------------------------------------------------------------------------------------

def _refs_mapping(spec: FileSpec) -> dict:
    return {f"{_link_label(r.dst).replace(' ', '_')}": ref_text(spec.path, r) for r in _refs(spec, "data_reference")}


def _records(spec: FileSpec) -> list[dict]:
    header, *rows = _table(spec)
    return [dict(zip(header, row)) for row in rows]


def _json(spec: FileSpec, root: Path) -> bytes:
    obj = {"title": _title(spec), **spec.extra.get("fields", {})}
    if _refs(spec, "data_reference"):
        obj["files"] = _refs_mapping(spec)
    obj["rows"] = _records(spec)
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode()


def _jsonl(spec: FileSpec, root: Path) -> bytes:
    return "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in _records(spec)).encode()


def _yaml(spec: FileSpec, root: Path) -> bytes:
    import yaml

    obj = {"name": _title(spec), **spec.extra.get("fields", {})}
    if _refs(spec, "data_reference"):
        obj["inputs"] = _refs_mapping(spec)
    obj["items"] = _records(spec)
    return yaml.safe_dump(obj, sort_keys=False, allow_unicode=True).encode()


def _toml(spec: FileSpec, root: Path) -> bytes:
    import tomli_w

    r = random.Random(spec.seed)
    obj = {"project": {"name": posixpath.basename(posixpath.dirname(spec.path)) or "workspace",
                       "version": f"0.{r.randint(1, 9)}.{r.randint(0, 20)}"}}
    if _refs(spec, "data_reference"):
        obj["paths"] = _refs_mapping(spec)
    obj["limits"] = {"workers": r.randint(1, 8), "timeout_s": r.randint(10, 120)}
    return tomli_w.dumps(obj).encode()


def _ini(spec: FileSpec, root: Path) -> bytes:
    r = random.Random(spec.seed)
    parser = configparser.ConfigParser()
    parser["general"] = {"name": _title(spec), "threshold": str(r.randint(1, 500))}
    if _refs(spec, "data_reference"):
        parser["paths"] = _refs_mapping(spec)
    buf = io.StringIO()
    parser.write(buf)
    return buf.getvalue().encode()


def _delimited(spec: FileSpec, root: Path) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="\t" if file_type(spec.path) == "tsv" else ",", lineterminator="\n")
    table = _table(spec)
    refs = _refs(spec, "data_reference")
    if refs:
        # a column of workspace paths (attachments, source files), one per row from the top
        writer.writerow(list(table[0]) + ["attachment"])
        texts = [ref_text(spec.path, ref) for ref in refs]
        for k in range(max(len(table) - 1, len(texts))):
            row = list(table[1 + k]) if k < len(table) - 1 else [""] * len(table[0])
            writer.writerow(row + [texts[k] if k < len(texts) else ""])
    else:
        writer.writerows(table)
    return buf.getvalue().encode()


def _xml(spec: FileSpec, root: Path) -> bytes:
    rootel = ET.Element("records", {"title": _title(spec)})
    for rec in _records(spec):
        item = ET.SubElement(rootel, "record")
        for k, v in rec.items():
            ET.SubElement(item, "".join(c if c.isalnum() else "_" for c in str(k))).text = str(v)
    ET.indent(rootel)
    return ET.tostring(rootel, encoding="utf-8", xml_declaration=True) + b"\n"


def _sqlite(spec: FileSpec, root: Path) -> bytes:
    import os
    import tempfile

    table = _table(spec)
    fd, tmp = tempfile.mkstemp(suffix=".sqlite")
    os.close(fd)
    try:
        con = sqlite3.connect(tmp)
        cols = ", ".join(f'"{c}" {"TEXT" if j == 0 else "INTEGER"}' for j, c in enumerate(table[0]))
        con.execute(f"CREATE TABLE records ({cols})")
        con.executemany(f"INSERT INTO records VALUES ({', '.join('?' * len(table[0]))})", table[1:])
        con.commit()
        con.close()
        return Path(tmp).read_bytes()
    finally:
        os.unlink(tmp)


def _arrow(spec: FileSpec, root: Path) -> bytes:
    import pyarrow as pa

    header, *rows = _table(spec)
    tbl = pa.table({str(h): [row[j] for row in rows] for j, h in enumerate(header)})
    buf = io.BytesIO()
    if file_type(spec.path) == "parquet":
        import pyarrow.parquet as pq
        pq.write_table(tbl, buf)
    else:
        import pyarrow.feather as feather
        feather.write_feather(tbl, buf, compression="uncompressed")
    return buf.getvalue()


def _numpy(spec: FileSpec, root: Path) -> bytes:
    import numpy as np

    rows = [r[1:] for r in _table(spec)[1:]]
    arr = np.asarray(rows, dtype=np.int64)
    if file_type(spec.path) == "npy":
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        return buf.getvalue()
    # an .npz is a zip of .npy members; numpy's savez stamps the current time, so the members are
    # written with numpy's format writer into entries with a fixed time
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, value in (("values", arr), ("totals", arr.sum(axis=0))):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asarray(value), allow_pickle=False)
            z.writestr(zipfile.ZipInfo(f"{name}.npy", date_time=FIXED_ZIP_TIME), member.getvalue())
    return out.getvalue()


# ---------------------------------------------------------------------------------------------
# Images, audio, archives, mail, logs and other text formats
# ---------------------------------------------------------------------------------------------

_PIL_FORMATS = {"png": "PNG", "jpg": "JPEG", "gif": "GIF", "bmp": "BMP", "tiff": "TIFF", "webp": "WEBP",
                "ico": "ICO"}


def _image(spec: FileSpec, root: Path) -> bytes:
    """A bar chart of the spec's table (or a photo-like gradient for ``extra['photo']``), drawn with
    Pillow; no metadata chunks, so the bytes depend only on the pixels."""
    from PIL import Image, ImageDraw

    ext = file_type(spec.path)
    r = random.Random(spec.seed)
    size = (64, 64) if ext == "ico" else (480, 300)
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    if spec.extra.get("photo"):
        base = [r.randint(40, 200) for _ in range(3)]
        for y in range(0, size[1], 4):
            shade = tuple(min(255, c + y // 3) for c in base)
            draw.rectangle([0, y, size[0], y + 3], fill=shade)
        for _ in range(6):
            x, y = r.randint(0, size[0]), r.randint(0, size[1])
            draw.ellipse([x, y, x + r.randint(10, 60), y + r.randint(10, 60)],
                         fill=tuple(r.randint(0, 255) for _ in range(3)))
    else:
        values = [row[1] for row in _table(spec)[1:]]
        top = max(values) or 1
        width = (size[0] - 20) / max(1, len(values))
        color = tuple(r.randint(20, 200) for _ in range(3))
        draw.line([10, size[1] - 10, size[0] - 10, size[1] - 10], fill="black")
        for k, v in enumerate(values):
            h = (size[1] - 30) * v / top
            draw.rectangle([10 + k * width + 2, size[1] - 10 - h, 10 + (k + 1) * width - 2, size[1] - 10],
                           fill=color)
        if ext != "ico":
            draw.text((12, 4), _title(spec)[:60], fill="black")
    buf = io.BytesIO()
    fmt = _PIL_FORMATS[ext]
    options = {"quality": 85} if fmt in ("JPEG", "WEBP") else {}
    if fmt == "GIF":
        img = img.convert("P", palette=Image.Palette.ADAPTIVE, colors=64)
    img.save(buf, fmt, **options)
    return buf.getvalue()


def _wav(spec: FileSpec, root: Path) -> bytes:
    r = random.Random(spec.seed)
    rate, freq = 8000, r.choice((220, 330, 440, 550))
    frames = b"".join(struct.pack("<h", int(12000 * math.sin(2 * math.pi * freq * i / rate))) for i in range(rate // 2))
    buf = io.BytesIO()
    with wave.open(buf, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(frames)
    return buf.getvalue()


def _zip(spec: FileSpec, root: Path) -> bytes:
    w = _words(spec)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        members = spec.extra.get("members") or [f"part_{k + 1}.txt" for k in range(3)]
        for name in members:
            z.writestr(zipfile.ZipInfo(name, date_time=FIXED_ZIP_TIME), (w.paragraph() + "\n").encode())
    return out.getvalue()


def _tar(spec: FileSpec, root: Path) -> bytes:
    w = _words(spec)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for k in range(3):
            data = (w.paragraph() + "\n").encode()
            info = tarfile.TarInfo(f"backup/notes_{'abc'[k]}.txt")
            info.size, info.mtime, info.mode = len(data), int(FIXED_DATETIME.timestamp()), 0o644
            info.uname = info.gname = "user"
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _gz(spec: FileSpec, root: Path) -> bytes:
    inner = spec.path[:-3] if spec.path.endswith(".gz") else spec.path
    body = _delimited(FileSpec(inner, "csv", spec.persona, spec.seed, table=spec.table), root)
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as gz:
        gz.write(body)
    return out.getvalue()


def _eml(spec: FileSpec, root: Path) -> bytes:
    w = _words(spec)
    r = random.Random(spec.seed)
    msg = EmailMessage()
    msg["From"] = spec.extra.get("sender", "colleague@example.com")
    msg["To"] = spec.extra.get("to", "me@example.com")
    msg["Subject"] = _title(spec)
    day = datetime(2024, r.randint(1, 12), r.randint(1, 28), r.randint(8, 18), r.randint(0, 59), tzinfo=timezone.utc)
    msg["Date"] = format_datetime(day)
    msg["Message-ID"] = f"<{spec.seed:x}@mail.example.com>"
    lines = ["Hello,", "", w.paragraph()] + list(spec.extra.get("lines", ())) + ["", "Best regards"]
    msg.set_content("\n".join(lines))
    return bytes(msg)


def _log(spec: FileSpec, root: Path) -> bytes:
    r = random.Random(spec.seed)
    levels = ("INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG")
    events = ("request served", "cache miss", "job finished", "retrying upstream", "slow query", "health ok",
              "connection reset", "batch committed")
    lines = []
    for k in range(r.randint(15, 40)):
        lines.append(f"2024-06-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:"
                     f"{r.randint(0, 59):02d}Z {r.choice(levels):5} [{r.choice(('api', 'worker', 'db'))}] "
                     f"{r.choice(events)} id={r.randint(1000, 9999)} ms={r.randint(1, 900)}")
    return ("\n".join(lines) + "\n").encode()


def _ics(spec: FileSpec, root: Path) -> bytes:
    r = random.Random(spec.seed)
    day = f"2024{r.randint(1, 12):02d}{r.randint(1, 28):02d}"
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//benchwright//synth//EN", "BEGIN:VEVENT",
             f"UID:{spec.seed:x}@example.com", "DTSTAMP:20240628T093000Z", f"DTSTART:{day}T100000Z",
             f"DTEND:{day}T110000Z", f"SUMMARY:{_title(spec)}", "END:VEVENT", "END:VCALENDAR"]
    return ("\r\n".join(lines) + "\r\n").encode()


def _vcf(spec: FileSpec, root: Path) -> bytes:
    r = random.Random(spec.seed)
    # the contact's name comes from the plan (a name no other file of the workspace uses)
    first, last = spec.extra.get("contact", "Ana Moss").split(" ", 1)
    lines = ["BEGIN:VCARD", "VERSION:3.0", f"N:{last};{first};;;", f"FN:{first} {last}",
             f"TEL;TYPE=work:+1-555-{r.randint(1000, 9999)}", f"EMAIL:{first.lower()}@example.com", "END:VCARD"]
    return ("\r\n".join(lines) + "\r\n").encode()


def _srt(spec: FileSpec, root: Path) -> bytes:
    w = _words(spec)
    blocks = []
    for k in range(4):
        blocks.append(f"{k + 1}\n00:00:{k * 5:02d},000 --> 00:00:{k * 5 + 4:02d},500\n{w.sentence()}\n")
    return "\n".join(blocks).encode()


def _patch(spec: FileSpec, root: Path) -> bytes:
    r = random.Random(spec.seed)
    old = [f"timeout = {r.randint(5, 30)}\n", "retries = 3\n", "log_level = info\n"]
    new = [old[0].replace("timeout", "timeout_s"), f"retries = {r.randint(4, 9)}\n", old[2]]
    target = spec.extra.get("target", "settings.cfg")
    return "".join(difflib.unified_diff(old, new, f"a/{target}", f"b/{target}")).encode()


WRITERS = {
    "docx": _docx, "pptx": _pptx, "xlsx": _xlsx, "pdf": _pdf, "ipynb": _ipynb, "py": _py, "js": _js_like,
    "md": _md, "rst": _rst, "txt": _txt, "html": _html, "css": _css, "svg": _svg, "tex": _tex, "bib": _bib,
    "sql": _sql, "sh": _sh, "code": _code, "json": _json, "jsonl": _jsonl, "yaml": _yaml, "toml": _toml,
    "ini": _ini, "csv": _delimited, "xml": _xml, "sqlite": _sqlite, "arrow": _arrow, "numpy": _numpy,
    "image": _image, "wav": _wav, "zip": _zip, "tar": _tar, "gz": _gz, "eml": _eml, "log": _log, "ics": _ics,
    "vcf": _vcf, "srt": _srt, "patch": _patch,
}

# file type -> writer key
FORMAT_OF_TYPE = {
    **{t: t for t in ("docx", "pptx", "xlsx", "pdf", "ipynb", "py", "md", "rst", "txt", "html", "css", "svg",
                      "tex", "bib", "sql", "sh", "json", "jsonl", "toml", "xml", "zip", "tar", "gz", "eml",
                      "log", "ics", "vcf", "srt", "patch", "wav")},
    "js": "js", "ts": "js", "jsx": "js", "tsx": "js", "yaml": "yaml", "yml": "yaml", "ini": "ini", "cfg": "ini",
    "csv": "csv", "tsv": "csv", "sqlite": "sqlite", "db": "sqlite", "parquet": "arrow", "feather": "arrow",
    "npy": "numpy", "npz": "numpy", **{t: "image" for t in _PIL_FORMATS},
    **{t: "code" for t in ("java", "go", "rs", "c", "h", "cpp", "rb", "php", "lua", "pl", "r", "bat", "ps1",
                           "proto", "graphql", "Dockerfile", "Makefile", "dot", "mmd", "properties", "env")},
}

# which explicit edge types each writer can carry
CARRIES = {
    "docx": ("link", "image"), "pptx": ("link", "image", "embedded_object"),
    "xlsx": ("link", "formula", "external_link"), "pdf": ("link",),
    "ipynb": ("import", "path_literal", "link", "image"),
    "py": ("import", "path_literal"), "js": ("import",), "md": ("link", "image"),
    "html": ("link", "image", "include"), "css": ("include", "image"), "svg": ("image",),
    "tex": ("include", "image", "bibliography"), "sql": ("include",), "sh": ("include",),
    "json": ("data_reference",), "yaml": ("data_reference",), "toml": ("data_reference",),
    "ini": ("data_reference",), "csv": ("data_reference",),
}


def render(spec: FileSpec, root: Path) -> bytes:
    """The bytes of ``spec`` (``root`` is its workspace, where embedded files are read from)."""
    allowed = CARRIES.get(spec.fmt, ())
    for ref in spec.refs:
        if ref.edge_type not in allowed:
            raise ValueError(f"{spec.path}: a {spec.fmt} file cannot carry a {ref.edge_type} reference")
    return WRITERS[spec.fmt](spec, root)


def write_file(spec: FileSpec, root: Path, target: Path | None = None) -> int:
    """Write ``spec`` under ``root`` (or at ``target``); returns the bytes written."""
    data = render(spec, root)
    path = target or root / spec.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return len(data)
