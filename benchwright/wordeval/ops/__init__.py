"""The operation library: Word commands applied deterministically to a :class:`WordDoc`.

Two layers, as in python-docx: :mod:`benchwright.formats.ooxml.schema_order` knows the XML and
where children go; the functions here are named after what Word does.

* ``set_property`` (:mod:`.generic`) is the one generic mechanism behind the many formatting
  commands (``Font.Bold``, ``ParagraphFormat.LeftIndent``, ``PageSetup.TopMargin``,
  ``Cell.VerticalAlignment`` ...).  The catalogue's property registry says, per Word property,
  which object it lives on (``scope``), where it lives in OOXML (``locus``, e.g.
  ``w:pPr/w:ind@w:left``), its value kind and, when python-docx models it, the python-docx
  attribute (``python_docx``) - which is then used; each property's location is resolved once, by
  the accessor the snapshot reads it with (:mod:`benchwright.wordeval.properties`).
* Everything else is a distinct operation because Word really does something different:
  footnotes, comments, tracked changes, fields, TOC, bookmarks, hyperlinks, pictures, lists,
  section breaks, content controls, custom properties ...  One module per subsystem, as the
  catalogue's ``units/01..15`` files; what several subsystems share is in :mod:`.common`.

Every operation has the signature ``op(wd, target, params) -> None`` where ``target`` is a
resolved anchor dict and ``params`` holds OOXML-native values (twips, half-points, EMU, OOXML
enumeration strings).  Ids are sequential, dates fixed (``FIXED_DATE``), author fixed.
"""
from __future__ import annotations

from types import ModuleType
from typing import Callable

from benchwright.formats.ooxml.accessors import set_locus
from benchwright.wordeval.docmodel import WordDoc
from benchwright.wordeval.ops import (
    character_formatting, comments, document_properties, fields, footnotes_endnotes, generic, headers_footers,
    hyperlinks_bookmarks, images_shapes, lists_numbering, paragraph_formatting, sections_page_setup, styles,
    tables, tables_of_contents, tracked_changes,
)
from benchwright.wordeval.ops.common import operation, paragraphs_for, runs_for

# In the catalogue's subsystem order (catalogue.SUBSYSTEMS), the generic property setter first.
SUBSYSTEM_MODULES: tuple[ModuleType, ...] = (
    generic, character_formatting, paragraph_formatting, styles, lists_numbering, tables, sections_page_setup,
    headers_footers, fields, footnotes_endnotes, comments, tracked_changes, hyperlinks_bookmarks, images_shapes,
    document_properties, tables_of_contents,
)


def _collect(modules) -> dict[str, Callable]:
    """{name: function} of the functions marked with ``@operation`` in ``modules`` (each defined there)."""
    found: dict[str, Callable] = {}
    for module in modules:
        for fn in vars(module).values():
            name = getattr(fn, "op_name", None)
            if name is None or fn.__module__ != module.__name__:
                continue
            if name in found:
                raise ValueError(f"operation {name!r} defined twice ({found[name].__module__}, {module.__name__})")
            found[name] = fn
    return found


OPERATIONS: dict[str, Callable] = _collect(SUBSYSTEM_MODULES)


def apply(wd: WordDoc, op: str, target: dict, params: dict) -> None:
    if op not in OPERATIONS:
        raise KeyError(f"unknown operation {op!r}")
    OPERATIONS[op](wd, target or {}, params or {})


__all__ = ["OPERATIONS", "SUBSYSTEM_MODULES", "apply", "operation", "set_locus", "runs_for", "paragraphs_for"]
