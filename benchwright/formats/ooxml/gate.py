"""Gates every generated .docx passes before it is published (a failing file is quarantined).

``gate_docx(bytes) -> list[str]`` runs, in order: safe reading (limits, names, DOCTYPE), active
content flags, a python-docx reload, XSD validation of the WordprocessingML parts, and the id /
relationship / content-type / field-balance / content checks. LibreOffice is separate and
batchable: :func:`benchwright.formats.ooxml.libreoffice.libreoffice_gate`.
"""
from __future__ import annotations

import io

import docx
from docx.oxml.simpletypes import ST_Merge
from docx.table import _Cell

from benchwright.formats.ooxml.checks import check_package
from benchwright.formats.ooxml.package import Package
from benchwright.formats.ooxml.safety import UnsafeDocxError, blocking_flags
from benchwright.formats.ooxml.xsd import validate_package


def _walk_table(table) -> None:
    """Read every cell of a python-docx ``Table`` through python-docx's oxml layer, each ``w:tc``
    once. A vertically merged continuation shows the cell above it at the same grid offset, as
    ``row.cells`` finds it (and fails the same way when there is none), but from the previous row's
    offsets: ``row.cells`` re-walks the rows above for every continuation, which is quadratic in
    the merge's length (4.3 s for a 300-row merge)."""
    above: dict[int, _Cell] = {}
    for i, tr in enumerate(table._tbl.tr_lst):
        row: dict[int, _Cell] = {}
        offset = tr.grid_before
        for tc in tr.tc_lst:
            if tc.vMerge == ST_Merge.CONTINUE:
                if i == 0:
                    raise ValueError("no tr above topmost tr in w:tbl")
                if offset not in above:
                    raise ValueError(f"no `tc` element at grid_offset={offset}")
                cell = above[offset]
            else:
                cell = _Cell(tc, table)
                _ = cell.text
            row[offset] = cell
            offset += tc.grid_span
        above = row


def python_docx_reload(data: bytes) -> list[str]:
    """python-docx loads the document and walks it: paragraphs, every table cell, sections,
    headers, core properties, styles ([] when it can; else the exception, as a problem)."""
    try:
        d = docx.Document(io.BytesIO(data))
        for p in d.paragraphs:
            _ = p.text
        for t in d.tables:
            _walk_table(t)
        for s in d.sections:
            _ = s.page_width, s.header.is_linked_to_previous
        _ = d.core_properties.title, d.styles
    except Exception as exc:  # noqa: BLE001 - any failure is the finding
        return [f"python-docx: {type(exc).__name__}: {exc}"]
    return []


def gate_docx(data: bytes, locator: str = "<docx>", *, xsd: bool = True) -> list[str]:
    """Problems that make this file unfit to publish ([] = passes every non-LibreOffice gate)."""
    try:
        pkg = Package.from_bytes(data, locator)
        pkg.main_part()
    except UnsafeDocxError as exc:
        return [f"unsafe: {exc.reason}"]
    problems: list[str] = []
    problems += [f"active content: {f}" for f in blocking_flags(pkg.flags())]
    problems += python_docx_reload(data)
    try:
        if xsd:
            problems += validate_package(pkg)
        problems += check_package(pkg)
    except UnsafeDocxError as exc:
        problems.append(f"unsafe: {exc.reason}")
    return problems


__all__ = ["gate_docx", "python_docx_reload"]
