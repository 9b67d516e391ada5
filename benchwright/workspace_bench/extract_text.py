"""A file's text as a reader sees it: decoded plain text, or the text of a document.

.docx paragraphs and table rows (cells tab-separated), .xlsx cell values row by row (a formula cell
shows its cached value, or ``=formula`` when it has none), .pptx slide text in slide order (all
three read with lxml through the hardened OOXML parser, after the archive check), PDF page text
(pypdf), notebook cells (nbformat), HTML text without scripts and styles (lxml), a zip's member
names. Documents are read until ``Limits.max_extracted_chars``; plain text is decoded whole.
"""
from __future__ import annotations

import codecs
import io
import logging
import zipfile

from lxml import etree

from benchwright.errors import RecordError
from benchwright.formats.ooxml.package import rels_name, resolve_target
from benchwright.utf8 import encodable_str
from benchwright.workspace_bench.extract_archive import DEFAULT_LIMITS, Limits, check_archive, is_zip, member_xml

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_STRICT_REL_NS = "http://purl.oclc.org/ooxml/officeDocument/relationships"
ARCHIVE_TYPES = frozenset({"zip", "jar", "apk", "xpi", "nupkg", "epub", "odt", "ods", "odp"})


def decode_text(data: bytes) -> tuple[str, str | None]:
    """(text, encoding): a BOM decides, else UTF-8, else charset-normalizer's best guess; (\"\", None)
    when no encoding fits."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data.decode(encoding, errors="replace"), encoding
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes
    best = from_bytes(data[:1 << 20]).best()
    if best is None:
        return "", None
    return data.decode(best.encoding, errors="replace"), best.encoding


def extract_text(data: bytes, file_type: str, is_text: bool, path: str,
                 limits: Limits = DEFAULT_LIMITS) -> tuple[str, str | None, str | None]:
    """(text, encoding, error): ``encoding`` is None for a binary file; ``error`` says why a document's
    text could not be read (its text is then empty)."""
    try:
        if file_type in _BINARY_DOCUMENTS:
            return _BINARY_DOCUMENTS[file_type](data, path, limits)[:limits.max_extracted_chars], None, None
        if file_type in ARCHIVE_TYPES and is_zip(data):
            with check_archive(data, path, limits) as zf:
                return "\n".join(zf.namelist()), None, None
        if not is_text and file_type != "empty":
            return "", None, None
        text, encoding = decode_text(data)
        if file_type in _TEXT_DOCUMENTS and encoding is not None:
            return _TEXT_DOCUMENTS[file_type](text, path)[:limits.max_extracted_chars], encoding, None
        return text, encoding, None
    except RecordError as exc:
        return "", None, f"{file_type}: {exc.reason}"
    except Exception as exc:  # a parser's own error on a broken file: no text, the reason recorded
        return "", None, f"{file_type}: {type(exc).__name__}: {exc}"


# --------------------------------------------------------------------------- OOXML

def _local(el) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def _rel_targets(zf: zipfile.ZipFile, part: str, path: str, limits: Limits) -> dict[str, str]:
    """rId -> resolved part name, for a part's relationships."""
    name = rels_name(part)
    if name not in zf.namelist():
        return {}
    return {rel.get("Id"): resolve_target(part, rel.get("Target", ""))
            for rel in member_xml(zf, name, path, limits) if rel.get("TargetMode") != "External"}


def main_part(zf: zipfile.ZipFile, path: str, limits: Limits) -> str:
    """The package's main part (the officeDocument relationship of _rels/.rels)."""
    for rel in member_xml(zf, "_rels/.rels", path, limits):
        if rel.get("Type", "").endswith("/officeDocument"):
            return resolve_target("", rel.get("Target", ""))
    raise RecordError(path, "no officeDocument relationship in _rels/.rels")


def _r_id(el) -> str | None:
    return el.get(f"{{{_REL_NS}}}id") or el.get(f"{{{_STRICT_REL_NS}}}id")


class _Budget:
    """Collects lines until ``limit`` characters."""

    def __init__(self, limit: int):
        self.lines: list[str] = []
        self.left = limit

    def add(self, line: str) -> bool:
        self.lines.append(line)
        self.left -= len(line) + 1
        return self.left > 0

    def text(self) -> str:
        return "\n".join(self.lines)


def _run_text(p) -> str:
    out = []
    for el in p.iter():
        tag = _local(el)
        if tag == "t" and el.text:
            out.append(el.text)
        elif tag == "tab":
            out.append("\t")
        elif tag in ("br", "cr"):
            out.append("\n")
    return "".join(out)


def _word_blocks(el):
    for child in el:
        tag = _local(child)
        if tag == "p":
            yield _run_text(child)
        elif tag == "tbl":
            for tr in child:
                if _local(tr) == "tr":
                    yield "\t".join(" ".join(_word_blocks(tc)) for tc in tr if _local(tc) == "tc")
        elif tag in ("sdt", "sdtContent", "customXml", "smartTag", "ins", "moveTo"):
            yield from _word_blocks(child)


def docx_text(data: bytes, path: str, limits: Limits) -> str:
    with check_archive(data, path, limits) as zf:
        root = member_xml(zf, main_part(zf, path, limits), path, limits)
    body = next((el for el in root if _local(el) == "body"), None)
    budget = _Budget(limits.max_extracted_chars)
    for block in _word_blocks(body if body is not None else root):
        if not budget.add(block):
            break
    return budget.text()


def pptx_text(data: bytes, path: str, limits: Limits) -> str:
    budget = _Budget(limits.max_extracted_chars)
    with check_archive(data, path, limits) as zf:
        main = main_part(zf, path, limits)
        targets = _rel_targets(zf, main, path, limits)
        slides = [targets.get(_r_id(el)) for el in member_xml(zf, main, path, limits).iter()
                  if _local(el) == "sldId"]
        for slide in slides:
            if slide not in zf.namelist():
                continue
            for p in member_xml(zf, slide, path, limits).iter():
                if _local(p) == "p" and not budget.add(_run_text(p)):
                    return budget.text()
    return budget.text()


def _shared_strings(zf: zipfile.ZipFile, targets: dict[str, str], path: str, limits: Limits) -> list[str]:
    part = next((t for t in targets.values() if t.endswith("sharedStrings.xml")), None)
    if part is None or part not in zf.namelist():
        return []
    return ["".join(t.text or "" for t in si.iter() if _local(t) == "t")
            for si in member_xml(zf, part, path, limits) if _local(si) == "si"]


def _cell_text(c, strings: list[str]) -> str:
    kind = c.get("t")
    value = formula = None
    for child in c:
        tag = _local(child)
        if tag == "v":
            value = child.text or ""
        elif tag == "f":
            formula = child.text
        elif tag == "is":
            value = "".join(t.text or "" for t in child.iter() if _local(t) == "t")
    if kind == "s" and value is not None:
        index = int(value)
        value = strings[index] if 0 <= index < len(strings) else ""
    if not value and formula:
        return "=" + formula
    return value or ""


def xlsx_sheets(zf: zipfile.ZipFile, path: str, limits: Limits) -> list[tuple[str, str]]:
    """(sheet name, worksheet part) in workbook order."""
    main = main_part(zf, path, limits)
    targets = _rel_targets(zf, main, path, limits)
    return [(el.get("name", ""), targets[_r_id(el)]) for el in member_xml(zf, main, path, limits).iter()
            if _local(el) == "sheet" and targets.get(_r_id(el)) in zf.namelist()]


def xlsx_text(data: bytes, path: str, limits: Limits) -> str:
    budget = _Budget(limits.max_extracted_chars)
    with check_archive(data, path, limits) as zf:
        main = main_part(zf, path, limits)
        strings = _shared_strings(zf, _rel_targets(zf, main, path, limits), path, limits)
        for name, part in xlsx_sheets(zf, path, limits):
            budget.add(name)
            for row in member_xml(zf, part, path, limits).iter():
                if _local(row) != "row":
                    continue
                cells = [_cell_text(c, strings) for c in row if _local(c) == "c"]
                if any(cells) and not budget.add("\t".join(cells).rstrip("\t")):
                    return budget.text()
    return budget.text()


# --------------------------------------------------------------------------- PDF, notebooks, HTML

def pdf_text(data: bytes, path: str, limits: Limits) -> str:
    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed-but-readable files warn per object
    reader = PdfReader(io.BytesIO(data), strict=False)
    if reader.is_encrypted and not reader.decrypt(""):
        raise RecordError(path, "encrypted PDF")
    budget = _Budget(limits.max_extracted_chars)
    for page in reader.pages:
        if not budget.add(page.extract_text() or ""):
            break
    return budget.text()


def notebook_cells(text: str, path: str) -> list[tuple[str, str]]:
    """(cell type, source) of every cell, through nbformat (version 3 notebooks are converted). A
    cell's JSON may escape a lone surrogate (``"\\udcff"``): its source is made encodable
    (``benchwright.utf8``), so the cell still parses and its other references are kept."""
    import nbformat

    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises NotJSONError, KeyError, ValidationError, ...
        raise RecordError(path, f"not a readable notebook: {type(exc).__name__}: {exc}") from None
    return [(cell.get("cell_type", ""), encodable_str(cell.get("source", ""))) for cell in nb.get("cells", [])]


def notebook_text(text: str, path: str) -> str:
    return "\n\n".join(source for _, source in notebook_cells(text, path))


def html_root(text: str, path: str):
    import lxml.html

    try:
        return lxml.html.fromstring(text.encode("utf-8"), parser=lxml.html.HTMLParser(
            encoding="utf-8", no_network=True, remove_comments=True, remove_pis=True))
    except (etree.ParserError, etree.XMLSyntaxError, ValueError) as exc:
        raise RecordError(path, f"not readable HTML: {exc}") from None


def html_text(text: str, path: str) -> str:
    root = html_root(text, path)
    for el in [el for el in root.iter("script", "style", "template", "noscript")]:
        el.drop_tree()
    lines = (" ".join(line.split()) for line in root.text_content().splitlines())
    return "\n".join(line for line in lines if line)


_BINARY_DOCUMENTS = {"docx": docx_text, "xlsx": xlsx_text, "pptx": pptx_text, "pdf": pdf_text}
_TEXT_DOCUMENTS = {"ipynb": notebook_text, "html": html_text}

