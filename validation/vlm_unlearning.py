"""VLM unlearning table checks and great-expectations suites."""
from __future__ import annotations

from pathlib import Path

from benchwright.schemas import vlm_unlearning as schema


def table_checks(root: Path) -> list[dict]:
    """The three views hold the same examples; every routing config holds exactly the forget
    examples, its text-only share is its gamma's; records list exactly the published examples; the
    image-only renders regenerate byte for byte from their stored parameters (a sample)."""
    from benchwright.loaders.vlm_unlearning import load
    from benchwright.vlm_unlearning.routes import route_size  # not routing: its scores need torch
    from benchwright.vlm_unlearning.views import render_text

    results = []
    ids = {v: load(root, v, columns=["example_id"]).column("example_id").to_pylist() for v in schema.VIEWS}
    same = all(sorted(ids[v]) == sorted(ids["multimodal"]) for v in schema.VIEWS)
    results.append({"check": "views: the same examples in every view", "ok": same,
                    "detail": f"{len(ids['multimodal']):,} examples x {len(schema.VIEWS)} views" if same else
                    ", ".join(f"{v} {len(i):,}" for v, i in ids.items())})
    forget = sorted(load(root, "multimodal", split="forget", columns=["example_id"]).column("example_id").to_pylist())
    for config in schema.ROUTING_CONFIGS:
        table = load(root, config, columns=["example_id", "routed_view", "gamma", "view"])
        routed_ids = sorted(table.column("example_id").to_pylist())
        text = table.column("routed_view").to_pylist().count("text_only")
        gamma = float(config.split("_g")[1])
        want = route_size(len(routed_ids), gamma)
        consistent = table.column("routed_view").to_pylist() == table.column("view").to_pylist()
        ok = routed_ids == forget and text == want and consistent
        results.append({"check": f"{config}: the forget examples, {gamma:g} of them text-only", "ok": ok,
                        "detail": f"{len(routed_ids):,} rows ({len(forget):,} forget examples), {text:,} text-only "
                                  f"(expected {want:,})" + ("" if consistent else "; view != routed_view")})
    records = load(root, "records", columns=["example_ids"]).column("example_ids").to_pylist()
    listed = sorted(e for ids_ in records for e in ids_)
    ok = listed == sorted(ids["multimodal"])
    results.append({"check": "records: list exactly the published examples", "ok": ok,
                    "detail": f"{len(records):,} records, {len(listed):,} examples"})
    def regenerates(row) -> bool:
        try:
            return render_text(row["render"]) == row["image"]["bytes"]
        except ValueError:  # drawn with another font file than this machine's
            return False

    sample = load(root, "image_only", columns=["example_id", "image", "render"], limit=20).to_pylist()
    bad = [r["example_id"] for r in sample if not regenerates(r)]
    results.append({"check": "image_only: renders regenerate from their parameters", "ok": not bad,
                    "detail": f"{len(sample)} checked" + (f"; differ: {bad[:3]}" if bad else "")})
    return results


def _view_expectations(config: str) -> list:
    exps = [
        ("ExpectColumnValuesToNotBeNull", {"column": "instruction"}),
        ("ExpectColumnValuesToNotBeNull", {"column": "response"}),
        ("ExpectColumnValueLengthsToBeBetween", {"column": "response", "min_value": 1}),
        ("ExpectColumnValuesToBeInSet", {"column": "role", "value_set": list(schema.ROLES)}),
        ("ExpectColumnValuesToBeInSet", {"column": "subset", "value_set": list(schema.SUBSETS + schema.ROLES)}),
        ("ExpectColumnValuesToBeInSet", {"column": "description_source",
                                         "value_set": list(schema.DESCRIPTION_SOURCES)}),
        ("ExpectColumnValuesToBeInSet", {"column": "harmful_category",
                                         "value_set": list(schema.HARMFUL_CATEGORIES)}),
        ("ExpectColumnValuesToNotBeNull", {"column": "prompt"}),
    ]
    if config in schema.VIEWS:
        exps.append(("ExpectColumnValuesToBeInSet", {"column": "view", "value_set": [config]}))
    else:
        exps += [("ExpectColumnValuesToBeInSet", {"column": "routed_view", "value_set": ["multimodal", "text_only"]}),
                 ("ExpectColumnValuesToBeBetween", {"column": "routing_score", "min_value": 0, "max_value": 1}),
                 ("ExpectColumnValuesToNotBeNull", {"column": "routing_score_source"})]
    return exps


EXPECTATIONS = {
    **{c: _view_expectations(c) for c in schema.CONFIGS if c != "records"},
    "records": [
        ("ExpectColumnValuesToNotBeNull", {"column": "image_path"}),
        ("ExpectColumnValuesToBeInSet", {"column": "split", "value_set": ["train", "test"]}),
        ("ExpectColumnValuesToBeBetween", {"column": "pairs", "min_value": 1}),
    ],
}
