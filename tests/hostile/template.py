"""Template's hostile corpus (``tests/hostile/__init__.py`` says what a hook declares): the tiny synthetic source
with one more file of damaged JSON Lines records, a source refused whole, and the evaluator's prediction files.

SLOT: one case per way your formats can be wrong; each says the quarantine row it must produce (locator prefix,
reason substring, unit) or that the record is kept unharmed.
"""
from __future__ import annotations

import json
from pathlib import Path

from tests.hostile import DEEP, KEPT, QUARANTINED, REFUSED, TOO_DEEP, Case, Corpus, huge_integer, write_file

PEAK_LIMIT_MB = 600  # measured: 288 MB in a fresh process (its imports included); an expanded bomb passes it

NOT_APPLICABLE = {
    "decompression bombs": "reads no compressed or image file",
    "XML entity expansion and DOCTYPEs": "reads no XML",
    "YAML alias bombs": "reads no YAML",
    "path traversal and symlink escapes in records": "no record names a file",
    "cyclic dependency graphs": "records have no references between them",
}

HOSTILE_FILE = "zz-hostile.jsonl"  # read after the synthetic files: its duplicate id repeats theirs


def _good(n: int, **change) -> dict:
    return {"id": f"h{n:03d}", "text": "a sturdy box that works", "label": "positive", "split": "train", **change}


def corpus(work: Path, fixtures: Path) -> Corpus:
    from benchwright.template.synth import write_source

    root = work / "raw"
    write_source(root, scale="tiny", seed=0)
    lines: list[str | bytes] = []
    cases: list[Case] = []

    def add(name: str, line: str | bytes, reason: str = "", outcome: str = QUARANTINED):
        lines.append(line)
        cases.append(Case("template", "JSON Lines", name, f"{HOSTILE_FILE}:{len(lines)}", reason, "record", outcome))

    add("not JSON", "{id: 1", "not JSON")
    add("a list, not an object", "[1, 2]", "a record is a JSON object")
    add("100,000-deep nesting", DEEP, TOO_DEEP)
    add("a number past Python's digit limit", '{"id": ' + huge_integer() + "}", "digits")
    add("a repeated key", '{"id": "h1", "id": "h2", "text": "x", "label": "positive", "split": "train"}',
        "duplicate key 'id'")
    add("a missing field", json.dumps({k: v for k, v in _good(3).items() if k != "label"}), "field label is missing")
    add("a misspelt field", json.dumps({**_good(4), "lable": "positive"}), "unknown field 'lable'")
    add("a number for a text", json.dumps(_good(5, text=5)), "'text' must be a non-empty string")
    add("NaN for a label", json.dumps(_good(6, label=float("nan"))), "'label' must be a non-empty string")
    add("an unknown label", json.dumps(_good(7, label="neutral")), "'label' 'neutral' is not one of")
    add("an unknown split", json.dumps(_good(8, split="dev")), "'split' 'dev' is not one of")
    add("an id of 300 bytes", json.dumps(_good(9, id="x" * 300)), "longer than 256 bytes")
    add("a byte that is not UTF-8", b'{"id": "h10", "text": "caf\xe9"}', "not UTF-8: byte 0xe9")
    add("a repeated id", json.dumps(_good(11, id="r000000")), "repeats the record at records-00000.jsonl:1")
    add("fewer words than min_words (filtered, not quarantined)", json.dumps(_good(12, text="   ")), "", KEPT)
    add("a lone surrogate in the text (repaired to U+FFFD)", json.dumps(_good(13, text="caf\udcff ok")), "", KEPT)
    add("U+2028, quotes, a leading dash and non-ASCII in the id",
        json.dumps(_good(14, id='-h\u2028"é"'), ensure_ascii=False), "", KEPT)
    data = b"\n".join(line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass") for line in lines)
    write_file(root / HOSTILE_FILE, data + b"\n")
    return Corpus(root, cases)


def refusals(root: Path) -> list[tuple[Case, object]]:
    """A source with no JSON Lines file, and a path that is no folder: refused whole, naming it."""
    from tests.builds import build_dataset

    empty = root / "empty"
    write_file(empty / "notes.txt", "no records here\n")
    missing = root / "missing"
    return [(Case("template", "source folder", "no .jsonl file", str(empty), "no .jsonl file", outcome=REFUSED),
             lambda out: build_dataset("template", empty, out)),
            (Case("template", "source folder", "not a folder", str(missing), "not a folder", outcome=REFUSED),
             lambda out: build_dataset("template", missing, out))]


def evaluator_cases(root: Path, fixtures: Path) -> list[tuple[Case, object]]:
    """Prediction files the evaluator refuses, naming the file and line."""
    from benchwright.evaluation.template import read_predictions, score

    labels = ("negative", "positive")
    cases = []
    for name, text, reason in (
            ("not JSON", '{"id": "a", "label": \n', "not JSON"),
            ("a repeated key", '{"id": "a", "label": "positive", "label": "negative"}', "duplicate key 'label'"),
            ("an unknown label", '{"id": "a", "label": "maybe"}', "is not one of negative, positive"),
            ("an id predicted twice", '{"id": "a", "label": "positive"}\n{"id": "a", "label": "negative"}',
             "a second prediction for id 'a'"),
            ("a number for an id", '{"id": 7, "label": "positive"}', "'id' must be a non-empty string"),
            ("100,000-deep nesting", DEEP, TOO_DEEP)):
        path = write_file(root / f"{len(cases):02d}.jsonl", text + "\n")
        line = 2 if name == "an id predicted twice" else 1
        cases.append((Case("template", "predictions JSON Lines (evaluator input)", name, f"{path}:{line}", reason,
                           outcome=REFUSED), lambda p=path: read_predictions(str(p), labels)))
    unknown = write_file(root / "unknown.jsonl", '{"id": "zz", "label": "positive"}\n')
    cases.append((Case("template", "predictions JSON Lines (evaluator input)", "an id the build does not hold",
                       "id 'zz'", "not in the split", outcome=REFUSED),
                  lambda: score(read_predictions(str(unknown), labels), {"a": "positive"}, labels)))
    return cases


def check_kept_records_read_back(build, tmp_path, fixtures):
    """The kept hostile records are published as they were read: the repaired text, the id's characters, and the
    text below min_words in _build/filtered/ (not in the quarantine)."""
    from benchwright.loaders.template import load

    rows = {r["id"]: r for r in load(build.built, columns=["id", "text"]).to_pylist()}
    assert rows["h013"]["text"] == "caf\ufffd ok" and '-h\u2028"é"' in rows
    filtered = [json.loads(line) for f in sorted((build.built / "_build" / "filtered").glob("*.jsonl"))
                for line in f.read_text(encoding="utf-8").splitlines()]
    assert [r["locator"] for r in filtered] == [f"{HOSTILE_FILE}:15"]
