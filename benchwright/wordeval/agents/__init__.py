"""WordEval's shipped baseline agents, each a runnable command with the harness's agent interface:

    python -m benchwright.wordeval.agents.<name> INPUT.docx INSTRUCTION.txt OUTPUT.docx [--plan PLAN.json]

* ``null``: writes the input unchanged (fails every case: every edit is observable);
* ``replay``: applies the case's planned operation (passes every case);
* ``text-only``: makes the planned edit's textual change by rewriting runs, losing formatting and
  structure (fails where formatting or structure is the point);
* ``libreoffice``: opens and re-saves the input unchanged with LibreOffice (fails every case; what
  its re-save trips shows in the preservation check).

``replay`` and ``text-only`` bound the oracle from above, so they read the case's plan (unit or
template, seed, base document and the catalogue the build was made from) from ``--plan``; the
harness writes that file only for them. Any other command gets the input, the instruction and an
output path, nothing else.
"""
from __future__ import annotations

SHIPPED = {
    "null": "benchwright.wordeval.agents.null",
    "replay": "benchwright.wordeval.agents.replay",
    "text-only": "benchwright.wordeval.agents.text_only",
    "libreoffice": "benchwright.wordeval.agents.libreoffice",
}
NEEDS_PLAN = frozenset({"replay", "text-only"})
