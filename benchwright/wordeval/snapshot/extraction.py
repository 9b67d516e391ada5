"""The extractor: one pass over a package that fills a ``Snapshot`` (stories first, then the
parts that refer to their paragraphs)."""
from __future__ import annotations

import hashlib

from benchwright.formats.ooxml.package import Package
from benchwright.memo import Memo
from benchwright.wordeval.snapshot.cascade import Numbering, Styles, theme_fonts
from benchwright.wordeval.snapshot.common import qn
from benchwright.wordeval.snapshot.drawings import _Drawings
from benchwright.wordeval.snapshot.paragraphs import _Paragraphs
from benchwright.wordeval.snapshot.parts import _DocumentParts
from benchwright.wordeval.snapshot.records import Snapshot

# a styles part's and a numbering part's definitions by content (the last 32 each): only read once made
_STYLES_CACHE: "Memo[Styles]" = Memo(32)
_NUMBERING_CACHE: "Memo[Numbering]" = Memo(32)


def _numbering(pkg: Package, part: str | None) -> Numbering:
    """The list definitions of numbering part ``part``, read once per content."""
    locator = f"{pkg.locator}:{part}" if part else pkg.locator
    key = (hashlib.sha1(pkg.get(part)).hexdigest() if part else None, locator)
    return _NUMBERING_CACHE.get(key, lambda: Numbering(pkg.xml(part) if part else None, locator))


class _Extractor(_Paragraphs, _Drawings, _DocumentParts):
    """Reads one package; the stories, drawings and document parts each come from their module."""

    def __init__(self, pkg: Package):
        self.pkg = pkg
        self.main = pkg.main_part()
        self.rels = pkg.rel_map(self.main)
        sparts = pkg.related(self.main, "styles")
        tf = theme_fonts(pkg, self.main)
        skey = (hashlib.sha1(pkg.get(sparts[0])).hexdigest() if sparts else None, tuple(sorted(tf.items())))
        self.styles = _STYLES_CACHE.get(skey, lambda: Styles(pkg.xml(sparts[0]) if sparts else None, tf))
        nparts = pkg.related(self.main, "numbering")
        self.numbering = _numbering(pkg, nparts[0] if nparts else None)
        self.snap = Snapshot()
        self._rpr_cache: dict = {}
        # keyed by lxml elements: the keys keep their proxies alive, so a lookup finds the same object
        self._tbl_style: dict = {}
        self._child_idx: dict = {}
        self._img_hash: dict[tuple, str] = {}

    def run(self) -> Snapshot:
        pkg, snap = self.pkg, self.snap
        doc = pkg.xml(self.main)
        body = doc.find(qn("w:body"))
        if body is None:
            raise ValueError("document has no w:body")
        body_paras = self.story("body", body, self.main)
        self._numbering_labels(body_paras)
        self._tables(body)
        self._sections(body)
        self._header_stories()
        self._notes(body)
        self._comments()
        self._markers()
        self._revisions()
        self._styles()
        self._sdts()
        self._props()
        self._settings()
        snap.flags = pkg.flags()
        return snap


def extract_snapshot(data: bytes | Package, locator: str = "<docx>") -> Snapshot:
    """Snapshot of a .docx (bytes are read through the safe reader; the extractor only reads the parts, so
    a part parsed before for another snapshot is not parsed again)."""
    pkg = data if isinstance(data, Package) else Package.from_bytes(data, locator, read_only=True)
    return _Extractor(pkg).run()
