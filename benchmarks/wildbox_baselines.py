"""The three WildBox baselines (trivial d0, lift, learned residual head) on one split, scored by the evaluator.

    python -m benchwright.benchmarks.wildbox_baselines --data OUT/wildbox [OUT2/wildbox ...]
        [--split validation] [--epochs 60] [--seed 0] [--extra-seeds 1,2,3,4] [--pred-dir DIR] [--margin 2]

For every ``--data`` folder (one synthetic draw or real build each) runs every head of
``baselines.wildbox`` on oracle 2D boxes of the split (statistics and weights from ``train``),
writes each head's prediction JSON (to ``--pred-dir``/<draw>, default a temporary folder),
scores it with ``evaluation.wildbox.evaluate_paths`` and prints ONE JSON object: per draw and
head AP-BEV@0.25 / @0.50 in both AP-BEV protocols (COCO 101-point ``ap_bev@*``, the WildBox
authors' VOC 11-point ``ap_bev_voc11@*``), AP-3D@0.25 and NHD (Hungarian, overall) -- macro over
species, AP in percent -- plus wall times, and whether the learned head's mean over its seeds
beats lift by ``--margin`` AP-BEV@0.25 points (the evaluator's default protocol) on every draw.
Also writes, for each dataset card, ``OUT/wildbox/_build/baselines.md`` (a results table) and
``OUT/wildbox/_build/baselines.json`` (the same numbers; no timings or paths, so a rerun writes
the same bytes), and re-renders the card of a published build.

Rows: ``trivial`` (d0), ``lift`` (ground-plane lift, the default), ``lift (pinhole)`` (the
class-height pinhole lift z = c f_y H / h, shown because it is what "lift" usually means and it
fails under the per-segment normalisation), ``lift (segment)`` (the ground-plane lift with each
frame's depth scale from its segment's other frames: SEGMENT CONTEXT), ``learned`` (the residual
head with ``--seed``, on the segment lift: it uses segment context too). The verdict compares
learned with ``lift`` (as issue 8 asks) and, same context, with ``lift (segment)``.
``--extra-seeds`` retrains the learned head with seeds 1-4 by default; the verdict uses the
mean over all seeds (one network's AP-BEV@0.25 moves by about a point with its seed).
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
        ("lift (segment)", "lift", {"mode": "segment"}), ("learned", "learned", {}))
METRICS = (("ap_bev@0.25", "AP-BEV@0.25"), ("ap_bev@0.50", "AP-BEV@0.50"),
           ("ap_bev_voc11@0.25", "AP-BEV@0.25 (VOC 11)"), ("ap_bev_voc11@0.50", "AP-BEV@0.50 (VOC 11)"),
           ("ap3d@0.25", "AP-3D@0.25"))
SEED_KEYS = ("ap_bev@0.25", "ap_bev@0.50", "ap_bev_voc11@0.25", "ap_bev_voc11@0.50", "ap3d@0.25", "nhd")
MARGIN = 2.0  # AP-BEV@0.25 points the learned head's seed mean must beat lift by on every draw
LIFT_MODES_SENTENCE = (
    "The two lift modes differ because the ground-plane lift only needs each frame's depths relative to its "
    "median, which the per-segment normalisation keeps near 1, while the pinhole lift needs each species' "
    "absolute height in normalised units, which varies about 2x between segments (every segment is divided "
    "by its own median depth), so its depth inherits that spread.")
SEGMENT_SENTENCE = (
    "lift (segment) and learned use segment context: besides the image's own oracle 2D boxes they see the "
    "oracle 2D boxes and track ids of the other frames of the same video segment (no 3D), which tell how much "
    "nearer or farther each frame is than its segment's median; trivial, lift and lift (pinhole) are per-image.")


def _evaluate(data: Path, path: Path, split: str) -> dict:
    """Metrics with both AP-BEV protocols (``ap_bev@*`` COCO 101-point, ``ap_bev_voc11@*`` VOC 11-point)
    and ``default_bev_key`` = the evaluator's default protocol's AP-BEV@0.25 key."""
    from benchwright.evaluation import wildbox as ev

    if hasattr(ev, "AP_BEV_PROTOCOLS"):  # evaluators that report both protocols in one call
        m = ev.evaluate_paths(data, path, split, ap_bev_protocol="both")
        default = bw.ap_bev_key(ev.evaluate_paths(data, path, split))
    else:  # an evaluator with the COCO keys only: the VOC 11-point numbers from a second call
        m = ev.evaluate_paths(data, path, split)
        voc = ev.evaluate_paths(data, path, split, bev_ap_method="voc11")
        m.update({f"ap_bev_voc11@{t}": voc[f"ap_bev@{t}"] for t in ("0.25", "0.50")})
        default = "ap_bev@0.25"
    m["default_bev_key"] = default
    return m


def _summary(metrics: dict) -> dict:
    out = {key: metrics[key]["macro"] for key, _ in METRICS}
    out["nhd"] = metrics["nhd_hungarian"]["macro"]["overall"]
    out["nhd_depth_share"] = metrics["nhd_hungarian"]["macro"]["depth_share"]
    out["ap_bev@0.25_per_class"] = metrics["ap_bev@0.25"]["per_class"]
    out["ap_bev_voc11@0.25_per_class"] = metrics["ap_bev_voc11@0.25"]["per_class"]
    out["n_gt"] = metrics["meta"]["n_gt"]
    out["n_pred"] = metrics["meta"]["n_pred"]
    return out


def _fmt(x, digits=2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def markdown(result: dict) -> str:
    """The results table (and a per-species AP-BEV@0.25 table) for the dataset card."""
    from benchwright.schemas.wildbox import SPECIES

    heads = result["heads"]
    key = result["protocol"]["key"]
    seeds = result["ordering"]["learned_seeds"]
    lines = [
        (f"Baselines on the `{result['split']}` split with oracle 2D boxes (`bbox2d_tight`), statistics and "
         "weights from `train`; macro over species, AP in percent, AP-BEV in the WildBox authors' VOC 11-point "
         "protocol and in COCO 101-point; NHD = Hungarian corner distance / GT diagonal on pairs with 2D IoU "
         f">= 0.75 (lower is better). The learned row is the mean over {seeds['n']} training seeds "
         "(min - max of AP-BEV@0.25 in brackets)."),
        "",
        "| head | AP-BEV@0.25 (VOC 11) | AP-BEV@0.50 (VOC 11) | AP-BEV@0.25 (COCO) | AP-BEV@0.50 (COCO) "
        "| AP-3D@0.25 | NHD |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in heads.items():
        if name == "learned":
            row = {**row, **result["learned_mean"]}
            s = result["learned_spread"]
            voc = f"{_fmt(row['ap_bev_voc11@0.25'])} ({_fmt(s['ap_bev_voc11@0.25'][0])} - {_fmt(s['ap_bev_voc11@0.25'][1])})"
            coco = f"{_fmt(row['ap_bev@0.25'])} ({_fmt(s['ap_bev@0.25'][0])} - {_fmt(s['ap_bev@0.25'][1])})"
        else:
            voc, coco = _fmt(row["ap_bev_voc11@0.25"]), _fmt(row["ap_bev@0.25"])
        lines.append(f"| {name} | {voc} | {_fmt(row['ap_bev_voc11@0.50'])} | {coco} | {_fmt(row['ap_bev@0.50'])} | "
                     f"{_fmt(row['ap3d@0.25'])} | {_fmt(row['nhd'], 3)} |")
    per_key = f"{key}_per_class"
    proto = "VOC 11-point" if key.startswith("ap_bev_voc11") else "COCO 101-point"
    lines += ["", f"AP-BEV@0.25 ({proto}) per species (learned: seed {result['learned']['seed']}):", "",
              "| head | " + " | ".join(SPECIES) + " |", "|---|" + "---:|" * len(SPECIES)]
    for name, row in heads.items():
        per = row[per_key]
        lines.append(f"| {name} | " + " | ".join(_fmt(per[s]) for s in SPECIES) + " |")
    o = result["ordering"]
    verdict = "learned > lift > trivial" if o["holds"] else "the ordering learned > lift > trivial does NOT hold"
    comps = ", ".join(f"seed {s}: {'+'.join(c) or 'none (the lift)'}" for s, c in result["learned_components"].items())
    lines += ["", (f"AP-BEV@0.25 ({proto}): learned (mean of {seeds['n']} seeds) - lift = "
                   f"{_fmt(o['learned_mean_minus_lift'])}, learned - lift (segment) = "
                   f"{_fmt(o.get('learned_mean_minus_lift_segment'))}, lift - trivial = {_fmt(o['lift_minus_trivial'])} points "
                   f"({verdict}); {seeds['above_lift']} of {seeds['n']} seeds are above lift, min "
                   f"{_fmt(seeds['min'])}, max {_fmt(seeds['max'])}."),
              "",
              ("trivial = the paper's d0 (z = 1, class median size, class mean rotation); lift = ground-plane "
               "lift (the ray through the 2D box centre meets the plane of animal centres whose normal is the "
               "class-mean 'down' axis; each frame's median depth set to 1, the dataset's normalisation); "
               "lift (pinhole) = z = c f_y H / h with class-median H; lift (segment) = the lift with each frame's "
               "depth scale from its segment (an animal's apparent size times its depth is constant along its "
               "track; the segment's median depth set to 1). " + LIFT_MODES_SENTENCE + " " + SEGMENT_SENTENCE),
              "",
              (f"learned (context: {result['learned'].get('context', 'image')}) = the lift of its context plus "
               "learned corrections: an MLP on the 2D box, K, class (coarse-to-fine "
               "curriculum), both lift depths and frame context predicts residuals on the lift's depth, centre, "
               "size and rotation (its output layer starts at zero, so untrained it is the lift), and a logistic "
               "score model predicts whether the lift's centre is a true positive; which of the parts are used "
               "is chosen on video-level folds inside train (the lift unless a part helps by more than "
               f"{result['learned']['config']['select_tolerance']} AP points), {result['learned']['epochs']} "
               f"epochs. Parts chosen: {comps}.")]
    return "\n".join(lines) + "\n"


def run(data: Path, split: str = "validation", epochs: int = bw.DEFAULT_EPOCHS, seed: int = 0,
        extra_seeds=(), pred_dir: Path | None = None, progress: bool = True) -> tuple[dict, dict]:
    """(result written to _build, timings); predictions go to ``pred_dir`` (temporary if None)."""
    data = Path(data)
    train = bw.load_split(data, "train")
    target = bw.load_split(data, split)
    timings: dict = {}
    heads: dict = {}
    extra: dict = {}
    components: dict = {}
    default_key = "ap_bev@0.25"
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
            m = _evaluate(data, path, split)
            default_key = m["default_bev_key"]
            heads[name] = _summary(m)
            timings[name] = {"predict_s": round(t1 - t0, 2), "evaluate_s": round(time.perf_counter() - t1, 2),
                             **({"train_s": round(info["train_seconds"], 2)} if "train_seconds" in info else {})}
            if head == "learned":
                components[str(seed)] = info["components"]
        for s in extra_seeds:
            preds, info = bw.run_head("learned", train, target, epochs=epochs, seed=s,
                                      checkpoint=out_dir / f"learned_seed{s}.pt", progress=progress)
            path = bw.write_predictions(out_dir / f"learned_seed{s}.json", preds, target["image_ids"])
            m = _summary(_evaluate(data, path, split))
            extra[str(s)] = {k: m[k] for k in SEED_KEYS}
            components[str(s)] = info["components"]
            timings[f"learned seed {s}"] = {"train_s": round(info["train_seconds"], 2)}
    runs = [{k: heads["learned"][k] for k in SEED_KEYS}] + list(extra.values())
    mean = {k: float(sum(r[k] for r in runs) / len(runs)) for k in SEED_KEYS}
    spread = {k: [min(r[k] for r in runs), max(r[k] for r in runs)] for k in SEED_KEYS}
    a = {k: heads[k][default_key] for k in ("trivial", "lift", "learned")}
    per_seed = [r[default_key] for r in runs]
    result = {
        "split": split,
        "setting": "oracle 2D boxes (bbox2d_tight) + K of the target split; statistics and weights from train",
        "metric_notes": {"ap": "macro over species, percent; ap_bev@* COCO 101-point, ap_bev_voc11@* VOC 11-point "
                               "(the WildBox authors' protocol); ap3d COCO 101-point",
                         "nhd": "nhd_hungarian macro overall"},
        "protocol": {"key": default_key,
                     "name": "VOC 11-point" if default_key.startswith("ap_bev_voc11") else "COCO 101-point"},
        "heads": heads,
        "learned_mean": mean, "learned_spread": spread, "learned_components": components,
        "ordering": {"learned_minus_lift": a["learned"] - a["lift"], "lift_minus_trivial": a["lift"] - a["trivial"],
                     "learned_mean_minus_lift": mean[default_key] - a["lift"],
                     "learned_mean_minus_lift_segment": mean[default_key] - heads["lift (segment)"][default_key],
                     "holds": bool(mean[default_key] > a["lift"] > a["trivial"]),
                     "learned_seeds": {"n": len(per_seed), "mean": mean[default_key],
                                       "min": min(per_seed), "max": max(per_seed),
                                       "above_lift": sum(v > a["lift"] for v in per_seed)}},
        "learned": {"epochs": epochs, "seed": seed, "config": dict(bw.LEARNED_CONFIG),
                    "context": bw.LEARNED_CONFIG["context"]},
        "n_train_boxes": len(train["image_id"]), "n_target_boxes": len(target["image_id"]),
    }
    if extra:
        result["extra_seeds"] = extra
    return result, timings


def write_results(data: Path, result: dict) -> list[str]:
    """``_build/baselines.json`` and ``.md``; re-renders the card of a published build."""
    build = Path(data) / "_build"
    build.mkdir(parents=True, exist_ok=True)
    (build / "baselines.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (build / "baselines.md").write_text(markdown(result), encoding="utf-8")
    if (build / "manifest.json").exists():  # a published build: its card gets the results table
        from benchwright.build import refresh_card
        from benchwright.pipelines.wildbox import DATASET

        refresh_card(DATASET, data)
    return [str(build / "baselines.md"), str(build / "baselines.json")]


def _draw_names(paths: list[Path]) -> list[str]:
    """A short unique name per --data folder (its parent folder's name, e.g. wb_out_7)."""
    names = [p.resolve().parent.name if p.name == "wildbox" else p.name for p in paths]
    return names if len(set(names)) == len(names) else [str(p) for p in paths]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", required=True, nargs="+", help="built WildBox folder(s) (OUT/wildbox), one per draw")
    p.add_argument("--split", default="validation")
    p.add_argument("--epochs", type=int, default=bw.DEFAULT_EPOCHS)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--extra-seeds", default="1,2,3,4",
                   help="comma-separated seeds for the learned head's seed spread (default 1,2,3,4; '' for none)")
    p.add_argument("--pred-dir", help="keep the prediction JSONs and the checkpoints here (one folder per draw)")
    p.add_argument("--margin", type=float, default=MARGIN, help="AP-BEV@0.25 points learned must beat lift by")
    p.add_argument("--no-progress", action="store_true")
    ns = p.parse_args(argv)
    paths = [Path(d) for d in ns.data]
    names = _draw_names(paths)
    extra = [int(s) for s in ns.extra_seeds.split(",") if s.strip()]
    t0 = time.perf_counter()
    draws: dict = {}
    written: list[str] = []
    for name, data in zip(names, paths):
        t1 = time.perf_counter()
        pred_dir = Path(ns.pred_dir) / name if ns.pred_dir else None
        result, timings = run(data, ns.split, ns.epochs, ns.seed, extra, pred_dir, progress=not ns.no_progress)
        written += write_results(data, result)
        o = result["ordering"]
        draws[name] = {
            "heads": {k: {m: v[m] for m in SEED_KEYS} for k, v in result["heads"].items()},
            "learned_mean": result["learned_mean"], "learned_spread": result["learned_spread"],
            "learned_components": result["learned_components"], "protocol": result["protocol"],
            "ordering": o, "extra_seeds": result.get("extra_seeds", {}),
            "learned_beats_lift_by_margin": bool(o["learned_mean_minus_lift"] >= ns.margin),
            "learned_beats_lift_segment_by_margin": bool(o["learned_mean_minus_lift_segment"] >= ns.margin),
            "timings_s": {**timings, "total": round(time.perf_counter() - t1, 2)},
        }
    printed = {
        "draws": draws,
        "margin": ns.margin,
        "learned_beats_lift_by_margin_on_every_draw": all(d["learned_beats_lift_by_margin"] for d in draws.values()),
        "learned_beats_lift_segment_by_margin_on_every_draw": all(d["learned_beats_lift_segment_by_margin"]
                                                                  for d in draws.values()),
        "learned_context": bw.LEARNED_CONFIG["context"],
        "split": ns.split, "epochs": ns.epochs, "seed": ns.seed, "seeds": [ns.seed] + extra,
        "timings_s": {"total": round(time.perf_counter() - t0, 2)},
        "written": written,
        "python": platform.python_version(),
    }
    if len(draws) == 1:  # one draw: its numbers at the top level too, as before
        only = next(iter(draws.values()))
        printed.update(heads=only["heads"], ordering=only["ordering"], extra_seeds=only["extra_seeds"])
        printed["timings_s"].update(only["timings_s"])
    print(json.dumps(printed, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
