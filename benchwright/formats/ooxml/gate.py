"""Gates every generated .docx passes before it is published (a failing file is quarantined).

``gate_docx(bytes) -> list[str]`` runs, in order: safe reading (limits, names, DOCTYPE), active
content flags, a python-docx reload, XSD validation of the WordprocessingML parts, and the id /
relationship / content-type / field-balance / content checks. LibreOffice is separate and
batchable: :func:`benchwright.formats.ooxml.libreoffice.libreoffice_gate`.
"""
from __future__ import annotations

import io

from benchwright.formats.ooxml.checks import check_package
from benchwright.formats.ooxml.package import Package
from benchwright.formats.ooxml.safety import UnsafeDocxError, blocking_flags
from benchwright.formats.ooxml.xsd import validate_package


def python_docx_reload(data: bytes) -> list[str]:
    import docx

    try:
        d = docx.Document(io.BytesIO(data))
        for p in d.paragraphs:
            _ = p.text
        for t in d.tables:
            for row in t.rows:
                for cell in row.cells:
                    _ = cell.text
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
