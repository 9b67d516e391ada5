"""``WordDoc``: a python-docx ``Document`` plus the raw-OOXML pieces python-docx does not model.

The operation library works on this object.  Parts python-docx cannot create (numbering,
footnotes, endnotes, custom properties) are created here as plain ``XmlPart`` objects related
to the document, so python-docx still writes them, their relationships and content types.
Saving goes through :func:`benchwright.formats.ooxml.package.normalize_docx`: fixed member order and
timestamps, fixed dates; the same input and operations always give the same bytes.

Anchors (stable, human-readable targets) are resolved here: a paragraph by the beginning of its
text, a phrase inside it, a table by its caption or first cell, a section by a paragraph it
contains, a style by name, a bookmark by name, a comment / footnote by the start of its text.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import io

import docx
from docx.opc.packuri import PackURI
from docx.opc.part import XmlPart
from docx.oxml.parser import parse_xml
from lxml import etree

from benchwright.errors import RecordError
from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import CT, NS, RT, W_NS_DECL, qn
from benchwright.formats.ooxml.package import normalized_members, write_zip
from benchwright.formats.ooxml.run import make_run, set_paragraph_text, split_run
from benchwright.formats.ooxml.schema_order import insert_child
from benchwright.memo import Memo
from benchwright.wordeval import text as T

def _register_xml_parts() -> None:
    """Have python-docx load the XML parts it does not model (footnotes, endnotes, custom
    properties) as ``XmlPart`` so their XML can be edited in place and is written back on save."""
    from docx.opc.part import PartFactory
    for ct in (CT.FOOTNOTES, CT.ENDNOTES, CT.CUSTOM_PROPERTIES):
        PartFactory.part_type_for.setdefault(ct, XmlPart)


_register_xml_parts()

AUTHOR = "WordEval"
AUTHOR_INITIALS = "WE"


class PreconditionError(RecordError):
    """The document lacks what an operation declares it needs (a table wide enough for the
    unit's values, a style that exists or is one of Word's built-ins, ...).  This - and
    :class:`AnchorError`, a missing target - is the only failure that makes a unit not applicable
    to a base document; any other exception in an operation is a bug and a build error."""


class AnchorError(PreconditionError):
    """The target anchor (paragraph, phrase, table, section, bookmark, ...) is not in the document."""


# sha256 of a .docx read twice -> its python-docx package as first read, never touched (the last 16); sha256s
# read (the last 256)
_UNTOUCHED: "Memo[object]" = Memo(16)
_READ_ONCE: "Memo[None]" = Memo(256)


def open_document(data: bytes):
    """python-docx's ``Document`` of ``data``. A .docx read before is a deep copy of its first reading, kept
    untouched: copying the parsed parts costs about a third of reading them again, and a build reads each base
    document once per case tried on it (the parts copied are the parts read; python-docx writes them the same)."""
    key = hashlib.sha256(data).digest()
    first = []
    _READ_ONCE.get(key, lambda: first.append(True))   # make runs only for bytes not read before
    if first:
        return docx.Document(io.BytesIO(data))
    untouched = _UNTOUCHED.get(key, lambda: docx.Document(io.BytesIO(data)).part.package)
    return _copy_graph(untouched, {}).main_document_part.document


_IMMUTABLE = (str, bytes, int, float, bool, type(None))   # str: part names (PackURI) too


def _plain_docx_object(x) -> bool:
    """A python-docx object (package, part, relationship collection, relationship) ``copy.deepcopy`` copies
    by its ``__dict__`` (and a dict's items): no slots, no copy or pickle hooks of its own."""
    cls = type(x)
    return (cls.__module__.startswith("docx.") and hasattr(x, "__dict__") and not hasattr(cls, "__slots__")
            and cls.__reduce_ex__ is object.__reduce_ex__ and cls.__reduce__ is object.__reduce__
            and cls.__getstate__ is object.__getstate__ and not hasattr(cls, "__setstate__")
            and not hasattr(cls, "__deepcopy__"))


def _copy_graph(x, memo: dict):
    """``copy.deepcopy(x)`` of python-docx's package graph, for less: immutable values are shared, element
    trees copied by lxml, plain python-docx objects and dicts and lists copied here, anything else by
    ``copy.deepcopy`` (with the same memo, so an object reached twice is copied once)."""
    if isinstance(x, _IMMUTABLE):
        return x
    y = memo.get(id(x))
    if y is not None:
        return y
    if isinstance(x, etree._Element):
        y = copy.deepcopy(x, memo)
    elif type(x) is dict:
        y = memo[id(x)] = {}
        for k, v in x.items():
            y[_copy_graph(k, memo)] = _copy_graph(v, memo)
    elif type(x) is list:
        y = memo[id(x)] = []
        for v in x:
            y.append(_copy_graph(v, memo))
    elif _plain_docx_object(x):
        y = memo[id(x)] = type(x).__new__(type(x))
        y.__dict__.update({k: _copy_graph(v, memo) for k, v in x.__dict__.items()})
        if isinstance(x, dict):
            for k, v in x.items():
                y[_copy_graph(k, memo)] = _copy_graph(v, memo)
    else:
        y = copy.deepcopy(x, memo)
    return y


# the content types and relationship items written last, by what they list (the last 256): the cases built on
# one base document write the same ones again and again
_ITEMS: "Memo[bytes]" = Memo(256)


def _content_types_xml(parts) -> bytes:
    """``[Content_Types].xml`` as python-docx writes it: a function of the parts' names and content types."""
    from docx.opc.pkgwriter import _ContentTypesItem
    key = ("[Content_Types].xml",) + tuple((str(part.partname), part.content_type) for part in parts)
    return _ITEMS.get(key, lambda: _ContentTypesItem.from_parts(parts).blob)


def _rels_xml(rels) -> bytes:
    """A relationships item as python-docx writes it: a function of its relationships, in order."""
    key = ("rels",) + tuple((r.rId, r.reltype, r.target_ref, r.is_external) for r in rels.values())
    return _ITEMS.get(key, lambda: rels.xml)


class WordDoc:
    def __init__(self, data: bytes, locator: str = "<docx>"):
        self.locator = locator
        self.doc = open_document(data)
        self.part = self.doc.part
        self.body = self.doc.element.body

    def to_members(self) -> dict[str, bytes]:
        """Serialise every part the way python-docx's PackageWriter does, without zipping."""
        pkg = self.part.package
        parts = pkg.parts
        for part in parts:
            part.before_marshal()
        members = {"[Content_Types].xml": _content_types_xml(parts), "_rels/.rels": _rels_xml(pkg.rels)}
        for part in parts:
            members[part.partname.membername] = part.blob
            if len(part.rels):
                members[part.partname.rels_uri.membername] = _rels_xml(part.rels)
        return members

    def to_bytes(self) -> bytes:
        """Deterministic .docx bytes (fixed member order, timestamps and dates)."""
        return self.to_archive()[0]

    def to_archive(self) -> tuple[bytes, dict[str, bytes]]:
        """:meth:`to_bytes` and the members the archive holds, in its order (``Package.from_written``
        reads them instead of inflating the archive again)."""
        members = normalized_members(self.to_members(), locator=self.locator)
        return write_zip(members), members

    # ------------------------------------------------------------------ parts
    def _related(self, tail: str):
        for rel in self.part.rels.values():
            if not rel.is_external and rel.reltype.rsplit("/", 1)[-1] == tail:
                return rel.target_part
        return None

    def _new_part(self, partname: str, content_type: str, xml: str, reltype: str, source=None):
        pkg = self.part.package
        part = XmlPart(PackURI(partname), content_type, parse_xml(xml.encode("utf-8")), pkg)
        (source or self.part).relate_to(part, reltype)
        return part

    @property
    def styles_el(self):
        return self.doc.styles.element

    def numbering_el(self, create: bool = True):
        part = self._related("numbering")
        if part is None:
            if not create:
                return None
            part = self._new_part("/word/numbering.xml", CT.NUMBERING,
                                  f"<w:numbering {W_NS_DECL}/>", RT.NUMBERING)
        return part.element

    def notes_el(self, kind: str, create: bool = True):
        """``footnotes`` or ``endnotes`` root, created with Word's separator notes if absent."""
        part = self._related(kind)
        if part is None:
            if not create:
                return None
            tag = kind[:-1]
            xml = (f"<w:{kind} {W_NS_DECL}>"
                   f'<w:{tag} w:type="separator" w:id="-1"><w:p><w:pPr><w:spacing w:after="0" w:line="240" '
                   f'w:lineRule="auto"/></w:pPr><w:r><w:separator/></w:r></w:p></w:{tag}>'
                   f'<w:{tag} w:type="continuationSeparator" w:id="0"><w:p><w:pPr><w:spacing w:after="0" '
                   f'w:line="240" w:lineRule="auto"/></w:pPr><w:r><w:continuationSeparator/></w:r></w:p></w:{tag}>'
                   f"</w:{kind}>")
            ct = CT.FOOTNOTES if kind == "footnotes" else CT.ENDNOTES
            rt = RT.FOOTNOTES if kind == "footnotes" else RT.ENDNOTES
            part = self._new_part(f"/word/{kind}.xml", ct, xml, rt)
            self._ensure_note_styles(tag)
        return part.element

    def _ensure_note_styles(self, tag: str) -> None:
        names = {"footnote": ("footnote text", "FootnoteText", "footnote reference", "FootnoteReference"),
                 "endnote": ("endnote text", "EndnoteText", "endnote reference", "EndnoteReference")}[tag]
        self.ensure_style(names[1], names[0], "paragraph", based_on="Normal",
                          ppr='<w:pPr><w:spacing w:after="0" w:line="240" w:lineRule="auto"/></w:pPr>',
                          rpr='<w:rPr><w:sz w:val="20"/></w:rPr>')
        self.ensure_style(names[3], names[2], "character", rpr='<w:rPr><w:vertAlign w:val="superscript"/></w:rPr>')

    def ensure_style(self, style_id: str, name: str, kind: str, based_on: str | None = None,
                     ppr: str = "", rpr: str = "", extra: str = "") -> str:
        """Add a style definition unless one with that id exists; returns the style id."""
        styles = self.styles_el
        for st in styles.findall(qn("w:style")):
            if st.get(qn("w:styleId")) == style_id:
                return style_id
        from benchwright.formats.ooxml.schema_order import wtype
        el = parse_xml(f'<w:style {W_NS_DECL} w:type="{kind}" w:styleId="{style_id}"/>'.encode())
        children = [f'<w:name w:val="{name}"/>', '<w:uiPriority w:val="99"/>', "<w:unhideWhenUsed/>"]
        if based_on:
            based_id = self.style_id(based_on, kind) or based_on
            children.append(f'<w:basedOn w:val="{based_id}"/>')
        wrapper = parse_xml(f"<w:x {W_NS_DECL}>{''.join(children)}{extra}{ppr}{rpr}</w:x>".encode())
        for child in list(wrapper):
            insert_child(el, child, wtype("CT_Style"))   # schema order, whatever order given
        styles.append(el)
        return style_id

    def style(self, name: str, kind: str | None = None, create: bool = True):
        """The python-docx style called ``name`` (UI or internal name). A built-in style the
        document does not define is added the way Word does when it is first used (its built-in
        definition, with the document's latent-style settings); a missing custom style is an
        :class:`AnchorError` (so is any missing style with ``create=False``)."""
        sid = self.style_id(name, kind)
        if sid is None:
            if not create:
                raise AnchorError(self.locator, f"no style named {name!r}")
            sid = add_builtin_style(self.styles_el, name, kind, self.locator)
        for st in self.doc.styles:
            if st.style_id == sid and (kind is None or st.element.get(qn("w:type")) == kind):
                return st
        raise AnchorError(self.locator, f"no style named {name!r}")

    def style_id(self, name: str, kind: str | None = None) -> str | None:
        for st in self.styles_el.findall(qn("w:style")):
            n = st.find(qn("w:name"))
            if n is not None and (n.get(qn("w:val")) or "").lower() == name.lower():
                if kind is None or st.get(qn("w:type")) == kind:
                    return st.get(qn("w:styleId"))
        for st in self.styles_el.findall(qn("w:style")):
            if st.get(qn("w:styleId")) == name and (kind is None or st.get(qn("w:type")) == kind):
                return name
        return None

    def comments_el(self):
        return self.part._comments_part.element

    def settings_el(self):
        return self.doc.settings.element

    def custom_props_el(self, create: bool = True):
        pkg = self.part.package
        for rel in pkg.rels.values():
            if rel.reltype == RT.CUSTOM_PROPERTIES:
                return rel.target_part.element
        if not create:
            return None
        xml = (f'<Properties xmlns="{NS["op"]}" xmlns:vt="{NS["vt"]}"/>')
        part = XmlPart(PackURI("/docProps/custom.xml"), CT.CUSTOM_PROPERTIES, parse_xml(xml.encode()), pkg)
        pkg.relate_to(part, RT.CUSTOM_PROPERTIES)
        return part.element

    # ------------------------------------------------------------------ ids
    def _all_story_roots(self) -> list:
        roots = [self.doc.element]
        for rel in self.part.rels.values():
            if rel.is_external:
                continue
            tail = rel.reltype.rsplit("/", 1)[-1]
            if tail in ("header", "footer", "footnotes", "endnotes", "comments") and \
                    hasattr(rel.target_part, "element"):
                roots.append(rel.target_part.element)
        return roots

    def next_id(self, tags: tuple[str, ...], attr: str = "w:id", start: int = 1) -> int:
        mx = start - 1
        for root in self._all_story_roots():
            for el in root.iter(*[qn(t) for t in tags]):
                v = el.get(qn(attr)) if ":" in attr else el.get(attr)
                try:
                    mx = max(mx, int(v))
                except (TypeError, ValueError):
                    pass
        return mx + 1

    def next_revision_id(self) -> int:
        return self.next_id(("w:ins", "w:del", "w:rPrChange", "w:pPrChange", "w:moveFrom", "w:moveTo",
                             "w:sectPrChange", "w:tblPrChange", "w:trPrChange", "w:tcPrChange", "w:comment",
                             "w:commentRangeStart", "w:bookmarkStart"), start=100)

    def next_bookmark_id(self) -> int:
        return self.next_id(("w:bookmarkStart", "w:bookmarkEnd"), start=1)

    def next_docpr_id(self) -> int:
        return self.next_id(("wp:docPr",), attr="id", start=1)

    # ------------------------------------------------------------------ anchors
    def body_paragraphs(self) -> list:
        return list(T.iter_block_paragraphs(self.body))

    def paragraph(self, prefix: str, container=None):
        """The first paragraph whose display text (without control characters) starts with ``prefix``."""
        paras = list(T.iter_block_paragraphs(container if container is not None else self.body))
        want = prefix.strip()
        for p in paras:
            if T.paragraph_read_text(p).strip().startswith(want):
                return p
        raise AnchorError(self.locator, f"no paragraph starts with {prefix!r}")

    def proxy(self, p):
        from docx.text.paragraph import Paragraph
        return Paragraph(p, self.doc._body)

    def run_proxy(self, r):
        """python-docx's ``Run`` of run element ``r``, its parent (a paragraph, or a hyperlink or field
        inside one) standing as the paragraph."""
        from docx.text.run import Run
        return Run(r, self.proxy(r.getparent()))

    def text_range(self, p, phrase: str | None, occurrence: int = 1) -> tuple[int, int]:
        """Character offsets of ``phrase`` in the paragraph's display text (whole paragraph if None)."""
        txt = T.paragraph_text(p, "read")
        if phrase is None:
            return 0, len(txt)
        idx = -1
        for _ in range(occurrence):
            idx = txt.find(phrase, idx + 1)
            if idx < 0:
                raise AnchorError(self.locator, f"phrase {phrase!r} not in paragraph {txt[:40]!r}")
        return idx, idx + len(phrase)

    def isolate(self, p, start: int, end: int) -> list:
        """Split runs so that [start, end) of the display text is covered by whole runs; return them."""
        pieces = T.view(T.ParagraphWalker("final").pieces(p), "read")
        runs = []
        for pc in pieces:
            if pc.run is None:
                continue
            a, b = pc.start, pc.start + len(pc.text)
            if b <= start or a >= end:
                continue
            r = pc.run
            if a < start:
                _, r = split_run(r, start - a)
                self._renumber_revisions(r)
                a = start
            if b > end:
                r, right = split_run(r, end - a)
                self._renumber_revisions(right)
            runs.append(r)
        if not runs:
            raise AnchorError(self.locator, f"no runs cover characters {start}-{end}")
        return runs

    def _renumber_revisions(self, run) -> None:
        """A split-off copy of a run keeps its tracked formatting change (w:rPrChange) under a new
        revision id: every revision id is unique in the document."""
        for change in run.iter(qn("w:rPrChange")):
            change.set(qn("w:id"), str(self.next_revision_id()))

    def table(self, spec: dict):
        tables = list(self.body.iter(qn("w:tbl")))
        if "caption" in spec:
            cap = self.paragraph(spec["caption"])
            nxt = cap.getnext()
            while nxt is not None and nxt.tag not in (qn("w:tbl"), qn("w:p")):
                nxt = nxt.getnext()
            if nxt is not None and nxt.tag == qn("w:tbl"):
                return nxt
            prv = cap.getprevious()
            if prv is not None and prv.tag == qn("w:tbl"):
                return prv
            raise AnchorError(self.locator, f"no table next to caption {spec['caption']!r}")
        if "first_cell" in spec:
            for t in tables:
                tc = t.find(".//" + qn("w:tc"))
                if tc is not None and "".join(T.paragraph_read_text(p) for p in T.iter_block_paragraphs(tc)) \
                        .strip().startswith(spec["first_cell"]):
                    return t
            raise AnchorError(self.locator, f"no table with first cell {spec['first_cell']!r}")
        raise AnchorError(self.locator, f"bad table anchor {spec!r}")

    def table_proxy(self, tbl):
        from docx.table import Table
        return Table(tbl, self.doc._body)

    def section_index(self, prefix: str) -> int:
        p = self.paragraph(prefix)
        idx = 0
        for q in self.body.iter(qn("w:p")):
            if q is p:
                return idx
            ppr = q.find(qn("w:pPr"))
            if ppr is not None and ppr.find(qn("w:sectPr")) is not None:
                idx += 1
        raise AnchorError(self.locator, f"paragraph {prefix!r} is not in the body")

    def section(self, prefix: str | None):
        if prefix is None:
            return self.doc.sections[-1]
        return self.doc.sections[self.section_index(prefix)]

    def bookmark(self, name: str):
        for root in self._all_story_roots():
            for bm in root.iter(qn("w:bookmarkStart")):
                if bm.get(qn("w:name")) == name:
                    return bm
        raise AnchorError(self.locator, f"no bookmark named {name!r}")

    def comment(self, prefix: str):
        for c in self.comments_el().findall(qn("w:comment")):
            if "".join(T.paragraph_read_text(p) for p in c.iter(qn("w:p"))).startswith(prefix):
                return c
        raise AnchorError(self.locator, f"no comment starting {prefix!r}")

    def note(self, kind: str, prefix: str):
        root = self.notes_el(kind + "s", create=False)
        if root is not None:
            for n in root.findall(qn("w:" + kind)):
                if (n.get(qn("w:type")) or "normal") != "normal":
                    continue
                txt = "".join(T.paragraph_read_text(p) for p in n.iter(qn("w:p"))).strip()
                if txt.startswith(prefix):
                    return n
        raise AnchorError(self.locator, f"no {kind} starting {prefix!r}")


# ---------------------------------------------------------------------- built-in styles

# Word's built-in definitions of the styles its own template does not carry: the TOC levels as
# Word 2013+ writes them when a table of contents first uses them (220 twips more indent a level).
def _toc_style_xml(n: int) -> str:
    ind = f'<w:ind w:left="{220 * (n - 1)}"/>' if n > 1 else ""
    return (f'<w:style w:type="paragraph" w:styleId="TOC{n}"><w:name w:val="toc {n}"/><w:basedOn w:val="Normal"/>'
            f'<w:next w:val="Normal"/><w:autoRedefine/><w:uiPriority w:val="39"/><w:unhideWhenUsed/>'
            f'<w:pPr><w:spacing w:after="100"/>{ind}</w:pPr></w:style>')


_EXTRA_BUILTINS = "".join(_toc_style_xml(n) for n in range(1, 10))


@functools.lru_cache(maxsize=1)
def builtin_styles() -> dict[str, etree._Element]:
    """Word's built-in style definitions by lower-case name: the styles part of python-docx's
    default template (saved by Word) plus :data:`_EXTRA_BUILTINS`."""
    import zipfile
    from pathlib import Path

    template = Path(docx.__file__).with_name("templates") / "default.docx"
    with zipfile.ZipFile(template) as zf:
        root = etree.fromstring(zf.read("word/styles.xml"), etree.XMLParser(remove_blank_text=True))
    extra = etree.fromstring(f"<w:styles {W_NS_DECL}>{_EXTRA_BUILTINS}</w:styles>".encode())
    out: dict[str, etree._Element] = {}
    for st in list(root.iter(qn("w:style"))) + list(extra.iter(qn("w:style"))):
        name = st.find(qn("w:name"))
        if name is not None:
            out.setdefault(name.get(qn("w:val")).lower(), st)
    return out


_LATENT_ATTRS = (("uiPriority", "defUIPriority"), ("semiHidden", "defSemiHidden"),
                 ("unhideWhenUsed", "defUnhideWhenUsed"), ("qFormat", "defQFormat"))


def _apply_latent(styles_el, el, name: str) -> None:
    """Word writes a latent style's behaviour (priority, hidden, quick-style) from the document's
    own ``w:latentStyles`` exception for it when it materialises the style."""
    from benchwright.formats.ooxml.schema_order import wtype
    latent = styles_el.find(qn("w:latentStyles"))
    if latent is None:
        return
    exc = next((x for x in latent.findall(qn("w:lsdException"))
                if (x.get(qn("w:name")) or "").lower() == name.lower()), None)
    if exc is None:
        return
    for attr, default in _LATENT_ATTRS:
        v = exc.get(qn("w:" + attr))
        v = latent.get(qn("w:" + default)) if v is None else v
        if v is None:
            continue
        old = el.find(qn("w:" + attr))
        if old is not None:
            el.remove(old)
        if attr == "uiPriority":
            insert_child(el, w_el("w:uiPriority", val=v), wtype("CT_Style"))
        elif v in ("1", "true", "on"):
            insert_child(el, w_el("w:" + attr), wtype("CT_Style"))


def add_builtin_style(styles_el, name: str, kind: str | None = None, locator: str = "<docx>") -> str:
    """Add Word's built-in style ``name`` to a styles part that lacks it; returns its style id.
    Styles it is based on, links to or is followed by are added too when they are built-in
    (references to anything else are dropped, as Word falls back to Normal)."""
    src = builtin_styles().get(name.lower())
    if src is None or (kind is not None and src.get(qn("w:type")) != kind):
        raise AnchorError(locator, f"no style named {name!r} (and it is not a Word built-in style)")
    if src.find(".//" + qn("w:numPr")) is not None:
        # Word would also create the list definition the style numbers with; not modelled here
        raise PreconditionError(locator, f"built-in style {name!r} needs a numbering definition the document lacks")
    existing = {st.get(qn("w:styleId")) for st in styles_el.findall(qn("w:style"))}
    el = copy.deepcopy(src)
    for rsid in el.findall(qn("w:rsid")):
        el.remove(rsid)
    sid = base_id = el.get(qn("w:styleId"))
    n = 1
    while sid in existing:              # the id is taken by a style of another name
        n += 1
        sid = f"{base_id}{n}"
    el.set(qn("w:styleId"), sid)
    _apply_latent(styles_el, el, name)
    styles_el.append(el)
    by_id = {st.get(qn("w:styleId")): st for st in builtin_styles().values()}
    for ref in ("basedOn", "next", "link"):
        r = el.find(qn("w:" + ref))
        if r is None:
            continue
        names = {(nm.get(qn("w:val")) or "").lower(): st.get(qn("w:styleId"))
                 for st in styles_el.findall(qn("w:style")) for nm in st.findall(qn("w:name"))}
        target = by_id.get(r.get(qn("w:val")))
        tname = ((target.find(qn("w:name")).get(qn("w:val")) if target is not None else None) or "").lower()
        if tname in names:
            r.set(qn("w:val"), names[tname])
        elif target is not None and target.find(".//" + qn("w:numPr")) is None:
            r.set(qn("w:val"), add_builtin_style(styles_el, tname, None, locator))
        else:
            el.remove(r)
    return sid


__all__ = ["WordDoc", "AnchorError", "PreconditionError", "add_builtin_style", "builtin_styles", "split_run",
           "make_run", "set_paragraph_text", "AUTHOR", "AUTHOR_INITIALS", "W_NS_DECL"]
