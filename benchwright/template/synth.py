"""Template's synthetic source (``benchwright synth template``): JSON Lines files in the raw format
``sources.py`` reads, so a build, the tests and the embedded default need no download.

SLOT: write your release's layout and formats here, small and deterministic: ``tiny`` for the tests (seconds),
``default`` for the embedded default (what ``benchwright build template`` reads with no ``--source``), ``full``
at the release's size. The same scale and seed give byte-identical files.

Each text is a few words drawn from a neutral list and from the words of its label, so a label can be learnt
from the words (``baselines/template.py``'s word-count baseline does better than the majority class).
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Callable

from benchwright.files import synthetic_source_folder

SCALES = {"tiny": 24, "default": 2_000, "full": 100_000}   # records
RECORDS_PER_FILE = 10_000                                   # lines per file at most
TEST_SHARE = 0.25
WORDS = {
    "neutral": ("the", "a", "delivery", "box", "colour", "size", "price", "store", "day", "order", "item", "week"),
    "negative": ("broken", "late", "poor", "refund", "cracked", "missing", "slow", "worse"),
    "positive": ("great", "fast", "sturdy", "lovely", "perfect", "bright", "works", "better"),
}


def record(n: int, rng: random.Random) -> dict:
    label = rng.choice(("negative", "positive"))
    own = rng.randint(1, 3)
    words = rng.choices(WORDS["neutral"], k=rng.randint(3, 9)) + rng.choices(WORDS[label], k=own)
    rng.shuffle(words)
    return {"id": f"r{n:06d}", "text": " ".join(words), "label": label,
            "split": "test" if rng.random() < TEST_SHARE else "train"}


def write_source(out_dir: str | Path, scale: str = "default", seed: int = 0,
                 progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Write ``records-NNNNN.jsonl`` files under ``out_dir`` (absent or empty); returns a summary."""
    out = synthetic_source_folder(out_dir, scale, SCALES)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    total = SCALES[scale]
    per_file = min(RECORDS_PER_FILE, max(1, total // 2))  # two files at least: a source is a folder of them
    files = 0
    for start in range(0, total, per_file):
        lines = [json.dumps(record(n, rng), ensure_ascii=False) for n in range(start, min(total, start + per_file))]
        (out / f"records-{files:05d}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        files += 1
        if progress:
            progress(min(total, start + per_file), total, "records")
    return {"scale": scale, "records": total, "files": files, "out": str(out)}
