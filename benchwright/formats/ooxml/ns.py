"""Namespaces, qualified names and the small constants every OOXML module shares."""
from __future__ import annotations

NS = {
    "w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "wp": "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing",
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "pic": "http://schemas.openxmlformats.org/drawingml/2006/picture",
    "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
    "w14": "http://schemas.microsoft.com/office/word/2010/wordml",
    "w15": "http://schemas.microsoft.com/office/word/2012/wordml",
    "wps": "http://schemas.microsoft.com/office/word/2010/wordprocessingShape",
    "v": "urn:schemas-microsoft-com:vml",
    "o": "urn:schemas-microsoft-com:office:office",
    "m": "http://schemas.openxmlformats.org/officeDocument/2006/math",
    "ct": "http://schemas.openxmlformats.org/package/2006/content-types",
    "pr": "http://schemas.openxmlformats.org/package/2006/relationships",
    "cp": "http://schemas.openxmlformats.org/package/2006/metadata/core-properties",
    "dc": "http://purl.org/dc/elements/1.1/",
    "dcterms": "http://purl.org/dc/terms/",
    "xsi": "http://www.w3.org/2001/XMLSchema-instance",
    "op": "http://schemas.openxmlformats.org/officeDocument/2006/custom-properties",
    "vt": "http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes",
    "xml": "http://www.w3.org/XML/1998/namespace",
}
W = NS["w"]
# The namespace declarations of a WordprocessingML fragment parsed on its own (w14 ignorable, as Word writes it).
W_NS_DECL = ('xmlns:w="%s" xmlns:r="%s" xmlns:mc="%s" xmlns:w14="%s" mc:Ignorable="w14"'
             % (NS["w"], NS["r"], NS["mc"], NS["w14"]))
R = NS["r"]
# ISO/IEC 29500 Strict conformance: every namespace and relationship type lives under this prefix
# (e.g. http://purl.oclc.org/ooxml/wordprocessingml/main) instead of schemas.openxmlformats.org.
STRICT_PREFIX = "http://purl.oclc.org/ooxml/"


def qn(tag: str) -> str:
    """``'w:p'`` -> ``'{http://...main}p'``."""
    if tag.startswith("{"):
        return tag
    prefix, _, local = tag.partition(":")
    if not local:
        return tag
    return "{%s}%s" % (NS[prefix], local)


def local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def w(local_name: str) -> str:
    return "{%s}%s" % (W, local_name)


class RT:
    """Relationship types."""
    BASE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
    OFFICE_DOCUMENT = BASE + "officeDocument"
    STYLES = BASE + "styles"
    NUMBERING = BASE + "numbering"
    FOOTNOTES = BASE + "footnotes"
    ENDNOTES = BASE + "endnotes"
    COMMENTS = BASE + "comments"
    SETTINGS = BASE + "settings"
    HEADER = BASE + "header"
    FOOTER = BASE + "footer"
    HYPERLINK = BASE + "hyperlink"
    IMAGE = BASE + "image"
    CUSTOM_PROPERTIES = BASE + "custom-properties"
    EXTENDED_PROPERTIES = BASE + "extended-properties"
    CORE_PROPERTIES = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"
    VBA_PROJECT = "http://schemas.microsoft.com/office/2006/relationships/vbaProject"
    ALT_CHUNK = BASE + "aFChunk"
    OLE_OBJECT = BASE + "oleObject"
    PACKAGE = BASE + "package"
    CONTROL = BASE + "control"
    ACTIVEX_BINARY = "http://schemas.microsoft.com/office/2006/relationships/activeXControlBinary"


class CT:
    """Content types."""
    WML = "application/vnd.openxmlformats-officedocument.wordprocessingml."
    DOCUMENT = WML + "document.main+xml"
    DOCUMENT_MACRO = "application/vnd.ms-word.document.macroEnabled.main+xml"
    STYLES = WML + "styles+xml"
    NUMBERING = WML + "numbering+xml"
    FOOTNOTES = WML + "footnotes+xml"
    ENDNOTES = WML + "endnotes+xml"
    COMMENTS = WML + "comments+xml"
    SETTINGS = WML + "settings+xml"
    HEADER = WML + "header+xml"
    FOOTER = WML + "footer+xml"
    CUSTOM_PROPERTIES = "application/vnd.openxmlformats-officedocument.custom-properties+xml"
    CORE_PROPERTIES = "application/vnd.openxmlformats-package.core-properties+xml"
    RELATIONSHIPS = "application/vnd.openxmlformats-package.relationships+xml"
    VBA = "application/vnd.ms-office.vbaProject"


# Fixed date written into every generated file (core properties, comments, revisions).
FIXED_DATE = "2024-01-01T00:00:00Z"
# Fixed zip timestamp: the earliest the zip format can express.
ZIP_DATE_TIME = (1980, 1, 1, 0, 0, 0)
