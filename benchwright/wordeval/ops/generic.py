"""The generic ``set_property`` operation: one Word property described by the catalogue's
property registry (``catalogue/properties.yaml``), set on every object the target resolves to."""
from __future__ import annotations

from benchwright.formats.ooxml.section import ensure_page_margins as ensure_pgmar  # the self-test names it here
from benchwright.wordeval.docmodel import WordDoc
from benchwright.wordeval.ops.common import operation, scope_objects
from benchwright.wordeval.properties import property_for


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
