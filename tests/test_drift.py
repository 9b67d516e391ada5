"""Drift against the previous build: the metrics, the record a build keeps, the card and report, and
``--drift-blocking`` failing a build (publishing nothing). The rows flagged run on every registered dataset's
tiny build; the planted change (a video added, a box moved), its card and report on WildBox's; the blocking build
(a shared mechanism) on the template's, the cheapest, with three train labels flipped. A rebuild of the same input over its build (drift carried, every byte the same) is a contract test
(``tests/test_contract.py``)."""
from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import wasserstein_distance

from benchwright import registry
from benchwright.cli import main as cli_main
from benchwright.drift import DRIFT, compare, js_distance, normalised_wasserstein, spread, thresholds
from benchwright.statistics import QUANTILE_LEVELS, _numeric
from tests.quality_builds import planted_wildbox, tiny_build


def _tree(root) -> dict:
    """sha256 of every file but the manifest (it records the run's timings)."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.relative_to(root).as_posix() != "_build/manifest.json"}


def test_js_distance_is_scipys_over_the_union_of_values():
    p, q = {"a": 30, "b": 10}, {"b": 10, "c": 20}
    assert js_distance(p, q) == pytest.approx(jensenshannon([30, 10, 0], [0, 10, 20], base=2))
    assert js_distance(p, p) == 0.0
    assert js_distance({"a": 1}, {"b": 1}) == pytest.approx(1.0)


def test_wasserstein_from_quantiles_approximates_the_samples():
    rng = np.random.default_rng(0)
    old, new = rng.normal(0, 1, 20_000), rng.normal(0.5, 1.2, 20_000)
    a, b = _numeric(old), _numeric(new)
    exact = wasserstein_distance(old, new) / spread(a, QUANTILE_LEVELS)
    assert normalised_wasserstein(a, b, QUANTILE_LEVELS) == pytest.approx(exact, rel=0.1)
    assert normalised_wasserstein(a, a, QUANTILE_LEVELS) == 0.0
    # the figure does not depend on the order of the values
    assert _numeric(old[::-1]) == a


@pytest.mark.parametrize("name", registry.names())
def test_drift_flags_a_config_that_lost_half_its_rows(name, tmp_path_factory, tmp_path):
    """Every dataset's tiny build against a copy where one split (its first config's first split of 4 rows or
    more) keeps the first half of each shard's rows: that split's row count is flagged (exceeded, |new - old| /
    old), no other; a build against itself drifts nowhere."""
    import pyarrow.parquet as pq

    from benchwright.statistics import STATISTICS, compute_statistics
    from benchwright.writer import write_parquet

    dataset = registry.get(name)
    _, root = tiny_build(name, tmp_path_factory)
    stats = json.loads((root / STATISTICS).read_text())
    assert not [c for c in compare(stats, stats, thresholds(dataset)) if c["exceeded"]]
    config, split = next((config, split) for config in dataset.configs
                         for split, entry in stats["configs"][config]["splits"].items() if entry["rows"] >= 4)
    copy = tmp_path / name
    shutil.copytree(root, copy)
    for shard in sorted((copy / config).glob(f"{split}-*.parquet")):
        table = pq.read_table(shard)
        write_parquet(table.slice(0, table.num_rows // 2), str(shard))
    before = stats["configs"][config]["splits"][split]["rows"]
    after = sum(pq.ParquetFile(f).metadata.num_rows for f in (copy / config).glob(f"{split}-*.parquet"))
    rows = {c["target"]: c for c in compare(stats, compute_statistics(dataset, copy), thresholds(dataset))
            if c["metric"] == "rows"}
    assert after <= before / 2 and rows[f"{config}/{split}"]["exceeded"]
    assert rows[f"{config}/{split}"]["value"] == pytest.approx((before - after) / before, abs=1e-6)
    assert [t for t, c in rows.items() if c["exceeded"]] == [f"{config}/{split}"]


def test_the_planted_build_records_its_drift_on_the_card_and_in_the_report(tmp_path_factory):
    p = planted_wildbox(tmp_path_factory)
    drift = json.loads((p["new"] / DRIFT).read_text())
    assert drift["previous"]["input_sha256"] == json.loads((p["old"] / "_build/manifest.json").read_text())["input"]["sha256"]
    by_target = {(c["target"], c["metric"]): c for c in drift["comparisons"]}
    boxes = by_target[("boxes/train", "rows")]
    assert boxes["value"] == pytest.approx(abs(boxes["current"] - boxes["previous"]) / boxes["previous"], abs=1e-6)
    assert boxes["current"] > boxes["previous"]
    species = by_target[("boxes/train/species", "js")]
    assert species["limit"] == 0.05 and species["exceeded"] and not species["blocking"]
    assert by_target[("boxes/validation/species", "js")]["value"] == 0.0  # the new video is in train
    assert by_target[("boxes/train/video_id", "js")]["limit"] == 1.0       # ids are not a distribution
    # the comparison equals one made from the two builds' statistics directly
    old_stats = json.loads((p["old"] / "_build/statistics/statistics.json").read_text())
    new_stats = json.loads((p["new"] / "_build/statistics/statistics.json").read_text())
    assert compare(old_stats, new_stats, thresholds(registry.get("wildbox"))) == drift["comparisons"]
    card = (p["new"] / "README.md").read_text()
    assert "### Drift against the previous build" in card and "`boxes/train/species`" in card
    report = json.loads((p["new"] / "_build/validation/report.json").read_text())
    assert report["passed"] and report["warnings"] >= 1
    flagged = [r for r in report["results"] if r["check"] == "drift: boxes/train/species js"]
    assert flagged and flagged[0]["ok"] and flagged[0]["warning"]


def test_drift_blocking_fails_the_build_and_publishes_nothing(tmp_path_factory, tmp_path, capsys):
    source, built = tiny_build("template", tmp_path_factory)
    planted = tmp_path / "raw"
    shutil.copytree(source, planted)
    # three train records of the last source file turn positive: the train labels' JS distance passes its 0.1
    # limit; the class shares stay inside their declared bounds, so drift alone stops the build
    last = sorted(planted.glob("*.jsonl"))[-1]
    records = [json.loads(line) for line in last.read_text(encoding="utf-8").splitlines()]
    flipped = [r for r in records if r["split"] == "train" and r["label"] == "negative"][:3]
    for r in flipped:
        r["label"] = "positive"
    last.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert len(flipped) == 3
    out = tmp_path / "out"
    shutil.copytree(built, out / "template")
    before = _tree(out / "template")
    assert cli_main(["build", "template", "--source", str(planted), "--out", str(out),
                     "--drift-blocking", "records/*/id,records/*/label"]) == 2
    assert "drift: records/train/label js" in capsys.readouterr().err
    assert _tree(out / "template") == before
