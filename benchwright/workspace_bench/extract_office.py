"""References inside Office files and PDFs.

.docx / .pptx / .xlsx: every OPC relationship part (``*.rels``) read with lxml through the hardened
parser, after the archive check: hyperlinks (link), pictures (image), OLE objects and embedded
packages (embedded_object), linked templates and sub-documents (include), external workbook links
(``xl/externalLinks``: external_link). A picture or object stored inside the package is named by
the file name its drawing records (``cNvPr`` name or description: python-docx and python-pptx
write the inserted file's name there) and carries the sha256 of its bytes, so it can also be
matched to the identical workspace file. .xlsx formulas naming another workbook
(``'dir/[book.xlsx]Sheet'!A1``) are formula edges; ``[N]Sheet!A1`` uses external link N, which is
already an external_link edge. ``HYPERLINK("file", ...)`` is a link.

PDF (pypdf): link annotations (``/URI``, ``/Launch``, ``/GoToR`` actions), file attachment
annotations and the document's embedded files (embedded_object, with their sha256).
"""
from __future__ import annotations

import hashlib
import io
import logging
import posixpath
import re
import zipfile

from lxml import etree

from benchwright.errors import RecordError
from benchwright.formats.ooxml.package import resolve_target
from benchwright.workspace_bench.extract_archive import Limits, check_archive, member_xml, read_member
from benchwright.workspace_bench.extract_common import Unparsable, looks_like_path, ref, web_path
from benchwright.workspace_bench.extract_text import xlsx_sheets
from benchwright.workspace_bench.scan import content_types, extension_types

_EMBEDDED = {"oleObject": "embedded_object", "package": "embedded_object", "image": "image",
             "audio": "embedded_object", "video": "embedded_object", "media": "embedded_object"}
_INCLUDES = frozenset({"attachedTemplate", "subDocument", "frame"})
_EXTERNAL_WORKBOOK = frozenset({"externalLinkPath", "xlExternalLinkPath", "externalLinkLong"})
_DRAWING_HOLDERS = frozenset({"pic", "graphicFrame", "sp", "oleObj"})
_REL_ATTRS = ("embed", "link", "id")
_FORMULA_BOOK = re.compile(r"(?:'([^'\[\]]*)|(?<![\w\]])([A-Za-z0-9_.~:/\\-]*))\[([^\[\]]+)\]")
_HYPERLINK_FORMULA = re.compile(r'HYPERLINK\(\s*"([^"]+)"', re.I)


def _is_image_name(name: str) -> bool:
    file_type = extension_types().get(posixpath.splitext(name)[1][1:].lower(), "")
    return content_types().get(file_type, {}).get("group") == "image"


def _kind(names: list[str]) -> str:
    for folder, kind in (("word/", "docx"), ("ppt/", "pptx"), ("xl/", "xlsx")):
        if any(n.startswith(folder) for n in names):
            return kind
    return "ooxml"


def _source_part(rels_name: str) -> str:
    folder, name = posixpath.split(rels_name)
    return posixpath.join(posixpath.dirname(folder), name[:-len(".rels")])


def _file_hints(zf: zipfile.ZipFile, part: str, path: str, limits: Limits, extensions) -> dict[str, str]:
    """rId -> the file name a drawing in ``part`` records for the picture or object it shows."""
    if part not in zf.namelist() or not part.endswith(".xml"):
        return {}
    hints: dict[str, str] = {}
    for holder in member_xml(zf, part, path, limits).iter():
        if not isinstance(holder.tag, str) or etree.QName(holder).localname not in _DRAWING_HOLDERS:
            continue
        name = None
        for el in holder.iter():
            if isinstance(el.tag, str) and etree.QName(el).localname == "cNvPr":
                name = next((v for v in (el.get("descr"), el.get("name"))
                             if v and looks_like_path(v, extensions)), None)
                break
        if name is None:
            continue
        for el in holder.iter():
            for key, value in el.attrib.items():
                if etree.QName(key).localname in _REL_ATTRS and key.startswith("{"):
                    hints.setdefault(value, name)
    return hints


def ooxml_references(data: bytes, path: str, limits: Limits, extensions) -> list[dict]:
    with check_archive(data, path, limits) as zf:
        names = zf.namelist()
        kind = _kind(names)
        out = []
        for rels in sorted(n for n in names if n.endswith(".rels") and n != "_rels/.rels"):
            part = _source_part(rels)
            hints = None
            for rel in member_xml(zf, rels, path, limits):
                tail = rel.get("Type", "").rsplit("/", 1)[-1]
                target = rel.get("Target", "")
                external = rel.get("TargetMode") == "External"
                evidence = f"{rels}#{rel.get('Id')} {tail} -> {target}"
                rule = f"{kind}.{tail}"
                if external:
                    location = web_path(target)
                    if not location:
                        continue
                    if tail in _EXTERNAL_WORKBOOK:
                        edge_type = "external_link"
                    elif tail in _INCLUDES:
                        edge_type = "include"
                    else:
                        edge_type = _EMBEDDED.get(tail, "link")
                    out.append(ref(location, edge_type, rule, evidence, 1.0))
                elif tail in _EMBEDDED:
                    member = resolve_target(part, target)
                    if member not in names:
                        continue
                    if hints is None:
                        hints = _file_hints(zf, part, path, limits, extensions)
                    digest = hashlib.sha256(read_member(zf, member, path, limits)).hexdigest()
                    name = hints.get(rel.get("Id"))
                    if name and tail == "image" and not _is_image_name(name):
                        name = None  # the shape is an object's frame and this picture its icon
                    if name:
                        out.append(ref(name, _EMBEDDED[tail], rule, evidence, 0.9, sha256=digest))
                    else:
                        # no recorded file name: only identical bytes in the workspace can name it
                        out.append(ref(member, _EMBEDDED[tail], rule, evidence, 0.8, sha256=digest,
                                       variants=[], bare=False, speculative=True))
        if kind == "xlsx":
            out += _formula_references(zf, path, limits, extensions)
    return out


def _formula_references(zf: zipfile.ZipFile, path: str, limits: Limits, extensions) -> list[dict]:
    out = []
    for sheet, part in xlsx_sheets(zf, path, limits):
        for f in member_xml(zf, part, path, limits).iter("{*}f"):
            formula = f.text or ""
            if "[" not in formula and "HYPERLINK" not in formula.upper():
                continue
            cell = f.getparent().get("r", "?") if f.getparent() is not None else "?"
            evidence = f"{sheet}!{cell} ={formula}"
            for m in _FORMULA_BOOK.finditer(formula):
                folder, book = (m.group(1) if m.group(1) is not None else m.group(2) or ""), m.group(3)
                if book.isdigit() or not looks_like_path(book, extensions):
                    continue  # [N] is external link N (an external_link edge); Table[Column] is no file
                location = web_path(posixpath.join(folder.replace("\\", "/"), book) if folder else book)
                if location:
                    out.append(ref(location, "formula", "xlsx.formula", evidence, 1.0))
            for m in _HYPERLINK_FORMULA.finditer(formula):
                location = web_path(m.group(1))
                if location:
                    out.append(ref(location, "link", "xlsx.hyperlink_formula", evidence, 1.0))
    return out


# --------------------------------------------------------------------------- PDF

def _text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value) if value is not None else ""


def _file_spec(spec) -> str:
    """A PDF file specification: a string, or a dictionary with /UF, /F or a platform entry."""
    spec = spec.get_object() if hasattr(spec, "get_object") else spec
    if isinstance(spec, dict):
        for key in ("/UF", "/F", "/Unix", "/DOS", "/Mac"):
            if key in spec:
                return _text(spec[key].get_object() if hasattr(spec[key], "get_object") else spec[key])
        return ""
    return _text(spec)


def pdf_references(data: bytes, path: str) -> list[dict]:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unparsable(path, "encrypted PDF")
        out = []
        for number, page in enumerate(reader.pages, 1):
            annotations = page.get("/Annots")
            annotations = annotations.get_object() if annotations is not None else []
            for annotation in annotations or []:
                out += _annotation_references(annotation.get_object(), number)
        for name, contents in sorted((reader.attachments or {}).items()):
            for content in contents:
                out.append(ref(name, "embedded_object", "pdf.embedded_file", f"embedded file {name}", 0.9,
                               sha256=hashlib.sha256(content).hexdigest()))
        return out
    except RecordError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError, RecursionError) as exc:
        raise Unparsable(path, f"pdf does not parse: {type(exc).__name__}: {exc}") from None


def _annotation_references(annotation, page: int) -> list[dict]:
    subtype = annotation.get("/Subtype")
    if subtype == "/Link":
        action = annotation.get("/A")
        action = action.get_object() if action is not None else {}
        kind = action.get("/S")
        if kind == "/URI":
            target = _text(action.get("/URI"))
        elif kind in ("/Launch", "/GoToR"):
            target = _file_spec(action.get("/F") or action.get("/Win") or "")
        else:
            return []
        location = web_path(target)
        if not location:
            return []
        return [ref(location, "link", f"pdf.link{kind.lower().replace('/', '_')}",
                    f"page {page} link {kind} {target}", 1.0)]
    if subtype == "/FileAttachment" and "/FS" in annotation:
        spec = annotation["/FS"].get_object()
        name = _file_spec(spec)
        digest = None
        embedded = spec.get("/EF") if isinstance(spec, dict) else None
        if embedded is not None:
            stream = embedded.get_object().get("/F")
            if stream is not None:
                digest = hashlib.sha256(stream.get_object().get_data()).hexdigest()
        if name:
            return [ref(name, "embedded_object", "pdf.file_attachment", f"page {page} file attachment {name}", 0.9,
                        **({"sha256": digest} if digest else {}))]
    return []
