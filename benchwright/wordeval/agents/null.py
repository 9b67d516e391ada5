"""The ``null`` agent: returns the input unchanged (a lower bound: it must fail every case)."""
from __future__ import annotations

import sys
from pathlib import Path

from benchwright.wordeval.agents.common import main


def edit(input_docx: bytes, instruction: str, plan: dict | None) -> bytes:
    return input_docx


def cli(argv=None) -> int:
    """The agent's command line (``argv`` without the program): its exit status."""
    return main(edit, __doc__, argv=argv, prog=Path(__file__).name)


if __name__ == "__main__":
    sys.exit(cli())
