"""The learned head: residuals on the lift from a small MLP (torch, CPU), which parts of it to use
chosen on video-level folds inside train."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from benchwright.baselines.wildbox.common import (
    FIRST_CATEGORY_ID, N_CLASSES, N_COARSE, SPECIES, _box_center, _box_hw, _classes, _image_size, _predictions,
    backproject, class_priors,
)
from benchwright.baselines.wildbox.lift import base_depth, frame_median, ground_plane_depth, pinhole_depth
from benchwright.baselines.wildbox.score import fit_score_model, score_probability
from benchwright.loaders.wildbox import COARSE_OF_SPECIES, curriculum_stages
from benchwright.schemas import wildbox as schema


# Learned head defaults, chosen on a video-level two-fold split inside train (never on validation).
DEFAULT_EPOCHS = 60
LEARNED_CONFIG = {
    "hidden": 128,
    "dropout": 0.3,
    "batch_size": 256,
    "lr": 2e-3,
    "weight_decay": 0.05,
    "input_noise": 1.0,          # std of Gaussian noise on the standardised features while training
    "coarse_fraction": 0.25,     # share of the epochs trained on the coarse (zebras merged) labels
    "rotation_weight": 0.5,      # symmetric geodesic angle (rad) next to the L1 terms (log units)
    "offset_weight": 1.0,        # L1 on the projected-centre offset (in 2D box sizes)
    "depth_residual": 1.0,       # multiplies the learned log-depth correction (0: the lift's depth)
    "uncertainty": True,         # Laplace NLL on log depth (predicts the scale b)
    "score": "tp",               # tp | size | depth_scale | relative (see _assemble)
    "select_folds": 2,           # video-level folds inside train that choose the components (< 2: all)
    "select_tolerance": 1.0,     # AP points: the fewest components within this of the best fold score win
    # The contexts whose selection keeps a part only if it raises the score on EVERY held-out fold (not
    # just their mean). Chosen on design draws 10-12 for the segment context (the per-image head's
    # selection, measured before, is left as it was).
    "select_every_fold": ("segment",),
    # image | segment: the depth the residuals correct (``base_depth``). The default is per-image, as
    # every other default head; segment context is an option, compared with the segment lift.
    "context": "image",
}
LOG_B_INIT = math.log(0.05)      # the log-depth error scale the uncertainty output starts from
NUM_THREADS = 1  # at most 2 are allowed; 1 is ~5x faster for this tiny MLP on a busy 2-core machine


# ================================================================================== curriculum
def _class_encoding(stage: str, labels: np.ndarray) -> np.ndarray:
    """(N, 5 + 6) class input: the coarse one-hot, then the fine one-hot (zero in the coarse stage).

    The fine stage fills both blocks (the coarse one derived from the species), so what the
    network learned per coarse class in the first epochs carries over to the fine stage.
    """
    labels = np.asarray(labels, np.int64)
    out = np.zeros((len(labels), N_COARSE + N_CLASSES), np.float32)
    if stage == "coarse":
        out[np.arange(len(labels)), labels] = 1.0
    elif stage == "fine":
        out[np.arange(len(labels)), COARSE_OF_SPECIES[labels]] = 1.0
        out[np.arange(len(labels)), N_COARSE + labels] = 1.0
    else:
        raise ValueError(f"unknown curriculum stage {stage!r}")
    return out


# ================================================================================ learned head
CONTINUOUS_FEATURES = (
    # the box and the camera
    "cx/W", "cy/H", "w/W", "h/H", "log(w/h)", "ray_x", "ray_y", "fx/W", "fy/H", "px/W", "py/H",
    # the two lift depths
    "log z_ground", "log z_pinhole / frame median",
    # the box relative to its frame
    "log h - frame median", "log sqrt(wh) - frame median", "ray_x - frame median", "ray_y - frame median",
    "log(w/h) - frame median",
    # apparent size at the ground-plane depth (normalised size), per box and frame median
    "log(z_ground h / f_y)", "log(z_ground w / f_x)", "frame median log(z_ground h / f_y)",
    "frame median log(z_ground w / f_x)", "frame median log(z_ground sqrt(wh) / f_y)",
    # the frame's size gradient along the image vertical, applied to the box
    "frame size slope x (ray_y - frame median)", "frame size slope", "log n_boxes (frame)",
    # the segment context's scale on the ground-plane depth (0 with context "image")
    "log z_base / z_ground",
)
SLOPE_EPS = 1e-3  # shrinks the frame's size slope when its boxes span little of the image vertical


def _frame_mean(values, inv, counts) -> np.ndarray:
    return (np.bincount(inv, weights=values, minlength=len(counts)) / counts)[inv]


def learned_features(priors: dict, target: dict, context: str = "image") -> np.ndarray:
    """(N, len(CONTINUOUS_FEATURES)) features from the 2D boxes, K, image size and the train priors.

    Besides the box and the camera: the two lift depths (ground plane; class-height pinhole
    scaled to a frame median of 1); the box relative to the frame's medians (how much nearer,
    lower or more side-on than the frame's typical animal it is -- the segment normalisation is
    about the median); the apparent size at the ground-plane depth, i.e. the normalised size a
    box would have there, per box and as the frame's median (one herd shares one scale); the
    frame's size gradient: the slope of log sqrt(wh) against the ray's y over the frame's boxes
    (how fast animals shrink towards the top of the image, which tells the ground's tilt),
    shrunk by ``SLOPE_EPS`` and times the box's relative ray y; last, how much the ``context``'s
    base depth rescales the ground-plane depth (``base_depth``). Frame statistics use the oracle
    2D boxes of the same image only (and, with context "segment", the segment's other frames);
    no 3D ground truth of the target enters.
    """
    K = np.asarray(target["K"], float)
    W, H = _image_size(target)
    b = np.asarray(target["bbox2d_tight"], float)
    img = np.asarray(target["image_id"], np.int64)
    w, h = _box_hw(b)
    c = _box_center(b)
    ray = backproject(c, K, np.ones(len(b)))
    z_g = ground_plane_depth(priors, target)
    z_pin = pinhole_depth(priors, target)
    _, inv, counts = np.unique(img, return_inverse=True, return_counts=True)

    def fm(v):
        return frame_median(v, img)

    log_h, log_s, log_ar = np.log(h), 0.5 * np.log(w * h), np.log(w / h)
    app_h, app_w = np.log(z_g * h / K[:, 1, 1]), np.log(z_g * w / K[:, 0, 0])
    app_s = np.log(z_g * np.sqrt(w * h) / K[:, 1, 1])
    ry = ray[:, 1] - _frame_mean(ray[:, 1], inv, counts)
    ls = log_s - _frame_mean(log_s, inv, counts)
    slope = _frame_mean(ry * ls, inv, counts) / (_frame_mean(ry * ry, inv, counts) + SLOPE_EPS)
    ry_med = ray[:, 1] - fm(ray[:, 1])
    return np.column_stack([
        c[:, 0] / W, c[:, 1] / H, w / W, h / H, log_ar, ray[:, 0], ray[:, 1],
        K[:, 0, 0] / W, K[:, 1, 1] / H, K[:, 0, 2] / W, K[:, 1, 2] / H,
        np.log(z_g), np.log(z_pin / fm(z_pin)),
        log_h - fm(log_h), log_s - fm(log_s), ray[:, 0] - fm(ray[:, 0]), ry_med, log_ar - fm(log_ar),
        app_h, app_w, fm(app_h), fm(app_w), fm(app_s),
        slope * ry_med, slope, np.log(counts[inv]),
        np.log(base_depth(priors, target, context) / z_g),
    ]).astype(np.float64)


def _targets(priors: dict, a: dict) -> dict[str, np.ndarray]:
    """Training targets of the train split (3D ground truth of train only)."""
    cls = _classes(a)
    center = np.asarray(a["center_cam"], float)
    K = np.asarray(a["K"], float)
    hom = np.einsum("nij,nj->ni", K, center)
    uv = hom[:, :2] / hom[:, 2:3]  # the projected 3D centre (z > 0 for every published box)
    b = np.asarray(a["bbox2d_tight"], float)
    w, h = _box_hw(b)
    c = _box_center(b)
    return {
        "log_z": np.log(center[:, 2]),
        "log_dims": np.log(np.maximum(np.asarray(a["dimensions"], float), 1e-9)),
        "R": np.asarray(a["R_cam"], float),
        "offset": np.column_stack([(uv[:, 0] - c[:, 0]) / w, (uv[:, 1] - c[:, 1]) / h]),
        "prior_log_dims": np.log(priors["dims"][cls]),
    }


def _torch():
    import torch

    torch.set_num_threads(NUM_THREADS)
    return torch


def _build_model(n_in: int, hidden: int, dropout: float = 0.0):
    torch = _torch()
    nn = torch.nn
    last = nn.Linear(hidden, N_OUTPUTS)
    # Zero output layer: before training every residual is 0, so the head predicts exactly the lift.
    nn.init.zeros_(last.weight)
    nn.init.zeros_(last.bias)
    return nn.Sequential(
        nn.Linear(n_in, hidden), nn.SiLU(), nn.Dropout(dropout),
        nn.Linear(hidden, hidden), nn.SiLU(), nn.Dropout(dropout),
        nn.Linear(hidden, hidden), nn.SiLU(), nn.Dropout(dropout),
        last,
    )


def _gram_schmidt(x6):
    """(N, 6) -> (N, 3, 3) rotation whose first two columns are the orthonormalised halves."""
    torch = _torch()
    a1, a2 = x6[:, 0:3], x6[:, 3:6]
    b1 = torch.nn.functional.normalize(a1, dim=1)
    b2 = torch.nn.functional.normalize(a2 - (b1 * a2).sum(1, keepdim=True) * b1, dim=1)
    b3 = torch.cross(b1, b2, dim=1)
    return torch.stack([b1, b2, b3], dim=2)


# Outputs, all residuals on the lift (zero = the lift): log depth, log [W, H, L], a rotation in the
# 6D form applied to the class-mean rotation, the projected centre's offset from the 2D box centre
# (2, in box sizes), and the log Laplace scales b of the learned depth's and the lift depth's errors.
N_OUTPUTS = 1 + 3 + 6 + 2 + 1 + 1
_IDENTITY_6D = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0)
# The residual parts the fold selection may switch on; "score" = the uncertainty score instead of the lift's.
COMPONENTS = ("depth", "offset", "dims", "rotation", "score")


def _decode(out, depth_scale: float = 1.0):
    """Network output -> (log-depth residual, log-dims residual, rotation residual dR (N, 3, 3),
    offset, log b of the learned depth, log b of the lift's depth). The predicted rotation is
    R_prior @ dR; dR = Gram-Schmidt(identity + output), the identity exactly for a zero output."""
    torch = _torch()
    eye = torch.tensor(_IDENTITY_6D, dtype=out.dtype)
    return (depth_scale * out[:, 0], out[:, 1:4], _gram_schmidt(eye + out[:, 4:10]), out[:, 10:12],
            out[:, 12] + LOG_B_INIT, out[:, 13] + LOG_B_INIT)


# A cuboid is the same box under a half turn about any of its local axes: R and R @ F give
# identical corners (as a set) for these F, so the rotation loss takes the nearest of the four.
_BOX_FLIPS = ((1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1))


def _geodesic(Ra, Rb):
    """Smallest rotation angle (rad) from Ra to Rb @ F over the box symmetries F (``_BOX_FLIPS``)."""
    torch = _torch()
    diag = (Ra.transpose(1, 2) @ Rb).diagonal(dim1=1, dim2=2)  # trace(Ra^T Rb F) = diag . f
    flips = torch.tensor(_BOX_FLIPS, dtype=diag.dtype)
    cos = ((diag @ flips.T).max(dim=1).values - 1) / 2
    return torch.acos(cos.clamp(-1 + 1e-6, 1 - 1e-6))


def _laplace_nll(abs_err, log_b):
    """Laplace NLL of a log-depth error up to a constant: |error| / b + log b (0 at b = b0, error 0)."""
    torch = _torch()
    return abs_err * torch.exp(-log_b) + log_b - LOG_B_INIT


def train_learned(train: dict, epochs: int = DEFAULT_EPOCHS, seed: int = 0, checkpoint=None,
                  progress: bool = True, config: dict | None = None) -> dict:
    """Train the residual head on the train split and choose which of its parts to use; returns the bundle.

    ``_fit`` trains the network on all of train; ``select_components`` then picks, on
    video-level folds inside train (``video_folds``), the subset of ``COMPONENTS`` whose
    corrections raise the fold AP-BEV@0.25 (every other part stays the lift's). With
    ``select_folds`` < 2, or too few train videos for folds, every component is used.
    ``config`` overrides entries of ``LEARNED_CONFIG``. The bundle (state_dict, feature mean /
    std, class priors, species and coarse class lists, config, loss history, components,
    selection) is written with ``torch.save`` when ``checkpoint`` is a path.
    """
    cfg = {**LEARNED_CONFIG, **(config or {})}
    unknown = set(cfg) - set(LEARNED_CONFIG)
    if unknown:
        raise ValueError(f"unknown learned-head settings {sorted(unknown)}")
    from benchwright.progress import Progress

    with Progress("auto" if progress else "off", prefix="[wildbox]").phase("learned head") as phase:
        bundle = _fit(train, epochs, seed, cfg, phase.task("training", epochs, "epochs"))
        selection = select_components(train, epochs, seed, cfg, phase)
    bundle["components"] = list(selection["components"])
    bundle["selection"] = selection
    if checkpoint is not None:
        save_checkpoint(bundle, checkpoint)
    return bundle


def _fit(train: dict, epochs: int, seed: int, cfg: dict, progress=None) -> dict:
    """Train the MLP on ``train`` (CPU, ``NUM_THREADS`` threads); the bundle without a component choice.

    Inputs: ``learned_features`` (standardised with train mean / std) and the class one-hot of
    the current curriculum stage (``curriculum_stages``: the first ``coarse_fraction`` of the
    epochs on the coarse labels, then the fine ones; see ``_class_encoding``).
    Outputs (``_decode``), residuals on the lift: log depth (on the ground-plane lift's z), log
    [W, H, L] (on the class median), a rotation applied to the class mean rotation (6D form,
    Zhou et al. 2019), the projected 3D centre's offset from the 2D box centre in box widths /
    heights, and the log Laplace scales b of the log-depth errors of the learned depth and of
    the lift's depth. The output layer starts at zero, so the untrained head is the lift.
    Loss: Laplace NLL on the learned log depth (|error| / b + log b; plain L1 with
    ``uncertainty=False``) and on the lift's (its b only) + L1 on log dimensions +
    ``rotation_weight`` x geodesic angle to the nearest of the box's four symmetric rotations +
    ``offset_weight`` x L1 on the offset. AdamW (weight decay pulls the residuals back towards
    the lift), cosine learning rate, dropout and Gaussian input noise (the train split has few
    segments; without them the network memorises each segment's camera).

    Determinism: ``torch.manual_seed(seed)``, a seeded shuffling / noise generator,
    deterministic algorithms (``benchwright.torch_determinism``: the flag without torch's compiler).
    """
    from benchwright.torch_determinism import set_deterministic  # imports torch: only a head that trains

    torch = _torch()
    torch.manual_seed(seed)
    set_deterministic(True)
    priors = class_priors(train)
    context = cfg.get("context", "image")
    mean, std, t = _training_tensors(priors, train, context)
    xn, stages = t["xn"], t["stages"]

    n_in = xn.shape[1] + N_COARSE + N_CLASSES
    model = _build_model(n_in, cfg["hidden"], cfg["dropout"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"])
    n = len(xn)
    bs = int(cfg["batch_size"])
    steps_per_epoch = max(1, math.ceil(n / bs))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, epochs * steps_per_epoch))
    gen = torch.Generator().manual_seed(seed)
    coarse_epochs = round(cfg["coarse_fraction"] * epochs)
    history = []
    model.train()
    for epoch in range(epochs):
        stage = "coarse" if epoch < coarse_epochs else "fine"
        onehot = stages[stage]
        perm = torch.randperm(n, generator=gen)
        total = 0.0
        for s in range(0, n, bs):
            idx = perm[s:s + bs]
            xb = xn[idx]
            if cfg["input_noise"] > 0:
                xb = xb + cfg["input_noise"] * torch.randn(xb.shape, generator=gen)
            loss = _batch_loss(model(torch.cat([xb, onehot[idx]], dim=1)), t, idx, cfg)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        history.append({"epoch": epoch, "stage": stage, "loss": total / n})
        if progress is not None:
            progress.note = f"{stage} stage, loss {total / n:.4f}"
            progress.advance()
    model.eval()
    return {
        "state_dict": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "feature_mean": mean, "feature_std": std, "features": list(CONTINUOUS_FEATURES),
        "priors": {k: np.asarray(v) for k, v in priors.items()},
        "species": list(SPECIES), "coarse_classes": list(schema.COARSE_CLASSES),
        "config": {**cfg, "epochs": epochs, "seed": seed, "coarse_epochs": coarse_epochs, "n_train": int(n)},
        "history": history, "components": list(COMPONENTS), "score_model": fit_score_model(priors, train, context),
    }


def _training_tensors(priors: dict, train: dict, context: str) -> tuple[np.ndarray, np.ndarray, dict]:
    """(feature mean, feature std, tensors): the standardised features ``xn``, the targets ``t_*``,
    the lift's log depth ``p_log_z`` and its error ``lift_err``, the class priors' log dimensions and
    rotation ``p_log_dims`` / ``p_R``, and the class inputs of each curriculum stage ``stages``."""
    torch = _torch()
    x = learned_features(priors, train, context)
    mean, std = x.mean(axis=0), x.std(axis=0)
    std = np.where(std > 1e-12, std, 1.0)
    tg = _targets(priors, train)
    cls = _classes(train)
    t = {"xn": torch.as_tensor((x - mean) / std, dtype=torch.float32)}
    for name, key in (("t_log_z", "log_z"), ("t_log_dims", "log_dims"), ("t_R", "R"), ("t_off", "offset")):
        t[name] = torch.as_tensor(tg[key], dtype=torch.float32)
    t["p_log_z"] = torch.as_tensor(np.log(base_depth(priors, train, context)), dtype=torch.float32)
    t["lift_err"] = (t["p_log_z"] - t["t_log_z"]).abs()
    t["p_log_dims"] = torch.as_tensor(tg["prior_log_dims"], dtype=torch.float32)
    t["p_R"] = torch.as_tensor(priors["R"][cls], dtype=torch.float32)
    t["stages"] = {name: torch.as_tensor(_class_encoding(name, labels)) for name, labels in curriculum_stages(train)}
    return mean, std, t


def _batch_loss(out, t: dict, idx, cfg: dict):
    """The training loss of one batch (rows ``idx`` of ``_training_tensors``' tensors ``t``) from
    the network's output ``out``: see ``_fit``."""
    d_log_z, d_log_dims, dR, off, log_b, log_b_lift = _decode(out, cfg["depth_residual"])
    depth = (t["p_log_z"][idx] + d_log_z - t["t_log_z"][idx]).abs()
    if cfg["uncertainty"]:
        depth = _laplace_nll(depth, log_b) + _laplace_nll(t["lift_err"][idx], log_b_lift)
    return (depth.mean() + (t["p_log_dims"][idx] + d_log_dims - t["t_log_dims"][idx]).abs().mean()
            + cfg["rotation_weight"] * _geodesic(t["p_R"][idx] @ dR, t["t_R"][idx]).mean()
            + cfg["offset_weight"] * (off - t["t_off"][idx]).abs().mean())


# ========================================================================= component selection
def video_folds(a: dict, n_folds: int) -> np.ndarray | None:
    """(N,) fold index per box for a video-level split inside train, or None if none is possible.

    A video counts for its most frequent species. Per species, its videos in stable-hash order
    are dealt to the folds in turn, so every fold holds out about 1 / n_folds of each species'
    videos; a species with fewer videos than folds stays in training throughout (-1). None
    when no species has ``n_folds`` videos (nothing could be held out).
    """
    from benchwright.hashing import stable_hash64

    video = np.asarray(a["video_id"]).astype(str)
    cls = _classes(a)
    fold = np.full(len(video), -1, np.int64)
    if n_folds < 2 or len(video) == 0:
        return None
    videos, inv = np.unique(video, return_inverse=True)
    counts = np.zeros((len(videos), N_CLASSES), np.int64)
    np.add.at(counts, (inv, cls), 1)
    main = counts.argmax(axis=1)  # ties: the lowest species index
    held_out = False
    for k in range(N_CLASSES):
        vids = sorted(np.flatnonzero(main == k), key=lambda v: (stable_hash64(str(videos[v])), str(videos[v])))
        if len(vids) < n_folds:
            continue
        held_out = True
        for rank, v in enumerate(vids):
            fold[inv == v] = rank % n_folds
    return fold if held_out else None


def ap_bev_key(metrics: dict, threshold: str = "0.25") -> str:
    """The key of the evaluator's default AP-BEV protocol in its metrics: ``ap_bev_voc11@t`` when it
    reports the WildBox authors' VOC 11-point AP-BEV, else ``ap_bev@t`` (COCO 101-point)."""
    voc = f"ap_bev_voc11@{threshold}"
    return voc if voc in metrics else f"ap_bev@{threshold}"


def _subset(a: dict, mask) -> dict:
    out = {k: np.asarray(v)[mask] for k, v in a.items() if k != "image_ids"}
    out["image_ids"] = np.unique(np.asarray(out["image_id"], np.int64))
    return out


def _combinations() -> list[tuple[str, ...]]:
    """Every subset of ``COMPONENTS``, smallest first (the empty one is the lift)."""
    from itertools import combinations

    return [c for r in range(len(COMPONENTS) + 1) for c in combinations(COMPONENTS, r)]


def select_components(train: dict, epochs: int, seed: int, cfg: dict, phase=None) -> dict:
    """Which residual parts to use, chosen on video-level folds inside train (never on validation).

    For each fold of ``video_folds(train, select_folds)`` a network is trained (same seed and
    settings) on the other folds and predicts the held-out videos; every subset of
    ``COMPONENTS`` (the parts not in it fall back to the lift) is scored with the evaluator's
    AP-BEV@0.25 macro (its default protocol) on each held-out fold. Among the subsets whose mean
    is within ``select_tolerance`` AP points of the best, the one with the fewest components
    wins (then the higher mean): a correction stays at zero unless it clearly helps on held-out
    videos, and the empty subset -- the lift itself -- wins unless something beats it by more
    than the tolerance (fold scores of near-equal subsets differ by noise; parsimony keeps the
    choice stable). Returns {components, folds, scores {"+"-joined subset or "lift": mean fold AP}}.
    ``phase``: a ``benchwright.progress`` phase, given a task counting the folds' training epochs.
    """
    n_folds = int(cfg.get("select_folds", 0))
    folds = video_folds(train, n_folds) if n_folds >= 2 else None
    if folds is None:
        why = "disabled" if n_folds < 2 else "no species has enough train videos for the folds"
        return {"components": list(COMPONENTS), "folds": 0, "scores": {}, "note": why}
    from benchwright.evaluation import wildbox as ev

    combos = _combinations()
    per_fold = np.zeros((n_folds, len(combos)))
    progress = phase.task(f"component selection ({n_folds} folds)", n_folds * epochs, "epochs") if phase else None
    for k in range(n_folds):
        held = folds == k
        fit = _fit(_subset(train, ~held), epochs, seed, cfg, progress)
        target = _subset(train, held)
        raw = _raw_outputs(fit, target)
        gt = {key: target[key] for key in ("image_id", "bbox2d_tight", "bbox2d_proj", "center_cam", "dimensions",
                                           "R_cam")}
        gt["category_id"] = _classes(target) + FIRST_CATEGORY_ID
        for i, combo in enumerate(combos):
            m = ev.evaluate(gt, _assemble(fit, target, raw, combo), image_ids=target["image_ids"], ap_bev_only=True)
            per_fold[k, i] = m[ap_bev_key(m)]["macro"] or 0.0
    totals = per_fold.mean(axis=0)
    index = {c: i for i, c in enumerate(combos)}
    if cfg.get("context", "image") in tuple(cfg.get("select_every_fold", ())):
        # A part is kept only if it helps on EVERY held-out fold: each part of an eligible subset
        # raises every fold's score over the same subset without it (the lift is always eligible).
        eligible = np.array([all((per_fold[:, i] > per_fold[:, index[tuple(x for x in c if x != p)]]).all()
                                 for p in c) for i, c in enumerate(combos)])
    else:
        eligible = np.ones(len(combos), bool)
    ok = np.flatnonzero(eligible)
    near = ok[totals[ok] >= totals[ok].max() - float(cfg.get("select_tolerance", 0.0)) - 1e-9]
    best = min(near, key=lambda i: (len(combos[i]), -totals[i], i))
    names = [("+".join(c) or "lift") for c in combos]
    return {"components": list(combos[best]), "folds": n_folds,
            "scores": {n: float(v) for n, v in zip(names, totals)},
            "fold_scores": {n: [float(v) for v in per_fold[:, i]] for i, n in enumerate(names)}}


def save_checkpoint(bundle: dict, path) -> Path:
    """``torch.save`` of the bundle (state_dict, normalisation stats, priors, class list, config)."""
    torch = _torch()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(bundle, path)
    return path


def load_checkpoint(path) -> dict:
    torch = _torch()
    bundle = torch.load(Path(path), map_location="cpu", weights_only=False)
    if list(bundle.get("species", [])) != list(SPECIES):
        raise ValueError(f"{path}: checkpoint classes {bundle.get('species')} are not WildBox's {list(SPECIES)}")
    return bundle


def _raw_outputs(bundle: dict, target: dict) -> dict[str, np.ndarray]:
    """The network's residuals on ``target`` in float64 (see ``_decode``)."""
    torch = _torch()
    cfg = bundle["config"]
    x = learned_features(bundle["priors"], target, cfg.get("context", "image"))
    xn = (x - bundle["feature_mean"]) / bundle["feature_std"]
    net = _build_model(x.shape[1] + N_COARSE + N_CLASSES, cfg["hidden"], cfg.get("dropout", 0.0))
    net.load_state_dict(bundle["state_dict"])
    net.eval()
    with torch.no_grad():
        inp = torch.cat([torch.as_tensor(xn, dtype=torch.float32),
                         torch.as_tensor(_class_encoding("fine", _classes(target)))], dim=1)
        out = net(inp).double()  # float64 from here: a zero residual leaves the lift bit-exact
        parts = _decode(out, cfg.get("depth_residual", 1.0))
    names = ("d_log_z", "d_log_dims", "dR", "offset", "log_b", "log_b_lift")
    return {k: v.numpy() for k, v in zip(names, parts)}


def _assemble(bundle: dict, target: dict, raw: dict, components) -> dict[str, np.ndarray]:
    """Predictions from the lift plus the residuals of ``components`` (the others stay the lift's)."""
    comps = set(components)
    priors = bundle["priors"]
    cls = _classes(target)
    z = base_depth(priors, target, bundle["config"].get("context", "image"))
    dims = priors["dims"][cls]
    R = priors["R"][cls]
    if "depth" in comps:
        z = z * np.exp(raw["d_log_z"])
    if "dims" in comps:
        dims = dims * np.exp(raw["d_log_dims"])
    if "rotation" in comps:
        R = R @ raw["dR"]
    b = np.asarray(target["bbox2d_tight"], float)
    uv = _box_center(b)
    if "offset" in comps:
        uv = uv + raw["offset"] * np.column_stack(_box_hw(b))
    center = backproject(uv, target["K"], z)
    score = None  # the lift's
    if "score" in comps:
        scale = np.exp(raw["log_b"] if "depth" in comps else raw["log_b_lift"])
        mode = bundle["config"].get("score", "size")
        if mode == "tp":  # the probability that the lift's centre is a true positive (score model)
            score = score_probability(bundle["score_model"], priors, target)
        elif mode == "depth_scale":  # exp(-b): the expected relative depth error
            score = np.exp(-scale)
        elif mode == "relative":  # expected centre error z * b against the footprint size sqrt(W L)
            score = np.exp(-z * scale / np.sqrt(dims[:, 0] * dims[:, 2]))
        elif mode != "size":
            raise ValueError(f"unknown score mode {mode!r}")
    return _predictions(target, center, dims, R, score)


def predict_learned(model, target: dict, components=None) -> dict[str, np.ndarray]:
    """Predictions of the learned head on oracle 2D boxes (target: 2D box, class, K, image size).

    ``model`` is a bundle from ``train_learned`` / ``load_checkpoint`` or a checkpoint path.
    ``components``: the residual parts to apply (default: the bundle's selection); with none
    the prediction is the lift's.
    """
    bundle = load_checkpoint(model) if isinstance(model, (str, Path)) else model
    comps = bundle.get("components", COMPONENTS) if components is None else components
    return _assemble(bundle, target, _raw_outputs(bundle, target), comps)
