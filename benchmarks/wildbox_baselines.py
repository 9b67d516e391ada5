"""The three WildBox baselines (trivial d0, lift, learned MLP) on one split, scored by the evaluator.

    python -m benchwright.benchmarks.wildbox_baselines --data OUT/wildbox [--split validation]
        [--epochs 60] [--seed 0] [--extra-seeds 1,2,3,4] [--pred-dir DIR]

Runs every head of ``baselines.wildbox`` on oracle 2D boxes of the split (statistics and weights
from ``train``), writes each head's prediction JSON (to ``--pred-dir``, default a temporary
folder), scores it with ``evaluation.wildbox.evaluate_paths`` and prints ONE JSON object with
AP-BEV@0.25 / @0.50, AP-3D@0.25 and NHD (Hungarian, overall) per head -- macro over species,
AP in percent -- plus the run's wall times. Also writes, for the dataset card,
``OUT/wildbox/_build/baselines.md`` (a results table) and ``OUT/wildbox/_build/baselines.json``
(the same numbers; no timings or paths, so a rerun writes the same bytes).

Rows: ``trivial`` (d0), ``lift`` (ground-plane lift, the default), ``lift (pinhole)`` (the
class-height pinhole lift z = c f_y H / h, shown because it is what "lift" usually means and it
fails under the per-segment normalisation), ``learned``. ``--extra-seeds`` retrains the learned
head with seeds 1-4 by default and reports them separately with the mean, min and max over all
seeds and how many are above lift (on a default-scale validation split one network's AP-BEV@0.25
moves by about a point with its seed; the headline is ``--seed``).
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

from benchwright.baselines import wildbox as bw

ROWS = (("trivial", "trivial", {}), ("lift", "lift", {}), ("lift (pinhole)", "lift", {"mode": "pinhole"}),
        ("learned", "learned", {}))
METRICS = (("ap_bev@0.25", "AP-BEV@0.25"), ("ap_bev@0.50", "AP-BEV@0.50"), ("ap3d@0.25", "AP-3D@0.25"))


def _summary(metrics: dict) -> dict:
    out = {key: metrics[key]["macro"] for key, _ in METRICS}
    out["nhd"] = metrics["nhd_hungarian"]["macro"]["overall"]
    out["nhd_depth_share"] = metrics["nhd_hungarian"]["macro"]["depth_share"]
    out["ap_bev@0.25_per_class"] = metrics["ap_bev@0.25"]["per_class"]
    out["n_gt"] = metrics["meta"]["n_gt"]
    out["n_pred"] = metrics["meta"]["n_pred"]
    return out


def _fmt(x, digits=2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def markdown(result: dict) -> str:
    """The results table (and a per-species AP-BEV@0.25 table) for the dataset card."""
    from benchwright.schemas.wildbox import SPECIES

    heads = result["heads"]
    lines = [
        (f"Baselines on the `{result['split']}` split with oracle 2D boxes (`bbox2d_tight`), statistics and "
         "weights from `train`; macro over species, AP in percent (COCO 101-point), NHD = Hungarian corner "
         "distance / GT diagonal on pairs with 2D IoU >= 0.75 (lower is better)."),
        "",
        "| head | AP-BEV@0.25 | AP-BEV@0.50 | AP-3D@0.25 | NHD |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, row in heads.items():
        lines.append(f"| {name} | {_fmt(row['ap_bev@0.25'])} | {_fmt(row['ap_bev@0.50'])} | "
                     f"{_fmt(row['ap3d@0.25'])} | {_fmt(row['nhd'], 3)} |")
    lines += ["", "AP-BEV@0.25 per species:", "",
              "| head | " + " | ".join(SPECIES) + " |", "|---|" + "---:|" * len(SPECIES)]
    for name, row in heads.items():
        per = row["ap_bev@0.25_per_class"]
        lines.append(f"| {name} | " + " | ".join(_fmt(per[s]) for s in SPECIES) + " |")
    o = result["ordering"]
    verdict = "learned > lift > trivial" if o["holds"] else "the ordering learned > lift > trivial does NOT hold"
    lines += ["", (f"learned - lift = {_fmt(o['learned_minus_lift'])}, lift - trivial = "
                   f"{_fmt(o['lift_minus_trivial'])} AP-BEV@0.25 points ({verdict})."),
              "",
              ("trivial = the paper's d0 (z = 1, class median size, class mean rotation); lift = ground-plane "
              "lift (the ray through the 2D box centre meets the plane of animal centres whose normal is the "
              "class-mean 'down' axis; each frame's median depth set to 1, the dataset's normalisation); "
              "lift (pinhole) = z = c f_y H / h with class-median H; learned = MLP on 2D box, K, class "
              f"(coarse-to-fine curriculum) and the lift depths, {result['learned']['epochs']} epochs, "
              f"seed {result['learned']['seed']}; its score is its own depth uncertainty.")]
    if result.get("extra_seeds"):
        spread = ", ".join(f"seed {s}: {_fmt(v['ap_bev@0.25'])}" for s, v in result["extra_seeds"].items())
        seeds = o["learned_seeds"]
        lines += ["", (f"learned AP-BEV@0.25 with other seeds: {spread}. Over all {seeds['n']} seeds: mean "
                       f"{_fmt(seeds['mean'])}, min {_fmt(seeds['min'])}, max {_fmt(seeds['max'])}; "
                       f"{seeds['above_lift']} of {seeds['n']} are above lift.")]
    return "\n".join(lines) + "\n"


def run(data: Path, split: str = "validation", epochs: int = bw.DEFAULT_EPOCHS, seed: int = 0,
        extra_seeds=(), pred_dir: Path | None = None, progress: bool = True) -> tuple[dict, dict]:
    """(result written to _build, timings); predictions go to ``pred_dir`` (temporary if None)."""
    from benchwright.evaluation import wildbox as ev

    data = Path(data)
    train = bw.load_split(data, "train")
    target = bw.load_split(data, split)
    timings: dict = {}
    heads: dict = {}
    extra: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(pred_dir) if pred_dir else Path(tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, head, kw in ROWS:
            stem = name.replace(" ", "_").replace("(", "").replace(")", "")
            t0 = time.perf_counter()
            if kw:
                preds, info = bw.predict_lift(train, target, **kw), {}
            else:
                preds, info = bw.run_head(head, train, target, epochs=epochs, seed=seed,
                                          checkpoint=out_dir / f"{stem}.pt" if head == "learned" else None,
                                          progress=progress)
            path = bw.write_predictions(out_dir / f"{stem}.json", preds, target["image_ids"])
            t1 = time.perf_counter()
            heads[name] = _summary(ev.evaluate_paths(data, path, split, ap_bev_protocol="coco101"))
            timings[name] = {"predict_s": round(t1 - t0, 2), "evaluate_s": round(time.perf_counter() - t1, 2),
                             **({"train_s": round(info["train_seconds"], 2)} if "train_seconds" in info else {})}
        for s in extra_seeds:
            preds, info = bw.run_head("learned", train, target, epochs=epochs, seed=s,
                                      checkpoint=out_dir / f"learned_seed{s}.pt", progress=progress)
            path = bw.write_predictions(out_dir / f"learned_seed{s}.json", preds, target["image_ids"])
            m = _summary(ev.evaluate_paths(data, path, split, ap_bev_protocol="coco101"))
            extra[str(s)] = {k: m[k] for k in ("ap_bev@0.25", "ap_bev@0.50", "ap3d@0.25", "nhd")}
            timings[f"learned seed {s}"] = {"train_s": round(info["train_seconds"], 2)}
    a = {k: heads[k]["ap_bev@0.25"] for k in ("trivial", "lift", "learned")}
    per_seed = [a["learned"]] + [v["ap_bev@0.25"] for v in extra.values()]
    result = {
        "split": split,
        "setting": "oracle 2D boxes (bbox2d_tight) + K of the target split; statistics and weights from train",
        "metric_notes": {"ap": "macro over species, percent, COCO 101-point", "nhd": "nhd_hungarian macro overall"},
        "heads": heads,
        "ordering": {"learned_minus_lift": a["learned"] - a["lift"], "lift_minus_trivial": a["lift"] - a["trivial"],
                     "holds": bool(a["learned"] > a["lift"] > a["trivial"]),
                     "learned_seeds": {"n": len(per_seed), "mean": float(sum(per_seed) / len(per_seed)),
                                       "min": min(per_seed), "max": max(per_seed),
                                       "above_lift": sum(v > a["lift"] for v in per_seed)}},
        "learned": {"epochs": epochs, "seed": seed, "config": dict(bw.LEARNED_CONFIG)},
        "n_train_boxes": len(train["image_id"]), "n_target_boxes": len(target["image_id"]),
    }
    if extra:
        result["extra_seeds"] = extra
    return result, timings


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", required=True, help="built WildBox folder (OUT/wildbox)")
    p.add_argument("--split", default="validation")
    p.add_argument("--epochs", type=int, default=bw.DEFAULT_EPOCHS)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--extra-seeds", default="1,2,3,4",
                   help="comma-separated seeds for the learned head's seed spread (default 1,2,3,4; '' for none)")
    p.add_argument("--pred-dir", help="keep the prediction JSONs and the checkpoint here")
    p.add_argument("--no-progress", action="store_true")
    ns = p.parse_args(argv)
    data = Path(ns.data)
    extra = [int(s) for s in ns.extra_seeds.split(",") if s.strip()]
    t0 = time.perf_counter()
    result, timings = run(data, ns.split, ns.epochs, ns.seed, extra, Path(ns.pred_dir) if ns.pred_dir else None,
                          progress=not ns.no_progress)
    build = data / "_build"
    build.mkdir(parents=True, exist_ok=True)
    (build / "baselines.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (build / "baselines.md").write_text(markdown(result), encoding="utf-8")
    if (build / "manifest.json").exists():  # a published build: its card gets the results table
        from benchwright.build import refresh_card
        from benchwright.pipelines.wildbox import DATASET

        refresh_card(DATASET, data)
    printed = {
        "heads": {k: {m: v[m] for m in ("ap_bev@0.25", "ap_bev@0.50", "ap3d@0.25", "nhd")}
                  for k, v in result["heads"].items()},
        "ordering": result["ordering"], "extra_seeds": result.get("extra_seeds", {}),
        "split": ns.split, "epochs": ns.epochs, "seed": ns.seed,
        "timings_s": {**timings, "total": round(time.perf_counter() - t0, 2)},
        "written": [str(build / "baselines.md"), str(build / "baselines.json")],
        "python": platform.python_version(),
    }
    print(json.dumps(printed, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
