"""WordEval-Lite: a quarter of the cases keeping the distribution over atomic/compositional, subsystems
and base documents (largest remainder level by level, seeded stable-hash choice), published as a
subset split of test, measured on the card as Workspace-Bench-Lite is, and run by the harness."""
from __future__ import annotations

import json
import math
import random
from collections import Counter

import pyarrow.parquet as pq
import pytest

from benchwright.baselines.wordeval import lite_rows, read_cases
from benchwright.cli import main as cli_main
from benchwright.subsets import allocate, total_variation
from benchwright.wordeval.lite import choose_lite, lite_size, lite_statistics

SUBSYSTEMS = ["character_formatting", "paragraph_formatting", "tables", "fields", "styles", "comments"]
BASES = ["report", "memo", "brief", "fx-a", "fx-b"]


def synthetic_cases(seed: int = 0) -> list[dict]:
    """Catalogue-shaped cases: uneven subsystems and base documents, few compositional cases."""
    rng = random.Random(seed)
    cases = []
    for config, n in (("atomic", 400), ("compositional", 37)):
        for i in range(n):
            sub = rng.choices(SUBSYSTEMS, weights=[30, 20, 15, 10, 5, 2])[0]
            if config == "compositional":
                sub = sub + "+" + rng.choice(SUBSYSTEMS)
            cases.append({"case_id": f"{config}-{i:04d}", "config": config, "subsystem": sub,
                          "base_document": rng.choices(BASES, weights=[5, 4, 3, 2, 1])[0]})
    return cases


def test_lite_is_a_quarter_allocated_by_config_then_subsystem():
    cases = synthetic_cases()
    lite = choose_lite(cases)
    assert len(lite) == lite_size(len(cases)) == math.ceil(len(cases) / 4)
    chosen = [c for c in cases if c["case_id"] in lite]
    configs = Counter(c["config"] for c in cases)
    assert Counter(c["config"] for c in chosen) == allocate(configs, len(lite))
    for config in configs:
        subs = Counter(c["subsystem"] for c in cases if c["config"] == config)
        seats = allocate(dict(configs), len(lite))[config]
        assert Counter(c["subsystem"] for c in chosen if c["config"] == config) == \
            {k: v for k, v in allocate(dict(subs), seats).items() if v}
    # Hamilton keeps every share within one seat of its quota: TVD <= strata / (2 x size)
    for attribute in ("config", "subsystem"):
        full, sub = [c[attribute] for c in cases], [c[attribute] for c in chosen]
        assert total_variation(full, sub) <= len(set(full)) / (2 * len(lite))
    assert total_variation([c["base_document"] for c in cases], [c["base_document"] for c in chosen]) < 0.05


def test_lite_depends_on_the_cases_not_their_order_and_is_seeded():
    cases = synthetic_cases()
    shuffled = cases[:]
    random.Random(7).shuffle(shuffled)
    assert choose_lite(shuffled) == choose_lite(cases)
    assert choose_lite(cases, seed=1) != choose_lite(cases) and len(choose_lite(cases, seed=1)) == len(choose_lite(cases))


def test_every_config_keeps_a_lite_split_and_ties_do_not_favour_a_name():
    one_comp = [{"case_id": f"a{i}", "config": "atomic", "subsystem": "tables", "base_document": "report"}
                for i in range(30)] + [{"case_id": "c0", "config": "compositional", "subsystem": "tables",
                                        "base_document": "report"}]
    assert "c0" in choose_lite(one_comp)
    # one case per (subsystem, base document): every base document ties in every subsystem
    grid = [{"case_id": f"{s}-{b}", "config": "atomic", "subsystem": s, "base_document": b}
            for s in [f"s{i}" for i in range(12)] for b in BASES]
    picked = Counter(cid.split("-", 1)[1] for cid in choose_lite(grid))
    assert len(picked) >= 4 and max(picked.values()) <= 5   # a name tie-break would pick "brief" 12 times


def test_lite_statistics_measure_distance_and_cost():
    full = [{"config": "atomic", "subsystem": "tables", "base_document": "report", "properties": ["Table.Style"],
             "bytes": 100, "checks": 3},
            {"config": "compositional", "subsystem": "tables+fields", "base_document": "memo",
             "properties": ["Table.Style", "Field.Code"], "bytes": 300, "checks": 4}]
    stats = lite_statistics(full, full[:1])
    assert stats["tvd"]["config (atomic / compositional)"] == 0.5
    assert stats["tvd"]["subsystem"] == pytest.approx(1 / 3, abs=1e-4)   # tables 2/3 vs 1
    assert stats["cost"]["cases"] == {"full": 2, "lite": 1, "reduction": 0.5}
    assert stats["cost"]["bytes (input + reference)"] == {"full": 400, "lite": 100, "reduction": 0.75}
    assert stats["cost"]["oracle checks"] == {"full": 7, "lite": 3, "reduction": round(1 - 3 / 7, 4)}


def test_the_build_publishes_lite_as_a_subset_split_of_test(wordeval_text_build):
    root = wordeval_text_build
    test = read_cases(root)
    lite = read_cases(root, split="lite")
    assert {c["config"] for c in lite} == {"atomic", "compositional"}
    test_ids, lite_ids = [c["case_id"] for c in test], [c["case_id"] for c in lite]
    assert len(set(lite_ids)) == len(lite_ids) and set(lite_ids) < set(test_ids)
    strata = [{k: c[k] for k in ("case_id", "config", "subsystem", "base_document")} for c in test]
    assert set(lite_ids) == choose_lite(strata)
    for config in ("atomic", "compositional"):   # lite rows are test rows, documents and all
        t = {r["case_id"]: r for r in pq.read_table(next((root / config).glob("test-*.parquet"))).to_pylist()}
        for r in pq.read_table(next((root / config).glob("lite-*.parquet"))).to_pylist():
            assert r == t[r["case_id"]]
    manifest = json.loads((root / "_build" / "manifest.json").read_text())
    units = manifest["reconciliation"]["units"]
    rows = manifest["reconciliation"]["rows"]
    for config, unit in (("atomic", "atomic_case"), ("compositional", "compositional_case")):
        e = units[unit]   # each case is written once, whatever split repeats it
        assert e["written"] == rows[config]["test"] and e["read"] == e["written"] + e["quarantined"] + e["filtered"]
        assert rows[config]["lite"] == sum(c["config"] == config for c in lite)
    report = json.loads((root / "_build" / "validation" / "report.json").read_text())
    assert report["passed"]
    # the card reports the distance per attribute and the cost Lite saves, measured on these files
    card = (root / "README.md").read_text()
    stats = lite_statistics(lite_rows(root, "test"), lite_rows(root, "lite"))
    for attribute in ("config (atomic / compositional)", "subsystem", "base document"):
        assert f"| {attribute} | {stats['tvd'][attribute]:.4f} |" in card
    cost = stats["cost"]["cases"]
    assert cost["full"] == len(test) and cost["lite"] == len(lite)
    assert f"| cases | {len(test)} | {len(lite)} | {cost['reduction']:.1%} |" in card
    assert "| oracle checks |" in card


def test_the_harness_runs_the_lite_split_of_both_configs(wordeval_text_build, tmp_path, capsys):
    root = wordeval_text_build
    assert cli_main(["run", "wordeval", "--agent", "null", "--cases", str(root), "--config", "lite",
                     "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    printed = json.loads(capsys.readouterr().out)
    lite = read_cases(root, split="lite")
    assert printed["cases"] == len(lite) and printed["pass_rate"] == 0.0
    assert sorted(p.stem for p in (tmp_path / "run" / "cases").glob("*.json")) == sorted(c["case_id"] for c in lite)
    assert set(printed["per_config"]) == {"atomic", "compositional"}
