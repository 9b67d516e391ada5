"""The ``null`` agent: returns the input unchanged (a lower bound: it must fail every case)."""
from __future__ import annotations

import sys

from benchwright.wordeval.agents.common import main


def edit(input_docx: bytes, instruction: str, plan: dict | None) -> bytes:
    return input_docx


if __name__ == "__main__":
    sys.exit(main(edit, __doc__))
