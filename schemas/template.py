"""Template: the datasets.Features of its one config, ``records`` (the single source of truth of its schema).

SLOT: your configs. Each config a build writes is a ``datasets.Features`` here; the pipeline, the writer, the
checks derived from the declaration, the card's YAML and the Croissant file all read it from ``CONFIGS``. Columns
are named as the stage functions' records name them (``benchwright/template/stages.py``). A ClassLabel column may
be given as a name in a record: the writer stores its index.
"""
from __future__ import annotations

from datasets import ClassLabel, Features, Value

LABELS = ("negative", "positive")   # SLOT: the classes, in the order their indices are stored
SPLITS = ("train", "test")          # SLOT: every split a build writes, in card order

RECORDS = Features({
    "id": Value("string"),          # unique and non-null (ID_COLUMNS): its stable hash picks the shard
    "text": Value("string"),
    "label": ClassLabel(names=list(LABELS)),
    "num_words": Value("int32"),    # derived by the pipeline (stages.py), not read from the source
})
CONFIGS = {"records": RECORDS}      # SLOT: config -> Features
ID_COLUMNS = {"records": "id"}      # SLOT: config -> its id column
# SUBSET_SPLITS = {"lite": "test"}  # SLOT (optional): a split whose rows repeat another's (WordEval's lite)
