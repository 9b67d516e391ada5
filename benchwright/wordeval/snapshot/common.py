"""Names every module of the snapshot reads XML with."""
from __future__ import annotations

import functools

from benchwright.formats.ooxml.accessors import to_int
from benchwright.formats.ooxml.ns import NS, qn as _qn

W = NS["w"]
_WNS = "{%s}" % W
# qn() is called per element on hot paths; the same few dozen names are resolved millions of times
qn = functools.lru_cache(maxsize=None)(_qn)
W_TBL, W_TR, W_TC = qn("w:tbl"), qn("w:tr"), qn("w:tc")


def _val(el, name="val"):
    return el.get(_WNS + name)


_int = to_int
