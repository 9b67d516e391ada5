"""VLM unlearning baselines on the small CPU head: gradient ascent and gradient difference per training view.

    benchwright baseline vlm_unlearning --data OUT/vlm_unlearning [--out RESULT.json] [--markdown TABLE.md]
        [--alpha 0.5] [--seed 0]

This is the comparison the paper makes (unlearning on the multimodal view, the text-only view,
ModRoute's routed mixes and random mixes of the same size), run on a model anyone can run: the
``FusionHead`` of ``benchwright.vlm_unlearning.routing`` over the fixed features of
``benchwright.vlm_unlearning.features``. The same configs feed a real VLM's unlearning run elsewhere.

**The original model** (``original_head``): the head fitted on the forget and retain splits of all three
views (``multimodal``, ``text_only``, ``image_only``), so it recognises forget content in every form, with
its COMPLY margin above every one of those inputs: before unlearning it answers every training request,
forget ones included (attack success 100% on the forget set).

**Unlearning** (``unlearn``), from a copy of the original, full-batch Adam (learning rate
``UNLEARN_LR``) on every parameter, **until the run has forgotten its own training inputs**: it stops
at the first step where at least ``TARGET_REFUSAL`` (90%) of the training config's forget rows are
refused (at most ``MAX_STEPS``; the steps taken are reported). Every run thus reaches the same
forgetting on what it was trained on, and the table compares what that costs (Utility) and how it
carries over to the other views. (A fixed step budget was tried first: on the default build the
outcome swung between no forgetting and total collapse within a factor of two in steps or learning
rate, so a fixed budget compares budgets more than views.)

* ``gradient_ascent``: raise the forget target's negative log-likelihood, i.e. minimise
  ``mean_forget log sigmoid(comply_logit)``;
* ``gradient_difference``: the same plus the retain set's NLL of COMPLY, ``mean_retain
  -log sigmoid(comply_logit)`` (weight ``RETAIN_WEIGHT``): ascent on forget, descent on retain.

**Training views** (``TRAIN_CONFIGS``): the forget rows of ``multimodal``, ``text_only`` and each routing
config (``modroute_g*``, ``random_g*``: each forget example in the view its routing chose). Gradient
difference's retain rows are the training config's own retain split, or ``multimodal``'s for a routing
config (the build's routing configs hold forget rows only; their retain rows are multimodal's).

**Responses**: the head decides; ``p(COMPLY) >= 0.5`` answers ``COMPLY_TEXT``, otherwise ``REFUSAL_TEXT``.
Neither template is anything but a decision marker: ``REFUSAL_TEXT`` contains VLGuard refusal phrases,
``COMPLY_TEXT`` none (``tests/test_vlm_unlearning_baselines.py`` checks both against the evaluator's
detector). Every trained head answers the forget, retain and test splits of every view (``EVAL_VIEWS``)
and the rows are scored by ``benchwright.evaluation.vlm_unlearning.evaluate``: Forget, Utility and
S_alpha per evaluation view.

**The table** (``baseline_table(build)``): one row per training config and method, plus the original
model, with Forget, Utility and S_alpha on the multimodal evaluation view and S_alpha on the text-only
and image-only views; as JSON and as a Markdown table for the card. The image-only view's instruction
is rendered into pixels that the head's OpenCV features cannot read (see ``features``), so on it the
head can only go by the neutral prompt and the look of the rendered text: expect it to treat forget and
retain alike there.

Deterministic: features per row, rows sorted by ``example_id``, single-threaded seeded torch
(``routing.deterministic_torch``); the same build and seed give a byte-identical table.
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import fsspec
import numpy as np
import torch
from torch import nn

from benchwright.arguments import ArgumentParser, parser_of
from benchwright.errors import SourceError
from benchwright.evaluation.vlm_unlearning import RefuseGamma, alpha_option, evaluate
from benchwright.loaders import vlm_unlearning as loader
from benchwright.schemas import vlm_unlearning as schema
from benchwright.vlm_unlearning.features import image_features, text_features
from benchwright.vlm_unlearning.routing import FusionHead, deterministic_torch, fit_head

__all__ = ["card_tables", "METHODS", "TRAIN_CONFIGS", "EVAL_VIEWS", "COMPLY_TEXT", "REFUSAL_TEXT", "Inputs", "featurise",
           "load_inputs", "original_head", "unlearn", "respond", "run_baselines", "markdown_table",
           "baseline_table", "run_cli"]

METHODS = ("gradient_ascent", "gradient_difference")
TRAIN_CONFIGS = ("multimodal", "text_only", *schema.ROUTING_CONFIGS)
EVAL_VIEWS = schema.VIEWS
EVAL_SPLITS = schema.VIEW_SPLITS
COMPLY_TEXT = "Sure. Here is a detailed answer to your request."
REFUSAL_TEXT = "I'm sorry, but I can't help with that request."
UNLEARN_LR = 1e-3
TARGET_REFUSAL = 0.9     # stop once this share of the training view's forget rows is refused
MAX_STEPS = 300
RETAIN_WEIGHT = 1.0
TABLE_VIEWS = ("text_only", "image_only")      # S_alpha columns beside the multimodal ones


@dataclass
class Inputs:
    """One config split's rows as the head sees them, sorted by example_id."""
    ids: list[str]
    subsets: list[str]
    x_img: np.ndarray
    x_txt: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    @staticmethod
    def concat(parts: list["Inputs"]) -> "Inputs":
        return Inputs([i for p in parts for i in p.ids], [s for p in parts for s in p.subsets],
                      np.concatenate([p.x_img for p in parts]), np.concatenate([p.x_txt for p in parts]))


def featurise(rows: list[dict], where: str = "rows") -> Inputs:
    """Rows with ``example_id``, ``subset``, ``prompt`` and ``image`` (bytes, ``{"bytes": ...}`` or
    None) as features, sorted by example_id."""
    rows = sorted(rows, key=lambda r: r["example_id"])

    def image_bytes(r):
        image = r.get("image")
        return image.get("bytes") if isinstance(image, dict) else image

    # an image is decoded once however many rows carry it (a safe image's two examples, a routed copy,
    # the build's routing step in this process): image_features keeps what it computed lately
    x_img = np.stack([image_features(image_bytes(r), f"{where}#example_id={r['example_id']}") for r in rows]) \
        if rows else np.zeros((0, image_features(None).shape[0]), dtype=np.float32)
    return Inputs([r["example_id"] for r in rows], [r["subset"] for r in rows], x_img,
                  text_features([r["prompt"] or "" for r in rows]))


def load_inputs(build: str) -> dict[str, dict[str, Inputs]]:
    """{config: {split: Inputs}} of a local build: every view's forget / retain / test split and every
    routing config's forget split. A routing config's row is a copy of its routed view's row, so its
    features are taken from there."""
    out: dict[str, dict[str, Inputs]] = {}
    for view in EVAL_VIEWS:
        for split in EVAL_SPLITS:
            rows = loader.rows(build, view, split, columns=["example_id", "subset", "prompt", "image"])
            out.setdefault(view, {})[split] = featurise(rows, f"{build}/{view}/{split}")
    for config in schema.ROUTING_CONFIGS:
        table = loader.load(build, config, "forget", columns=["example_id", "routed_view"])
        routed = dict(zip(table.column("example_id").to_pylist(), table.column("routed_view").to_pylist()))
        parts = []
        for view in sorted(set(routed.values())):
            src = out[view]["forget"]
            keep = [i for i, eid in enumerate(src.ids) if routed.get(eid) == view]
            parts.append(Inputs([src.ids[i] for i in keep], [src.subsets[i] for i in keep], src.x_img[keep], src.x_txt[keep]))
        merged = Inputs.concat(parts) if parts else out["multimodal"]["forget"]
        order = np.argsort(np.array(merged.ids, dtype=object), kind="stable")
        out[config] = {"forget": Inputs([merged.ids[i] for i in order], [merged.subsets[i] for i in order],
                                        merged.x_img[order], merged.x_txt[order])}
    forget, retain = len(out["multimodal"]["forget"]), len(out["multimodal"]["retain"])
    if not forget or not retain:
        missing = " and ".join(n for n, rows in (("forget", forget), ("retain", retain)) if not rows)
        raise SourceError(f"{build}: no {missing} examples ({forget} forget, {retain} retain rows in the multimodal "
                          "config): the forget set is the source's unsafe training examples and the retain set its "
                          "safe ones, so the source has none that were kept (the records the build quarantined are "
                          "in _build/quarantine/); an unlearning set, and its baselines, need both")
    return out


def _tensors(inputs: Inputs) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.from_numpy(np.ascontiguousarray(inputs.x_img)), torch.from_numpy(np.ascontiguousarray(inputs.x_txt))


def original_head(data: dict[str, dict[str, Inputs]], seed: int = 0) -> FusionHead:
    """The pre-unlearning head: fitted on the forget (label 1) and retain (label 0) rows of every view."""
    parts = [data[v][s] for v in EVAL_VIEWS for s in ("forget", "retain")]
    both = Inputs.concat(parts)
    labels = np.concatenate([np.full(len(data[v][s]), s == "forget") for v in EVAL_VIEWS for s in ("forget", "retain")])
    return fit_head(both.x_img, both.x_txt, labels, seed=seed)


def unlearn(head: FusionHead, forget: Inputs, retain: Inputs | None, method: str, seed: int = 0,
            lr: float = UNLEARN_LR, max_steps: int = MAX_STEPS,
            target: float | None = TARGET_REFUSAL) -> tuple[FusionHead, int]:
    """A copy of ``head`` unlearned on ``forget`` by ``method`` (``retain`` needed for
    gradient_difference), and the number of steps it took: full-batch Adam steps until at least
    ``target`` of the forget rows are refused, or ``max_steps`` (all of them when ``target`` is None)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; one of {', '.join(METHODS)}")
    if method == "gradient_difference" and (retain is None or not len(retain)):
        raise ValueError("gradient_difference needs retain rows")
    with deterministic_torch(seed):
        fx = FusionHead.joined(*_tensors(forget))  # joined once for every step
        rx = FusionHead.joined(*_tensors(retain)) if retain is not None else None
        model = copy.deepcopy(head)
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        for step in range(max_steps + 1):
            comply = model.comply_joined(fx)
            if step == max_steps or (target is not None and float((comply < 0).double().mean()) >= target):
                return model, step
            opt.zero_grad()
            # log sigmoid(z) = -softplus(-z): ascent on the forget NLL is descent on this
            loss = -nn.functional.softplus(-comply).mean()
            if method == "gradient_difference":
                loss = loss + RETAIN_WEIGHT * nn.functional.softplus(-model.comply_joined(rx)).mean()
            loss.backward()
            opt.step()
    raise AssertionError("unreachable")


def respond(head: FusionHead, inputs: Inputs) -> list[str]:
    """The head's answers: COMPLY_TEXT where p(COMPLY) >= 0.5 (comply logit >= 0), else REFUSAL_TEXT."""
    if not len(inputs):
        return []
    with deterministic_torch(0), torch.no_grad():
        logits = head.comply_logit(*_tensors(inputs)).numpy()
    return [COMPLY_TEXT if z >= 0 else REFUSAL_TEXT for z in logits]


def _predictions(head: FusionHead, data: dict[str, dict[str, Inputs]]) -> list[dict]:
    rows = []
    for view in EVAL_VIEWS:
        for split in EVAL_SPLITS:
            inputs = data[view][split]
            for eid, subset, response in zip(inputs.ids, inputs.subsets, respond(head, inputs)):
                rows.append({"example_id": eid, "group": view, "split": split, "subset": subset, "response": response})
    return rows


def _retain_for(config: str, data) -> Inputs:
    return data[config]["retain"] if "retain" in data[config] else data["multimodal"]["retain"]


def run_baselines(data: dict[str, dict[str, Inputs]], alpha: float = 0.5, seed: int = 0,
                  configs: tuple[str, ...] = TRAIN_CONFIGS, lr: float = UNLEARN_LR, target: float = TARGET_REFUSAL,
                  max_steps: int = MAX_STEPS) -> dict:
    """Every (training config, method) run, each scored by the evaluator on every view; and the table rows."""
    head = original_head(data, seed=seed)
    runs = [("original", "none", head, 0)]
    for config in configs:
        for method in METHODS:
            runs.append((config, method, *unlearn(head, data[config]["forget"], _retain_for(config, data), method,
                                                  seed, lr=lr, max_steps=max_steps, target=target)))
    results, rows = [], []
    for config, method, model, steps in runs:
        scored = evaluate(_predictions(model, data), alpha=alpha)
        groups = scored["groups"]
        results.append({"train_config": config, "method": method,
                        "forget_rows": 0 if config == "original" else len(data[config]["forget"]), "steps": steps,
                        "eval": {v: {k: groups[v][k] for k in ("forget", "utility", "s_alpha", "sets")} for v in EVAL_VIEWS}})
        mm = groups["multimodal"]
        rows.append({"train_config": config, "method": method, "steps": steps, "forget": mm["forget"], "utility": mm["utility"],
                     "s_alpha": mm["s_alpha"], **{f"s_alpha_{v}": groups[v]["s_alpha"] for v in TABLE_VIEWS}})
    return {"alpha": alpha, "seed": seed, "rows": rows, "runs": results,
            "settings": {"lr": lr, "target_refusal": target, "max_steps": max_steps, "retain_weight": RETAIN_WEIGHT,
                         "comply_text": COMPLY_TEXT, "refusal_text": REFUSAL_TEXT, "eval_views": list(EVAL_VIEWS)}}


def markdown_table(result: dict) -> str:
    """The table rows as Markdown (3 decimals): multimodal Forget, Utility, S_alpha, and S_alpha on the other views."""
    a = f"alpha={result['alpha']:g}"
    head = ["training view", "method", "steps", "Forget", "Utility", f"S ({a})",
            *(f"S ({a}, {v.replace('_', '-')})" for v in TABLE_VIEWS)]
    fmt = lambda x: "n/a" if x is None else f"{x:.3f}"  # noqa: E731
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in result["rows"]:
        cells = [r["train_config"], r["method"].replace("_", " "), str(r["steps"]), fmt(r["forget"]), fmt(r["utility"]), fmt(r["s_alpha"]),
                 *(fmt(r[f"s_alpha_{v}"]) for v in TABLE_VIEWS)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def card_tables(build: str, settings) -> dict:
    """The card's baselines (the dataset's declared ``card_baselines_beside``): ``baseline_table``'s Markdown."""
    return {"baseline_table": baseline_table(build)["markdown"]}


def baseline_table(build: str | Path, alpha: float = 0.5, seed: int = 0) -> dict:
    """For the card: ``run_baselines`` on a local build, with ``markdown`` (the table) and the rows."""
    result = run_baselines(load_inputs(str(build)), alpha=alpha, seed=seed)
    result["markdown"] = markdown_table(result)
    return result


def cli_parser() -> ArgumentParser:
    ap = ArgumentParser(prog="benchwright baseline vlm_unlearning", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="a built vlm_unlearning folder (local)")
    ap.add_argument("--out", help="write the full result here (JSON)")
    ap.add_argument("--markdown", help="write the table here (Markdown)")
    ap.add_argument("--alpha", type=alpha_option, default=0.5, help="S_alpha's weight on Forget, in [0, 1] (default 0.5)")
    ap.add_argument("--gamma", action=RefuseGamma, help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=0, help="seed of the heads' initialisation and training order")
    return ap


@parser_of(cli_parser)
def run_cli(argv=None) -> int:
    ns = cli_parser().parse_args(argv)
    t0 = time.process_time()
    result = baseline_table(ns.data, alpha=ns.alpha, seed=ns.seed)
    cpu = time.process_time() - t0
    if ns.out:
        with fsspec.open(ns.out, "wt", encoding="utf-8") as f:
            f.write(json.dumps(result, indent=2, sort_keys=True) + "\n")
    if ns.markdown:
        with fsspec.open(ns.markdown, "wt", encoding="utf-8") as f:
            f.write(result["markdown"])
    print(result["markdown"], end="")
    print(json.dumps({"runs": len(result["runs"]), "cpu_seconds": round(cpu, 1), "out": ns.out}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli())
