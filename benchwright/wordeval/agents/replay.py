"""The ``replay`` agent: applies the case's planned operation (an upper bound: it must pass every case)."""
from __future__ import annotations

import sys
from pathlib import Path

from benchwright.wordeval.agents.common import main, planned_edit


def edit(input_docx: bytes, instruction: str, plan: dict | None) -> bytes:
    if plan is None:
        raise ValueError("replay needs the case's plan (--plan)")
    return planned_edit(input_docx, plan)


def cli(argv=None) -> int:
    """The agent's command line (``argv`` without the program): its exit status."""
    return main(edit, __doc__, needs_plan=True, argv=argv, prog=Path(__file__).name)


if __name__ == "__main__":
    sys.exit(cli())
