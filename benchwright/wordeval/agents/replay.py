"""The ``replay`` agent: applies the case's planned operation (an upper bound: it must pass every case)."""
from __future__ import annotations

import sys

from benchwright.wordeval.agents.common import main, planned_edit


def edit(input_docx: bytes, instruction: str, plan: dict | None) -> bytes:
    if plan is None:
        raise ValueError("replay needs the case's plan (--plan)")
    return planned_edit(input_docx, plan)


if __name__ == "__main__":
    sys.exit(main(edit, __doc__, needs_plan=True))
