"""WordEval: the datasets.Features of the ``atomic`` and ``compositional`` configs (single source of truth).

Column names are the ones :func:`benchwright.wordeval.cases.build_case` returns; the .docx files are
stored as bytes, the oracle as a JSON string (see ``evaluation/wordeval.py`` for its use). Every case is
in the ``test`` split; ``lite`` repeats the ``test`` rows of WordEval-Lite (``Dataset.subset_splits``).
"""
from __future__ import annotations

from datasets import Features, List, Value

SUBSYSTEMS = (
    "character_formatting", "paragraph_formatting", "styles", "lists_numbering", "tables", "sections_page_setup",
    "headers_footers", "fields", "footnotes_endnotes", "comments", "tracked_changes", "hyperlinks_bookmarks",
    "images_shapes", "document_properties", "tables_of_contents",
)
SPLITS = ("test", "lite")
SUBSET_SPLITS = {"lite": "test"}

_COMMON = {
    "case_id": Value("string"),
    "instruction": Value("string"),
    "input_docx": Value("binary"),
    "reference_docx": Value("binary"),
    "oracle": Value("string"),            # JSON: targets (anchors + keys), allowed side effects, tolerance
    "command": Value("string"),           # COM-style Word command, e.g. "Font.Bold"; "a ; b" for compositions
    "subsystem": Value("string"),         # one of SUBSYSTEMS; "a+b" for compositions spanning several
    "com_object": Value("string"),
    "properties": List(Value("string")),  # "Object.Property" pairs the case edits
    "unit_id": Value("string"),
    "seed": Value("int64"),
    "base_document": Value("string"),
}

ATOMIC = Features(dict(_COMMON))
COMPOSITIONAL = Features({
    **_COMMON,
    "template": Value("string"),
    "atomic_case_ids": List(Value("string")),
})
CONFIGS = {"atomic": ATOMIC, "compositional": COMPOSITIONAL}
ID_COLUMNS = {"atomic": "case_id", "compositional": "case_id"}
