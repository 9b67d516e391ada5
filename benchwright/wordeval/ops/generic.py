"""The generic ``set_property`` operation: one Word property described by the catalogue's
property registry (``catalogue/properties.yaml``), set on every object the target resolves to."""
from __future__ import annotations

from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.schema_order import insert_child
from benchwright.wordeval.docmodel import WordDoc
from benchwright.wordeval.ops.common import operation, scope_objects
from benchwright.wordeval.properties import property_for


# The page margins Word (and LibreOffice's import) use for a section without w:pgMar.
WORD_DEFAULT_PGMAR = (("top", 1440), ("right", 1800), ("bottom", 1440), ("left", 1800), ("header", 720),
                      ("footer", 720), ("gutter", 0))


def ensure_pgmar(sect_pr) -> None:
    """A section without ``w:pgMar`` gets all seven margins (every attribute of CT_PageMar is
    required; python-docx would write only the one it sets) at the values Word used for it."""
    if sect_pr.find(qn("w:pgMar")) is None:
        insert_child(sect_pr, w_el("w:pgMar", **dict(WORD_DEFAULT_PGMAR)))


@operation("set_property")
def set_property(wd: WordDoc, target: dict, params: dict) -> None:
    """Generic: set one Word property (described by ``params['spec']``) to ``params['value']``,
    through the property's accessor (:class:`benchwright.wordeval.properties.Property`)."""
    spec = params["spec"]
    prop = property_for(spec)
    for el, proxy in scope_objects(wd, spec["scope"], target):
        if spec["scope"] == "section" and spec.get("locus", "").startswith("w:pgMar"):
            ensure_pgmar(el)
        prop.write(wd, el, proxy, params["value"])
