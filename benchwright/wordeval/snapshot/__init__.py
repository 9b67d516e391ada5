"""WordEval snapshot extractor: a canonical, Word-object-model-like view of a .docx (the read side;
``ops/`` is the write side).

``extract_snapshot(bytes) -> Snapshot`` reads the package safely (bounded zip, hardened XML) and
records, per story (body, headers/footers per section, footnotes, endnotes, comments, text
boxes), every paragraph with

* display text (revision-aware "final" view; fields as placeholders, see ``wordeval.text``),
* its paragraph style name and *effective* paragraph properties after the cascade
  docDefaults -> table style -> numbering level -> paragraph style -> direct formatting,
* effective character properties per character range (run-length encoded over the text, so
  run boundaries do not matter), after docDefaults -> table style -> paragraph style ->
  character style -> direct formatting, with the toggle properties (bold, italic, caps, ...)
  XOR-ed across the style levels as Word does, hyperlinks as a character property,
* list membership and the computed list label (ListString),
* drawings (inline/floating, extent in EMU, alt text, wrap, position, image hash),

plus tables, sections (page setup, columns, line numbering, borders, header/footer links),
fields, notes, comments, revisions, bookmarks, styles (resolved), content controls, document
properties and a whitelist of settings.  Units stay in OOXML's native integers: twips,
half-points, eighths of a point, EMU.  Volatile parts (rsids, paraIds, drawing ids, proofErr,
lastRenderedPageBreak, dates, app.xml, hidden bookmarks' names) are never recorded.

A property the registry (``catalogue/properties.yaml``) names is decoded, at every level of the
cascade, by its location's accessor (``benchwright.wordeval.properties``), the one the operations
write it with; what the cascade then computes (toggles, inheritance, theme fonts, style names) is
the snapshot's own.

``flatten(snapshot, alignment)`` turns it into ``{key: value}`` with keys such as
``body/P12/para.ind.left`` or ``sections/S1/pgMar.top`` where the indices are the *reference*
document's, after aligning by content (``align_snapshots``).

The package follows a record from the part to the flat key: ``cascade`` (property containers,
styles, theme fonts, numbering), ``records`` (``Para``, ``Snapshot``), ``extraction`` with
``paragraphs``, ``drawings`` and ``parts`` (what each story, drawing and document part records),
``alignment`` (pairing by content) and ``flattening`` (``{key: value}``).
"""
from benchwright.wordeval.snapshot.alignment import PAIR_WINDOW, Alignment, align, align_snapshots, identity_alignment
from benchwright.wordeval.snapshot.cascade import format_number
from benchwright.wordeval.snapshot.extraction import extract_snapshot
from benchwright.wordeval.snapshot.flattening import flatten, snapshot_dict
from benchwright.wordeval.snapshot.records import Para, Snapshot
from benchwright.wordeval.text import FIELD_BEGIN, FIELD_END

__all__ = ["extract_snapshot", "Snapshot", "Para", "align", "align_snapshots", "flatten", "snapshot_dict",
           "identity_alignment", "format_number", "FIELD_BEGIN", "FIELD_END", "Alignment", "PAIR_WINDOW"]
