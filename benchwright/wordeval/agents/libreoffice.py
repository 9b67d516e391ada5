"""The ``libreoffice`` agent: opens the input with LibreOffice and saves it again as .docx, unchanged
(it must fail every case; the preservation check shows what the re-save alone changes)."""
from __future__ import annotations

import sys
from pathlib import Path

from benchwright.wordeval.agents.common import main


def resave(docs: dict[str, bytes]) -> dict[str, bytes | None]:
    """Many inputs re-saved in one soffice call (starting soffice dominates the cost)."""
    from benchwright.formats.ooxml.libreoffice import available, resave_docx

    if not available():
        raise RuntimeError("soffice (LibreOffice) is not installed")
    return resave_docx(docs)


def edit(input_docx: bytes, instruction: str, plan: dict | None) -> bytes:
    out = resave({"input": input_docx})["input"]
    if out is None:
        raise RuntimeError("LibreOffice could not re-save the input")
    return out


def cli(argv=None) -> int:
    """The agent's command line (``argv`` without the program): its exit status."""
    return main(edit, __doc__, argv=argv, prog=Path(__file__).name)


if __name__ == "__main__":
    sys.exit(cli())
