"""Template's baselines, scored by its evaluator on a build: the training split's majority class, and a
word-count classifier (multinomial naive Bayes with add-one smoothing over the training texts' words).

    benchwright baseline template --data OUT/template [--split test] [--out RESULT.json] [--predictions DIR]

SLOT: baselines anyone can run on a CPU in seconds, read through the loaders, scored by the evaluator.
"""
from __future__ import annotations

import json
import math
import sys
from collections import Counter
from typing import Callable
from pathlib import Path

from benchwright.arguments import ArgumentParser, parser_of
from benchwright.evaluation.template import score
from benchwright.loaders.template import load
from benchwright.schemas.template import LABELS
from benchwright.summary import Table, show

__all__ = ["majority", "word_counts", "run_baselines", "run_cli"]


def _texts(build, split: str) -> list[tuple[str, str, str]]:
    """(id, text, label name) of a split."""
    t = load(build, split=split, columns=["id", "text", "label"])
    return [(i, text, LABELS[label]) for i, text, label in
            zip(t.column("id").to_pylist(), t.column("text").to_pylist(), t.column("label").to_pylist())]


def majority(train: list[tuple]) -> Callable[[str], str]:
    label = sorted(Counter(r[2] for r in train).items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    return lambda text: label


def word_counts(train: list[tuple]) -> Callable[[str], str]:
    """The label whose words explain the text best: log P(label) + sum of log P(word | label)."""
    words = {label: Counter() for label in LABELS}
    for _, text, label in train:
        words[label].update(text.lower().split())
    vocabulary = len(set().union(*words.values())) + 1
    prior = Counter(r[2] for r in train)

    def predict(text: str) -> str:
        def log_odds(label):
            total = sum(words[label].values()) + vocabulary
            return math.log(prior[label] + 1) + sum(math.log((words[label][w] + 1) / total) for w in text.lower().split())
        return max(LABELS, key=lambda label: (log_odds(label), label))

    return predict


BASELINES = {"majority": majority, "word_counts": word_counts}


def run_baselines(build, split: str = "test") -> dict:
    """{baseline: (its evaluator result, its predictions {id: label})} on ``split``, trained on train."""
    train, rows = _texts(build, "train"), _texts(build, split)
    gold = {i: label for i, _, label in rows}
    out = {}
    for name, make in BASELINES.items():
        predict = make(train)
        predicted = {i: predict(text) for i, text, _ in rows}
        out[name] = (score(predicted, gold, LABELS), predicted)
    return out


def cli_parser() -> ArgumentParser:
    ap = ArgumentParser(prog="benchwright baseline template", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="a built template folder (local)")
    ap.add_argument("--split", default="test", help="the split scored (default %(default)s); trained on train")
    ap.add_argument("--out", help="write the full result here (JSON)")
    ap.add_argument("--predictions", help="write each baseline's predictions here, <baseline>.jsonl (the "
                                          "evaluator's input)")
    return ap


@parser_of(cli_parser)
def run_cli(argv=None) -> int:
    ns = cli_parser().parse_args(argv)
    results = run_baselines(ns.data, ns.split)
    if ns.predictions:
        Path(ns.predictions).mkdir(parents=True, exist_ok=True)
        for name, (_, predicted) in results.items():
            (Path(ns.predictions) / f"{name}.jsonl").write_text(
                "".join(json.dumps({"id": i, "label": p}) + "\n" for i, p in predicted.items()), encoding="utf-8")
    if ns.out:
        Path(ns.out).write_text(json.dumps({n: r for n, (r, _) in results.items()}, indent=2, sort_keys=True) + "\n",
                                encoding="utf-8")
    show([Table(f"Template baselines, split {ns.split} (trained on train)", ["baseline", "accuracy", "macro F1"],
                [[n, r["accuracy"], r["macro_f1"]] for n, (r, _) in results.items()])])
    return 0


if __name__ == "__main__":
    sys.exit(run_cli())
