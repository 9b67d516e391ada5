"""``run_head`` (one head, trained or loaded, and its predictions) and ``benchwright baseline wildbox``."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from benchwright.arguments import ArgumentParser, parser_of
from benchwright.baselines.wildbox.common import HEADS, load_split, write_predictions
from benchwright.baselines.wildbox.learned import (
    COMPONENTS, DEFAULT_EPOCHS, LEARNED_CONFIG, load_checkpoint, predict_learned, train_learned,
)
from benchwright.baselines.wildbox.lift import CONTEXTS, LIFT_MODES, predict_lift, predict_trivial


def run_head(head: str, train: dict, target: dict, *, epochs: int = DEFAULT_EPOCHS, seed: int = 0,
             checkpoint=None, load: bool = False, progress: bool = True,
             lift_mode: str = "ground", context: str | None = None) -> tuple[dict, dict]:
    """(predictions, info) of one head; the learned head trains (or loads ``checkpoint`` with
    ``load=True``), saves the checkpoint when a path is given and predicts from the saved file.
    ``context``: the learned head's (``CONTEXTS``; None: ``LEARNED_CONFIG["context"]``)."""
    info: dict = {"head": head}
    t0 = time.perf_counter()
    if head == "trivial":
        preds = predict_trivial(train, target)
    elif head == "lift":
        preds = predict_lift(train, target, mode=lift_mode)
    elif head == "learned":
        if load:
            if checkpoint is None:
                raise ValueError("--load needs --checkpoint")
            bundle = load_checkpoint(checkpoint)
        else:
            bundle = train_learned(train, epochs=epochs, seed=seed, checkpoint=checkpoint, progress=progress,
                                   config=None if context is None else {"context": context})
            info["train_seconds"] = time.perf_counter() - t0
            info["final_loss"] = bundle["history"][-1]["loss"] if bundle["history"] else None
            if checkpoint is not None:
                bundle = load_checkpoint(checkpoint)  # predict from what was saved
        info["epochs"] = bundle["config"]["epochs"]
        info["seed"] = bundle["config"]["seed"]
        info["components"] = list(bundle.get("components", COMPONENTS))
        info["context"] = bundle["config"].get("context", "image")
        preds = predict_learned(bundle, target)
    else:
        raise ValueError(f"unknown head {head!r}; expected one of {HEADS}")
    info["seconds"] = time.perf_counter() - t0
    return preds, info


# ========================================================================================= CLI
def cli_parser() -> ArgumentParser:
    p = ArgumentParser(prog="benchwright baseline wildbox",
                                description="WildBox 3D baselines on oracle 2D boxes (trivial d0, lift, learned MLP)")
    p.add_argument("--data", required=True, help="built WildBox folder (OUT/wildbox)")
    p.add_argument("--head", required=True, choices=HEADS)
    p.add_argument("--out", required=True, help="prediction JSON to write")
    p.add_argument("--split", default="validation", help="split to predict (default validation)")
    p.add_argument("--epochs", type=int, default=DEFAULT_EPOCHS, help="learned head: training epochs")
    p.add_argument("--seed", type=int, default=0, help="learned head: torch seed")
    p.add_argument("--checkpoint", help="learned head: checkpoint path (default: PRED with suffix .pt)")
    p.add_argument("--load", action="store_true", help="learned head: predict from --checkpoint, no training")
    p.add_argument("--lift-mode", default="ground", choices=LIFT_MODES, help="lift head: depth rule")
    p.add_argument("--context", default=LEARNED_CONFIG["context"], choices=CONTEXTS,
                   help="learned head: image (the image's own 2D boxes) or segment (also the segment's other frames)")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--evaluate", action="store_true",
                   help="also score the predictions as `evaluate wildbox` does: a summary table led by AP-BEV@0.25 "
                        "(VOC 11-point), the full metrics in PRED.metrics.json")
    return p


@parser_of(cli_parser)
def run_cli(argv=None) -> int:
    """``benchwright baseline wildbox --data OUT/wildbox --head H --out PRED.json ...``: writes the
    predictions; with ``--evaluate`` prints ``evaluate wildbox``'s summary tables."""
    from benchwright.errors import BenchwrightError

    ns = cli_parser().parse_args(argv)
    try:
        if ns.split == "train" and ns.head != "trivial":
            print("note: predicting the train split (statistics / weights come from it)", file=sys.stderr)
        train = load_split(ns.data, "train")
        target = load_split(ns.data, ns.split)
        if len(train["image_id"]) == 0:
            raise BenchwrightError(f"{ns.data}: the train split has no boxes")
        checkpoint = None
        if ns.head == "learned":
            checkpoint = Path(ns.checkpoint) if ns.checkpoint else Path(ns.out).with_suffix(".pt")
        preds, _ = run_head(ns.head, train, target, epochs=ns.epochs, seed=ns.seed, checkpoint=checkpoint,
                            load=ns.load, progress=not ns.no_progress, lift_mode=ns.lift_mode, context=ns.context)
        out = write_predictions(ns.out, preds, target["image_ids"])
        line = (f"wildbox baseline {ns.head}: {len(preds['image_id'])} instances on {len(target['image_ids'])} "
                f"{ns.split} images -> {out}")
        if checkpoint is not None:
            line += f" (checkpoint {checkpoint})"
        print(line)
        if ns.evaluate:  # the evaluator's defaults: the same numbers `benchwright evaluate wildbox` prints
            from benchwright.evaluation import wildbox as ev
            from benchwright.summary import cell, show, write_json

            m = ev.evaluate_paths(ns.data, out, ns.split)
            name, protocol, value = ev.headline(m)
            metrics = write_json(Path(out).with_suffix(".metrics.json"), m)
            show(ev.summary_tables(m), [f"{name} macro {cell(value)} ({protocol}); full metrics: {metrics}"])
    except (BenchwrightError, ValueError, OSError) as err:
        print(f"benchwright baseline wildbox: error: {err}", file=sys.stderr)
        return 2
    return 0
