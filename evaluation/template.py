"""Template's evaluator: predicted labels scored against a split of a build (accuracy, macro F1).

    benchwright evaluate template --pred PRED.jsonl --data OUT/template [--split test] [--out METRICS.json]

**Predictions**: JSON Lines, one object per record: ``id`` and ``label`` (one of the build's label names). A
line is read strictly (``benchwright.strict_json``): a line that is not JSON, a repeated key, a missing field, a
label the build does not have, an id the split does not hold or an id predicted twice is a ``RecordError``
naming the file and line. A record of the split with no prediction is scored as wrong and counted as missing:
leaving out a hard record never helps.

SLOT: your metrics, the format of a prediction, and how the build says what is expected.
"""
from __future__ import annotations

import json
import sys

import fsspec

from benchwright import fields, strict_json
from benchwright.arguments import ArgumentParser, parser_of
from benchwright.errors import RecordError, SourceError
from benchwright.summary import Table, show
from benchwright.utf8 import decode

__all__ = ["read_predictions", "score", "run_cli"]


def read_predictions(url: str, labels: tuple[str, ...]) -> dict[str, str]:
    """{id: label} of a JSON Lines file (any fsspec URL)."""
    try:
        with fsspec.open(url, "rb") as f:
            data = f.read()
    except OSError as err:
        raise SourceError(f"{url}: cannot read the predictions: {err}") from None
    out, first = {}, {}
    for n, line in strict_json.json_lines(decode(data, url)):
        locator = f"{url}:{n}"
        try:
            row = strict_json.loads(line)
        except ValueError as err:  # malformed, a repeated key, too deep, a number past the digit limit
            raise RecordError(locator, f"not JSON: {getattr(err, 'msg', err)}") from None
        if not isinstance(row, dict):
            raise RecordError(locator, "a prediction is a JSON object with id and label")
        record_id = fields.string(row.get("id"), "id", locator)
        label = fields.string(row.get("label"), "label", locator)
        if label not in labels:
            raise RecordError(locator, f"label {fields.clip(label)} is not one of {', '.join(labels)}")
        if record_id in out:
            raise RecordError(locator, f"a second prediction for id {fields.clip(record_id)} (first at "
                                       f"{first[record_id]})")
        out[record_id], first[record_id] = label, locator
    if not out:
        raise SourceError(f"{url}: no predictions")
    return out


def score(predicted: dict[str, str], gold: dict[str, str], labels: tuple[str, ...]) -> dict:
    """Accuracy and macro F1 of ``predicted`` ({id: label}) against ``gold`` (every id of the split); an id
    ``gold`` lacks is a ``RecordError``, a missing prediction is wrong."""
    unknown = sorted(set(predicted) - set(gold))
    if unknown:
        raise RecordError(f"id {fields.clip(unknown[0])}", f"not in the split ({len(unknown):,} ids are not)")
    pairs = [(label, predicted.get(i)) for i, label in gold.items()]
    f1 = {}
    for label in labels:
        tp = sum(g == label and p == label for g, p in pairs)
        fp = sum(g != label and p == label for g, p in pairs)
        fn = sum(g == label and p != label for g, p in pairs)
        f1[label] = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
    present = [v for v in f1.values() if v is not None]
    return {"records": len(gold), "answered": len(predicted), "missing": len(gold) - len(predicted),
            "accuracy": sum(g == p for g, p in pairs) / len(pairs) if pairs else None,
            "macro_f1": sum(present) / len(present) if present else None, "f1": f1}


def cli_parser() -> ArgumentParser:
    ap = ArgumentParser(prog="benchwright evaluate template", description=__doc__.split("\n\n")[0])
    ap.add_argument("--pred", required=True, help="predictions, JSON Lines: id, label")
    ap.add_argument("--data", required=True, help="a built template folder (local): the labels to score against")
    ap.add_argument("--split", default="test", help="the split the predictions answer (default %(default)s)")
    ap.add_argument("--out", help="write the full result here (JSON)")
    return ap


@parser_of(cli_parser)
def run_cli(argv=None) -> int:
    from benchwright.loaders.template import labels as gold_labels
    from benchwright.schemas.template import LABELS

    ns = cli_parser().parse_args(argv)
    result = score(read_predictions(ns.pred, LABELS), gold_labels(ns.data, ns.split), LABELS)
    if ns.out:
        with fsspec.open(ns.out, "wt", encoding="utf-8") as f:
            f.write(json.dumps(result, indent=2, sort_keys=True) + "\n")
    show([Table(f"Template, split {ns.split}", ["accuracy", "macro F1", "records", "missing"],
                [[result["accuracy"], result["macro_f1"], result["records"], result["missing"]]])],
         [f"full result: {ns.out}" if ns.out else "full result (F1 per label): add --out FILE"])
    return 0


if __name__ == "__main__":
    sys.exit(run_cli())
