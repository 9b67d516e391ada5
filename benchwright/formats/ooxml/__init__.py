"""OOXML layer: safe reading, deterministic writing, schema order, validation and gates.

- :mod:`.safety`   bounded, hardened reading of untrusted .docx bytes (``read_members``, ``parse_xml``,
  ``scan_flags``; raises ``UnsafeDocxError``, a ``RecordError``)
- :mod:`.package`  ``Package`` (members, relationships, content types) and deterministic writing
  (``write_zip``, ``normalize_docx``)
- :mod:`.schema_order`  child order from the XSDs (``insert_child``, ``get_or_add``)
- :mod:`.accessors`  one ``Locus`` per location: find, decode, write in schema order
- :mod:`.elements`  new elements made as python-docx makes them (``w_el``, ``border_el``), ``detach``, ``unwrap``
- the markup python-docx's proxies lack, which WordEval's operations call (the XML stays here, as python-docx
  keeps its own in ``docx.oxml``): :mod:`.run` (``make_run``, ``split_run``, run edits), :mod:`.paragraph`
  (add after, remove, line spacing, borders), :mod:`.table`, :mod:`.section`, :mod:`.story` (a header's or
  footer's paragraphs), :mod:`.styles`, :mod:`.numbering`, :mod:`.fields` (complex and simple fields, content
  controls), :mod:`.toc`, :mod:`.notes`, :mod:`.comments` (and commentsExtended), :mod:`.revisions` (tracked
  changes), :mod:`.hyperlinks` (and bookmarks), :mod:`.drawing` (pictures, shapes, text boxes), :mod:`.docprops`
  (custom properties, document variables)
- :mod:`.xsd`      XSD validation with a local resolver and markup-compatibility processing
- :mod:`.checks`   id / relationship / content-type / field-balance / content checks
- :mod:`.gate`     ``gate_docx(bytes) -> list[str]``
- :mod:`.libreoffice`  ``libreoffice_gate`` (batch), ``resave_docx``
"""
from benchwright.formats.ooxml.gate import gate_docx
from benchwright.formats.ooxml.package import Package, normalize_docx, write_zip
from benchwright.formats.ooxml.safety import DEFAULT_LIMITS, Limits, UnsafeDocxError, parse_xml, read_members, scan_flags

__all__ = ["gate_docx", "Package", "normalize_docx", "write_zip", "DEFAULT_LIMITS", "Limits", "UnsafeDocxError",
           "parse_xml", "read_members", "scan_flags"]
