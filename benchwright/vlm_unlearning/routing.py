"""ModRoute routing: a visual-pressure score per forget example, user-supplied scores, and the routes.

**The head** (``FusionHead``) stands in for a VLM on the CPU: a fusion MLP over the fixed image and
text blocks of ``benchwright.vlm_unlearning.features`` (concatenated, 452 + 256 -> 64 tanh -> 1). It is
a two-action policy, COMPLY or REFUSE, with ``comply_logit(x) = margin - harm(x)``:

* ``harm(x)`` is trained to tell forget inputs (label 1) from retain inputs (label 0): what the model
  *knows* about which requests are forget content, and through which modality it recognises them.
  Class-balanced logistic loss, full-batch Adam, weight decay, a fixed number of steps.
* ``margin`` is then set above every training input's harm logit (``COMPLY_MARGIN`` more than the
  largest), so the model **complies with every training request**, forget ones included: the
  pre-unlearning model that holds the behaviour the forget set asks to remove (a jailbroken or
  never-aligned model answers harmful requests). Attack success on the forget set starts at 100%.

**The unlearning loss** of a forget example is the negative log-likelihood of its forget target,
COMPLY: ``L(x) = -log sigmoid(comply_logit(x))``, the loss gradient ascent raises.

**Visual pressure** of a forget example is the share of that loss's gradient that falls on the image,
taken with respect to one **modality gate** per block: the head reads ``x_m' = mean_m + s_m * (x_m -
mean_m)`` (``mean_m`` the block's mean over the examples the head was fitted on, ``s_m = 1`` the
example itself, ``s_m = 0`` the average input for that modality), and

    visual pressure = |dL/ds_img| / (|dL/ds_img| + |dL/ds_txt|),   dL/ds_m = grad_{x_m} L . (x_m - mean_m)

(0.5 when both are zero). ``dL/ds_m`` is the first-order change of the unlearning loss when the
example's modality ``m`` is swapped in for the average one: how much of the forget behaviour this
example draws from its image versus its text. Why gates and not the raw feature gradients
``||grad_{x_img} L|| / (||grad_{x_img} L|| + ||grad_{x_txt} L||)``: this head is close to linear in
its inputs (the evidence in both blocks is nearly linearly separable, so its tanh units work near
zero), so the raw gradient hardly changes from one example to the next. On the test's example set
whose role is visible only in the image for half the examples and only in the text for the other
half, the raw share is 0.429 for every forget example of both halves (0.42902 to 0.42909), while the
gated share averages 0.83 versus 0.17 and ranks an image-signal example above a text-signal one in
99.9% of pairs (``tests/test_vlm_unlearning_routing.py``). A VLM's gradient with respect to its
visual and text tokens varies per example by itself; the gates give the small head the same
per-example reading. Scores are rounded to 6 decimals so a routing does not hinge on the last bits
of a float.

``routing_score_source`` names what produced the scores: ``grad-share:mlp-head(<features>)@seed<N>``
here, or whatever a user states for scores from a real VLM (``read_scores``).

**Routes**: ``route`` sends the ``k = round_half_up(gamma * n)`` highest-scoring forget examples to
text-only (ties by ``example_id``) and keeps the rest multimodal, ModRoute's ``modroute_g{gamma}``;
``random_route`` picks the same ``k`` by a seeded stable hash, the paper's random-switching baseline
(``random_g{gamma}``).

Determinism: inputs are sorted by ``example_id`` before anything else, torch runs single-threaded with
deterministic algorithms and its own seeded generator, so the same examples in any order give the
same scores bit for bit.
"""
from __future__ import annotations

import contextlib
import csv
import io
import math

import fsspec
import numpy as np
import torch
from torch import nn

from benchwright import strict_json
from benchwright.torch_determinism import set_deterministic
from benchwright.errors import RecordError, SourceError
from benchwright.vlm_unlearning.features import (FEATURE_SOURCE, IMAGE_DIM, TEXT_DIM, image_features,
                                                 text_features)
from benchwright.vlm_unlearning.routes import random_route, route, route_size  # re-exported

__all__ = ["GAMMAS", "ROLES", "COMPLY_MARGIN", "FusionHead", "deterministic_torch", "fit_head",
           "gradient_share", "visual_pressure", "pressure_from_features", "read_scores", "route", "random_route", "route_size"]

GAMMAS = (0.25, 0.5, 0.75)
ROLES = ("forget", "retain")
HIDDEN = 64
FIT_STEPS = 300
FIT_LR = 1e-2
WEIGHT_DECAY = 1e-3
COMPLY_MARGIN = 2.0      # sigmoid(2) = 0.88: every training request is answered before unlearning
SCORE_DECIMALS = 6


class FusionHead(nn.Module):
    """Fusion MLP over [image block, text block] with a COMPLY logit ``margin - harm(x)``."""

    def __init__(self, hidden: int = HIDDEN):
        super().__init__()
        # tanh rather than ReLU: a smooth head has no dead units, so no example gets a zero gradient
        self.trunk = nn.Sequential(nn.Linear(IMAGE_DIM + TEXT_DIM, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.margin = nn.Parameter(torch.zeros(()))

    @staticmethod
    def joined(x_img: torch.Tensor, x_txt: torch.Tensor) -> torch.Tensor:
        """The head's input rows, [image block, text block]: a loop over fixed inputs joins them once."""
        return torch.cat([x_img, x_txt], dim=1)

    def harm(self, x_img: torch.Tensor, x_txt: torch.Tensor) -> torch.Tensor:
        return self.harm_joined(self.joined(x_img, x_txt))

    def harm_joined(self, x: torch.Tensor) -> torch.Tensor:
        return self.trunk(x).squeeze(1)

    def comply_logit(self, x_img: torch.Tensor, x_txt: torch.Tensor) -> torch.Tensor:
        return self.comply_joined(self.joined(x_img, x_txt))

    def comply_joined(self, x: torch.Tensor) -> torch.Tensor:
        return self.margin - self.harm_joined(x)


@contextlib.contextmanager
def deterministic_torch(seed: int):
    """Single thread, deterministic algorithms and a forked global RNG seeded with ``seed``; restores
    the caller's settings afterwards. Every torch computation here runs inside it: besides the
    determinism, a torch operation on more than one thread starts OpenMP's threads (libgomp's), which a
    forked child does not have, and its first parallel region then waits for ever (the build computes
    the card's baselines in a forked child of the process that fitted the routing head)."""
    threads, det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.set_num_threads(1)
    set_deterministic(True)  # not torch.use_deterministic_algorithms: it imports torch's compiler (~1 s)
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            yield
    finally:
        torch.set_num_threads(threads)
        set_deterministic(det, warn_only=warn_only)


def _balanced_weights(labels: torch.Tensor) -> torch.Tensor:
    """Per-example weights giving each class half the loss (forget and retain sets differ in size)."""
    pos = float(labels.sum())
    neg = float(len(labels)) - pos
    return torch.where(labels > 0.5, 0.5 / max(pos, 1.0), 0.5 / max(neg, 1.0))


def fit_head(x_img: np.ndarray, x_txt: np.ndarray, is_forget: np.ndarray, seed: int = 0,
             steps: int = FIT_STEPS) -> FusionHead:
    """The pre-unlearning head: ``harm`` fitted to the forget/retain role, ``margin`` set so it
    complies with every row given (``COMPLY_MARGIN`` above the largest harm logit)."""
    with deterministic_torch(seed):
        x = FusionHead.joined(torch.from_numpy(np.ascontiguousarray(x_img)), torch.from_numpy(np.ascontiguousarray(x_txt)))
        y = torch.from_numpy(np.asarray(is_forget, dtype=np.float32))
        w = _balanced_weights(y)
        head = FusionHead()
        opt = torch.optim.Adam(head.trunk.parameters(), lr=FIT_LR, weight_decay=WEIGHT_DECAY)
        for _ in range(steps):
            opt.zero_grad()
            loss = (w * nn.functional.binary_cross_entropy_with_logits(head.harm_joined(x), y, reduction="none")).sum()
            loss.backward()
            opt.step()
        with torch.no_grad():
            head.margin.fill_(float(head.harm_joined(x).max()) + COMPLY_MARGIN)
    return head


def gradient_share(head: FusionHead, x_img: np.ndarray, x_txt: np.ndarray,
                   mean_img: np.ndarray, mean_txt: np.ndarray) -> np.ndarray:
    """Per row: the image gate's share of the unlearning-loss gradient (see the module doc)."""
    xi = torch.from_numpy(np.ascontiguousarray(x_img)).requires_grad_(True)
    xt = torch.from_numpy(np.ascontiguousarray(x_txt)).requires_grad_(True)
    with deterministic_torch(0):
        # rows do not interact in the head, so the gradient of the sum is each row's own gradient
        loss = nn.functional.softplus(-head.comply_logit(xi, xt)).sum()   # -log sigmoid(comply)
        g_img, g_txt = (g.double().numpy() for g in torch.autograd.grad(loss, [xi, xt]))
    # dL/ds_m at s_m = 1: the chain rule through x_m' = mean_m + s_m * (x_m - mean_m)
    d_img = np.abs((g_img * (x_img.astype(np.float64) - mean_img)).sum(axis=1))
    d_txt = np.abs((g_txt * (x_txt.astype(np.float64) - mean_txt)).sum(axis=1))
    total = d_img + d_txt
    return np.where(total > 0, d_img / np.where(total > 0, total, 1.0), 0.5)


def _check_examples(examples: list[dict]) -> list[dict]:
    seen = set()
    for i, ex in enumerate(examples):
        eid = ex.get("example_id") if isinstance(ex, dict) else None
        where = f"visual_pressure examples[{i}]" + (f"#example_id={eid}" if eid else "")
        if not isinstance(eid, str) or not eid:
            raise RecordError(where, "example_id: a non-empty string is required")
        if eid in seen:
            raise RecordError(where, "example_id: duplicate")
        seen.add(eid)
        if ex.get("role") not in ROLES:
            raise RecordError(where, f"role: {ex.get('role')!r} is not one of {', '.join(ROLES)}")
        if not isinstance(ex.get("prompt"), str):
            raise RecordError(where, "prompt: a string is required")
        if not isinstance(ex.get("image"), (bytes, bytearray)) or not ex["image"]:
            raise RecordError(where, "image: visual pressure needs the example's encoded image bytes")
    return sorted(examples, key=lambda ex: ex["example_id"])


def visual_pressure(examples: list[dict], seed: int = 0) -> tuple[dict[str, float], str]:
    """{example_id: visual pressure in [0, 1]} for every forget example, and ``routing_score_source``.

    ``examples``: dicts with ``example_id``, ``image`` (encoded bytes), ``prompt``, ``role``
    (``forget``/``retain``); ``response`` is not an input (here the forget target is the COMPLY
    action, not a text). The head is fitted on all of them, then each forget example's gradient
    share is read off it."""
    rows = _check_examples(examples)
    x_img = np.stack([image_features(ex["image"], f"example_id={ex['example_id']}") for ex in rows])
    x_txt = text_features([ex["prompt"] for ex in rows])
    return pressure_from_features([ex["example_id"] for ex in rows], [ex["role"] for ex in rows], x_img, x_txt, seed)


def pressure_from_features(ids: list[str], roles: list[str], x_img: np.ndarray, x_txt: np.ndarray,
                           seed: int = 0) -> tuple[dict[str, float], str]:
    """``visual_pressure`` of examples whose features are computed already (``features.image_features``
    of the image, ``text_features`` of the prompt; row ``i`` is ``ids[i]``, in any order): the same
    scores bit for bit, so the features can be computed where each example is built."""
    order = sorted(range(len(ids)), key=ids.__getitem__)  # the head sees the rows by example_id
    ids, roles = [ids[i] for i in order], [roles[i] for i in order]
    x_img, x_txt = np.asarray(x_img, dtype=np.float32)[order], np.asarray(x_txt, dtype=np.float32)[order]
    for i, eid in enumerate(ids):
        if i and eid == ids[i - 1]:
            raise RecordError(f"visual_pressure #example_id={eid}", "example_id: duplicate")
    is_forget = np.array([role == "forget" for role in roles], dtype=bool)
    if not is_forget.any() or is_forget.all():
        raise SourceError("visual_pressure: the head needs both forget and retain examples "
                          f"(got {int(is_forget.sum())} forget, {int((~is_forget).sum())} retain)")
    head = fit_head(x_img, x_txt, is_forget, seed=seed)
    share = gradient_share(head, x_img[is_forget], x_txt[is_forget],
                           x_img.astype(np.float64).mean(axis=0), x_txt.astype(np.float64).mean(axis=0))
    forget_ids = [eid for eid, forget in zip(ids, is_forget) if forget]
    scores = {eid: round(float(s), SCORE_DECIMALS) for eid, s in zip(forget_ids, share)}
    return scores, f"grad-share:mlp-head({FEATURE_SOURCE})@seed{seed}"


# --------------------------------------------------------------------------- user-supplied scores


def _score_value(value, locator: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise RecordError(locator, f"score: {value!r} is not a number")
    try:
        score = float(value)
    except ValueError:
        raise RecordError(locator, f"score: {value!r} is not a number") from None
    except OverflowError:  # an integer past a float's range (10^400)
        raise RecordError(locator, f"score: {str(value)[:20]}... ({len(str(value))} digits) is not a finite number "
                                   "in [0, 1]") from None
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        raise RecordError(locator, f"score: {value!r} is not a finite number in [0, 1]")
    return score


def _put(scores: dict, eid, value, locator: str) -> None:
    if not isinstance(eid, str) or not eid:
        raise RecordError(locator, f"example_id: {eid!r} is not a non-empty string")
    if eid in scores:
        raise RecordError(locator, f"example_id: {eid!r} appears twice")
    scores[eid] = _score_value(value, locator)


def read_scores(url: str) -> dict[str, float]:
    """Scores a user supplies (e.g. gradient shares from LLaVA on a GPU), from any fsspec URL:

    * ``.json``: one object ``{example_id: score}``;
    * ``.jsonl``: one object per line with ``example_id`` and ``score``;
    * ``.csv``: a header with ``example_id`` and ``score`` columns.

    Every score must be a finite number in [0, 1]; a bad value, a missing field or a repeated id
    raises ``RecordError`` naming the file and the line (or key)."""
    try:
        with fsspec.open(url, "rt", encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"{url}: cannot read the score file: {exc}") from exc
    scores: dict[str, float] = {}
    name = url.rsplit("/", 1)[-1].lower()
    if name.endswith(".jsonl"):
        for n, line in strict_json.json_lines(text):
            try:
                row = strict_json.loads(line)
            except ValueError as exc:  # malformed, a repeated key, an integer past Python's digit limit
                raise RecordError(f"{url}:{n}", f"not JSON: {getattr(exc, 'msg', exc)}") from None
            if not isinstance(row, dict) or "example_id" not in row or "score" not in row:
                raise RecordError(f"{url}:{n}", "expected an object with example_id and score")
            _put(scores, row["example_id"], row["score"], f"{url}:{n}")
    elif name.endswith(".json"):
        try:
            obj = strict_json.loads(text)  # a repeated example id is an error, not a silently kept last score
        except ValueError as exc:
            raise RecordError(f"{url}:{getattr(exc, 'lineno', 1)}", f"not JSON: {getattr(exc, 'msg', exc)}") from None
        if not isinstance(obj, dict):
            raise RecordError(url, "expected one JSON object {example_id: score}")
        for eid, value in obj.items():
            _put(scores, eid, value, f"{url}#{eid}")
    elif name.endswith(".csv"):
        reader = csv.DictReader(io.StringIO(text))
        if not reader.fieldnames or not {"example_id", "score"} <= set(reader.fieldnames):
            raise RecordError(f"{url}:1", "the header must name example_id and score")
        for row in reader:
            _put(scores, row["example_id"], row["score"], f"{url}:{reader.line_num}")
    else:
        raise SourceError(f"{url}: a score file is .json, .jsonl or .csv")
    if not scores:
        raise SourceError(f"{url}: no scores")
    return scores
