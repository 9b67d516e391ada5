"""Schema order of child elements, derived from the packaged ECMA-376 schemas.

Word rejects documents whose children are out of schema order (``w:pPr`` must come before the
runs, ``w:jc`` after ``w:ind`` inside ``w:pPr``, ...). Rather than hand-written successor lists,
this module reads the XSDs once, flattens every complex type into an ordered list of *slots*
(a ``xsd:choice`` collapses into one slot, group references and extensions are expanded), and
finds the complex type of any element from its ancestor path. :func:`insert_child` then puts a
new child where the schema wants it.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from lxml import etree

from benchwright.formats.ooxml.ns import NS

XSD_DIR = Path(__file__).with_name("xsd")
XS = "http://www.w3.org/2001/XMLSchema"
_SCHEMA_FILES = ("wml.xsd", "dml-wordprocessingDrawing.xsd", "dml-main.xsd", "dml-picture.xsd",
                 "shared-commonSimpleTypes.xsd")


def _x(tag: str) -> str:
    return "{%s}%s" % (XS, tag)


class _Schemas:
    def __init__(self) -> None:
        self.types: dict[str, etree._Element] = {}      # "{ns}CT_x" -> complexType element
        self.groups: dict[str, etree._Element] = {}
        self.elements: dict[str, str] = {}              # global element "{ns}name" -> type qname
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
        for name in _SCHEMA_FILES:
            root = etree.parse(str(XSD_DIR / name), parser).getroot()
            tns = root.get("targetNamespace")
            for child in root:
                if not isinstance(child.tag, str):
                    continue
                nm = child.get("name")
                if nm is None:
                    continue
                key = "{%s}%s" % (tns, nm)
                if child.tag == _x("complexType"):
                    self.types[key] = child
                elif child.tag == _x("group"):
                    self.groups[key] = child
                elif child.tag == _x("element") and child.get("type"):
                    self.elements[key] = self._resolve(child, child.get("type"))
        self._slots: dict[str, list[dict[str, str | None]]] = {}

    @staticmethod
    def _resolve(node: etree._Element, qname: str) -> str:
        prefix, _, localname = qname.rpartition(":")
        ns = node.nsmap.get(prefix or None)
        if ns is None:
            ns = node.getroottree().getroot().get("targetNamespace")
        return "{%s}%s" % (ns, localname)

    def _tns(self, node: etree._Element) -> str:
        return node.getroottree().getroot().get("targetNamespace")

    def slots(self, ctype: str) -> list[dict[str, str | None]]:
        """Ordered slots of a complex type: each slot maps child qname -> child type qname."""
        if ctype not in self._slots:
            self._slots[ctype] = []  # guard recursion
            node = self.types.get(ctype)
            self._slots[ctype] = self._model(node) if node is not None else []
        return self._slots[ctype]

    def _model(self, node: etree._Element) -> list[dict]:
        out: list[dict] = []
        for child in node:
            if not isinstance(child.tag, str):
                continue
            tag = child.tag
            if tag == _x("sequence"):
                out.extend(self._model(child))
            elif tag == _x("all"):
                merged: dict = {}
                for s in self._model(child):
                    merged.update(s)
                out.append(merged)
            elif tag == _x("choice"):
                merged = {}
                for s in self._model(child):
                    merged.update(s)
                if merged:
                    out.append(merged)
            elif tag == _x("group") and child.get("ref"):
                g = self.groups.get(self._resolve(child, child.get("ref")))
                if g is not None:
                    out.extend(self._model(g))
            elif tag == _x("element"):
                if child.get("name"):
                    qn_ = "{%s}%s" % (self._tns(child), child.get("name"))
                    t = self._resolve(child, child.get("type")) if child.get("type") else None
                    out.append({qn_: t})
                elif child.get("ref"):
                    qn_ = self._resolve(child, child.get("ref"))
                    out.append({qn_: self.elements.get(qn_)})
            elif tag in (_x("complexContent"), _x("simpleContent")):
                out.extend(self._model(child))
            elif tag in (_x("extension"), _x("restriction")):
                base = child.get("base")
                if base and tag == _x("extension"):
                    out.extend(self.slots(self._resolve(child, base)))
                out.extend(self._model(child))
        return out


@lru_cache(maxsize=1)
def schemas() -> _Schemas:
    return _Schemas()


@lru_cache(maxsize=4096)
def _child_rank_table(ctype: str) -> tuple[dict[str, tuple[int, int]], dict[str, str | None]]:
    # rank = (slot, position inside the slot): a choice is free in the schema, but Word writes
    # (and some consumers expect) the declaration order, so that order is used as a tie-breaker.
    ranks: dict[str, tuple[int, int]] = {}
    types: dict[str, str | None] = {}
    for i, slot in enumerate(schemas().slots(ctype)):
        for j, (q, t) in enumerate(slot.items()):
            ranks.setdefault(q, (i, j))
            types.setdefault(q, t)
    return ranks, types


@lru_cache(maxsize=4096)
def _type_for_path(path: tuple[str, ...]) -> str | None:
    s = schemas()
    ctype = s.elements.get(path[0])
    for tag in path[1:]:
        if ctype is None:
            return None
        _, types = _child_rank_table(ctype)
        ctype = types.get(tag)
    return ctype


def ctype_of(el: etree._Element) -> str | None:
    """Complex type of ``el`` from its ancestor path (None when not derivable)."""
    path = [el.tag]
    for anc in el.iterancestors():
        path.append(anc.tag)
    path.reverse()
    # the path may start below a global element (e.g. a detached subtree): try suffixes
    for i in range(len(path)):
        if path[i] in schemas().elements:
            t = _type_for_path(tuple(path[i:]))
            if t is not None:
                return t
    return None


def child_ranks(parent: etree._Element, ctype: str | None = None) -> dict[str, tuple[int, int]]:
    ctype = ctype or ctype_of(parent)
    if ctype is None:
        return {}
    return _child_rank_table(ctype)[0]


def insert_child(parent: etree._Element, child: etree._Element, ctype: str | None = None) -> etree._Element:
    """Insert ``child`` into ``parent`` at the position the schema requires.

    ``ctype`` names the parent's complex type (``"{w-ns}CT_PPr"``) when the parent is detached;
    otherwise it is derived from the ancestor path. Unknown siblings (extension elements) are
    stepped over. Falls back to appending when the order is unknown.
    """
    ranks = child_ranks(parent, ctype)
    rank = ranks.get(child.tag)
    if rank is None:
        parent.append(child)
        return child
    for i, sib in enumerate(parent):
        r = ranks.get(sib.tag) if isinstance(sib.tag, str) else None
        if r is not None and r > rank:
            parent.insert(i, child)
            return child
    parent.append(child)
    return child


def get_or_add(parent: etree._Element, tag: str, ctype: str | None = None) -> etree._Element:
    """First child with ``tag`` ("w:ind" or Clark notation), created in schema order if absent."""
    from benchwright.formats.ooxml.ns import qn
    q = qn(tag)
    found = parent.find(q)
    if found is not None:
        return found
    return insert_child(parent, parent.makeelement(q, nsmap=None), ctype)


def wtype(name: str) -> str:
    """``"CT_PPr"`` -> Clark name in the WordprocessingML namespace."""
    return "{%s}%s" % (NS["w"], name)
