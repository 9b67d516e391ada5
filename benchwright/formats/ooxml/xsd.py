"""XSD validation of WordprocessingML parts against the packaged ECMA-376 (transitional) schemas.

Schemas are loaded from ``benchwright/formats/ooxml/xsd`` through a resolver that serves only local
files: every ``xsd:import`` of the XML namespace is pointed at the packaged ``xml.xsd`` and any
other URL is refused, so validation never touches the network.

Markup compatibility (ECMA-376 part 3) is applied before validating: ``mc:AlternateContent`` is
replaced by its ``mc:Fallback`` content (or dropped), and elements/attributes in the namespaces
listed in ``mc:Ignorable`` are removed (Word's w14/w15/wp14 extensions live there).
"""
from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path

from lxml import etree

from benchwright.formats.ooxml.ns import CT, NS, qn

XSD_DIR = Path(__file__).with_name("xsd")
_XML_NS = NS["xml"]
_MC = NS["mc"]


class _LocalResolver(etree.Resolver):
    def resolve(self, url, pubid, context):
        name = (url or "").replace("\\", "/").rsplit("/", 1)[-1]
        path = XSD_DIR / name
        if not name.endswith(".xsd") or not path.is_file():
            raise ValueError(f"schema {url!r} is not packaged; refusing to fetch it")
        return self.resolve_string(_patched(path), context, base_url=str(path))


def _patched(path: Path) -> bytes:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.parse(str(path), parser).getroot()
    for imp in root.iter("{http://www.w3.org/2001/XMLSchema}import"):
        if imp.get("namespace") == _XML_NS and not imp.get("schemaLocation"):
            imp.set("schemaLocation", "xml.xsd")
    return etree.tostring(root)


def _load(name: str) -> etree.XMLSchema:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    parser.resolvers.add(_LocalResolver())
    doc = etree.fromstring(_patched(XSD_DIR / name), parser, base_url=str(XSD_DIR / name))
    return etree.XMLSchema(etree.ElementTree(doc))


@lru_cache(maxsize=None)
def schema(name: str = "wml.xsd") -> etree.XMLSchema:
    """Compiled schema by packaged file name (``wml.xsd``, ``opc-contentTypes.xsd``, ...)."""
    return _load(name)


# Content types of the WordprocessingML parts that are validated, and their schema files.
WML_CONTENT_TYPES = {
    CT.DOCUMENT, CT.DOCUMENT_MACRO, CT.STYLES, CT.NUMBERING, CT.FOOTNOTES, CT.ENDNOTES, CT.COMMENTS,
    CT.SETTINGS, CT.HEADER, CT.FOOTER,
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
}
OTHER_SCHEMAS = {
    CT.CUSTOM_PROPERTIES: "shared-documentPropertiesCustom.xsd",
}


def apply_markup_compatibility(root: etree._Element) -> etree._Element:
    """Copy of ``root`` with MCE processed as a consumer that understands no extension."""
    root = copy.deepcopy(root)
    ignorable: set[str] = set()
    for el in root.xpath("//*[@mc:Ignorable]", namespaces={"mc": _MC}):
        for prefix in el.get(qn("mc:Ignorable")).split():
            ns = el.nsmap.get(prefix)
            if ns:
                ignorable.add(ns)
    # AlternateContent -> Fallback children (or nothing)
    for ac in root.xpath("//mc:AlternateContent", namespaces={"mc": _MC}):
        parent = ac.getparent()
        if parent is None:
            continue
        fallback = ac.find(qn("mc:Fallback"))
        idx = parent.index(ac)
        if fallback is not None:
            for i, child in enumerate(list(fallback)):
                parent.insert(idx + i, child)
        parent.remove(ac)
    for ns in ignorable | {_MC}:
        for el in root.xpath("//*[namespace-uri()=$ns]", ns=ns):
            parent = el.getparent()
            if parent is not None:
                parent.remove(el)
        for attr in root.xpath("//@*[namespace-uri()=$ns]", ns=ns):
            owner = attr.getparent()
            if owner is not None:
                owner.attrib.pop(attr.attrname, None)
    return root


_RESULT_CACHE: dict[tuple[str, str], tuple[str, ...]] = {}


def validate_xml(root: etree._Element, schema_name: str = "wml.xsd", max_errors: int = 5) -> list[str]:
    """Schema errors for one parsed part (after markup compatibility), at most ``max_errors``.

    Results are memoised by the part's canonical bytes (generated documents share most parts)."""
    import hashlib
    key = (hashlib.sha1(etree.tostring(root)).hexdigest(), schema_name)
    if key in _RESULT_CACHE:
        return list(_RESULT_CACHE[key])
    errors = _validate(root, schema_name, max_errors)
    if len(_RESULT_CACHE) > 4096:
        _RESULT_CACHE.clear()
    _RESULT_CACHE[key] = tuple(errors)
    return errors


def _validate(root: etree._Element, schema_name: str, max_errors: int) -> list[str]:
    prepared = apply_markup_compatibility(root)
    sch = schema(schema_name)
    if sch.validate(prepared):
        return []
    errors = []
    for err in sch.error_log:
        msg = err.message.replace("{%s}" % NS["w"], "w:")
        if len(msg) > 300:
            msg = msg[:300] + "..."
        errors.append(f"line {err.line}: {msg}")
        if len(errors) >= max_errors:
            break
    return errors


def validate_package(pkg, max_errors_per_part: int = 5) -> list[str]:
    """Schema problems of every WordprocessingML part (and custom properties) of a ``Package``."""
    problems: list[str] = []
    for name in pkg.members:
        if not name.endswith(".xml"):
            continue
        ct = pkg.content_type(name)
        if ct in WML_CONTENT_TYPES:
            sname = "wml.xsd"
        elif ct in OTHER_SCHEMAS:
            sname = OTHER_SCHEMAS[ct]
        else:
            continue
        for err in validate_xml(pkg.xml(name), sname, max_errors_per_part):
            problems.append(f"xsd {name}: {err}")
    for name in ("[Content_Types].xml",):
        if name in pkg.members:
            for err in validate_xml(pkg.xml(name), "opc-contentTypes.xsd", max_errors_per_part):
                problems.append(f"xsd {name}: {err}")
    for name in pkg.members:
        if name.endswith(".rels"):
            for err in validate_xml(pkg.xml(name), "opc-relationships.xsd", max_errors_per_part):
                problems.append(f"xsd {name}: {err}")
    return problems
