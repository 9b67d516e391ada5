"""The VLM unlearning card: examples per split and subset, view and routing statistics, sample
rows of the three views side by side, and the routing-score distribution."""
from __future__ import annotations

import io
import textwrap
from collections import Counter
from pathlib import Path

import numpy as np

from benchwright.card import markdown_table, pyplot, save_figure
from benchwright.loaders.vlm_unlearning import load
from benchwright.schemas import vlm_unlearning as schema

SAMPLES = 3  # examples in the side-by-side figure: the smallest example id of each subset present


def card_statistics(root: Path) -> dict:
    meta = load(root, "multimodal", columns=["example_id", "subset", "role", "description_source",
                                             "harmful_category"])
    splits = {s: load(root, "multimodal", split=s, columns=["subset", "role"]) for s in schema.VIEW_SPLITS}
    subsets = sorted(set(meta.column("subset").to_pylist()))
    split_rows = [[s, t.num_rows] + [t.column("subset").to_pylist().count(x) for x in subsets]
                  for s, t in splits.items()]
    render = load(root, "image_only", columns=["render"]).column("render").to_pylist()
    sizes = np.array([r["font_size"] for r in render]) if render else np.zeros(0)
    fonts = sorted({(r["style"], r["font"], r["mode"]) for r in render})
    records = load(root, "records", columns=["split", "pairs", "example_ids"])
    view_rows = [[v, load(root, v, columns=["example_id"]).num_rows] for v in schema.VIEWS]
    description = Counter(meta.column("description_source").to_pylist())
    categories = Counter(c for c in meta.column("harmful_category").to_pylist() if c)
    routing_rows, source = [], ""
    for config in schema.ROUTING_CONFIGS:
        t = load(root, config, columns=["routed_view", "routing_score_source"])
        routed = t.column("routed_view").to_pylist()
        source = source or (t.column("routing_score_source").to_pylist() or [""])[0]
        routing_rows.append([config, t.num_rows, routed.count("text_only"), routed.count("multimodal")])
    return {
        "split_table": markdown_table(["split", "examples"] + subsets, split_rows),
        "view_table": markdown_table(["config", "rows"], view_rows),
        "records_table": markdown_table(["records split", "records", "pairs in the source", "examples published"],
                                        [[s, n, p, e] for s, n, p, e in _records_by_split(records)]),
        "description_table": markdown_table(["description_source", "examples"],
                                            [[k, description[k]] for k in schema.DESCRIPTION_SOURCES if description[k]]),
        "category_table": markdown_table(["harmful_category", "examples"], sorted(categories.items())) if categories
        else "No example carries a harmful category.",
        "font_sizes": {"min": int(sizes.min()) if len(sizes) else 0, "median": float(np.median(sizes)) if len(sizes) else 0,
                       "max": int(sizes.max()) if len(sizes) else 0, "rows": len(render),
                       "shrunk": sum(bool(r["shrunk"]) for r in render),
                       "style_text": "; ".join(_STYLE_TEXT.get(f, f"{f[1]} ({f[2]})") for f in fonts) or "no renders"},
        "escaped_image_tokens": _escaped_image_tokens(root),
        "routing_table": markdown_table(["config", "forget rows", "text-only", "multimodal"], routing_rows),
        "routing_source": source,
        "figures": {"views": views_figure(root, meta), "scores": scores_figure(root)},
    }


_STYLE_TEXT = {("figstep", "FreeMonoBold.ttf", "RGB"): "FigStep's own: FreeMonoBold.ttf, black on white, RGB",
               ("dejavu", "DejaVuSansMono-Bold.ttf", "L"): "`--render dejavu`: DejaVu Sans Mono Bold from matplotlib's "
                                                           "wheel, grayscale, in FigStep's layout"}


def _escaped_image_tokens(root: Path) -> int:
    """Examples whose instruction, description or response holds a literal ``<image>`` (escaped in
    their prompts and conversations)."""
    import pyarrow.compute as pc

    from benchwright.vlm_unlearning.views import IMAGE_TOKEN

    t = load(root, "multimodal", columns=["instruction", "description", "response"])
    hit = [pc.fill_null(pc.match_substring(t.column(c), IMAGE_TOKEN), False) for c in t.column_names]
    return int(pc.sum(pc.or_(pc.or_(hit[0], hit[1]), hit[2])).as_py() or 0)


def _records_by_split(records) -> list[list]:
    out = {}
    for split, pairs, ids in zip(records.column("split").to_pylist(), records.column("pairs").to_pylist(),
                                 records.column("example_ids").to_pylist()):
        e = out.setdefault(split, [0, 0, 0])
        e[0] += 1
        e[1] += pairs
        e[2] += len(ids)
    return [[s, *v] for s, v in sorted(out.items())]


def _sample_ids(meta) -> list[str]:
    first = {}
    for eid, subset in sorted(zip(meta.column("example_id").to_pylist(), meta.column("subset").to_pylist())):
        first.setdefault(subset, eid)
    return [first[s] for s in sorted(first)][:SAMPLES]


def views_figure(root: Path, meta) -> str:
    """Sample examples (rows) in their three views (columns), as a model sees them."""
    import pyarrow.compute as pc
    from PIL import Image

    plt = pyplot()
    ids = _sample_ids(meta)
    fig, axes = plt.subplots(max(1, len(ids)), 3, figsize=(11, 3.6 * max(1, len(ids))), squeeze=False)
    # only the sampled rows are read (a view's images are most of the build)
    sampled = {view: {r["example_id"]: r for r in load(root, view, columns=["example_id", "image", "prompt", "subset"],
                                                       where=pc.field("example_id").isin(ids)).to_pylist()}
               for view in schema.VIEWS}
    for i, eid in enumerate(ids):
        for j, view in enumerate(schema.VIEWS):
            row = sampled[view][eid]
            ax = axes[i][j]
            ax.set_xticks([])
            ax.set_yticks([])
            if row["image"] is not None:
                with Image.open(io.BytesIO(row["image"]["bytes"])) as im:
                    ax.imshow(np.asarray(im.convert("RGB")))
            else:
                ax.set_facecolor("#f4f4f4")
                ax.text(0.04, 0.96, "\n".join(textwrap.fill(line, 44) for line in row["prompt"].splitlines())[:700], va="top", ha="left", fontsize=7,
                        family="monospace", transform=ax.transAxes)
            prompt = row["prompt"] if view != "text_only" else "(the text shown)"
            ax.set_xlabel(textwrap.fill(prompt, 48)[:200], fontsize=7)
            ax.set_title(f"{view}: {eid}" if j == 0 else view, fontsize=8)
        axes[i][0].set_ylabel(row["subset"], fontsize=8)
    fig.tight_layout()
    return save_figure(fig, root, "views")


def scores_figure(root: Path) -> str:
    """The routing scores of the forget examples, and where each gamma's cut falls."""
    return save_figure(scores_plot(*routing_scores(root)), root, "routing_scores")


def routing_scores(root: Path) -> tuple[np.ndarray, dict[float, float]]:
    """The forget examples' routing scores, and {gamma: the lowest score ModRoute sends text-only}
    for each gamma that routes some examples each way."""
    scores, cuts = np.zeros(0), {}
    for gamma in schema.GAMMAS:
        t = load(root, schema.routing_config("modroute", gamma), columns=["routing_score", "routed_view"])
        scores = np.array(t.column("routing_score").to_pylist(), dtype=float)
        routed = np.array(t.column("routed_view").to_pylist())
        if (routed == "text_only").any() and (routed == "multimodal").any():
            cuts[gamma] = float(scores[routed == "text_only"].min())
    return scores, cuts


def scores_plot(scores: np.ndarray, cuts: dict[float, float]):
    """The histogram of ``scores`` on an axis fitted to them and to the ``cuts`` ({gamma: the lowest
    score routed text-only}), a dashed line at each cut, and its label in the first row (from the top)
    where it overlaps no other label. Returns the figure, laid out."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    low, high = axis_range([*scores, *cuts.values()])
    if len(scores):
        ax.hist(scores, bins=min(40, max(5, len(scores) // 3)), range=(low, high), color="#4c72b0")
    ax.set_xlim(low, high)
    ax.set_xlabel("routing score (visual pressure) of forget examples; dashed: each gamma's text-only cut")
    ax.set_ylabel("examples")
    fig.tight_layout()  # before the labels: they are placed in the final axes
    renderer = fig.canvas.get_renderer()
    placed = []
    for gamma, cut in sorted(cuts.items(), key=lambda kv: (kv[1], kv[0])):
        ax.axvline(cut, ls="--", lw=1, color="0.3")
        label = ax.text(cut, 0.97, f"γ={gamma:g}", transform=ax.get_xaxis_transform(), fontsize=8, va="top",
                        ha="left" if ax.transData.transform((cut, 0))[0] < ax.bbox.x1 - 40 else "right",
                        bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1.5})
        for row in range(20):  # the first row from the top where the label touches no other
            label.set_y(0.97 - 0.11 * row)
            box = label.get_window_extent(renderer).expanded(1.05, 1.1)
            if not any(box.overlaps(other) for other in placed):
                break
        placed.append(label.get_window_extent(renderer))
    return fig


def axis_range(values) -> tuple[float, float]:
    """An x range that holds every value with a margin of 5% of their spread (0.05 around a single
    value), not past 0 or 1 when the values are not (visual pressure is a share)."""
    values = np.asarray(values, dtype=float)
    if not len(values):
        return 0.0, 1.0
    low, high = float(values.min()), float(values.max())
    margin = 0.05 * (high - low) if high > low else 0.05
    return (max(0.0, low - margin) if low >= 0 else low - margin,
            min(1.0, high + margin) if high <= 1 else high + margin)


def responsible_ai(dataset, root: Path, source: str) -> dict:
    """The Croissant file's Responsible-AI facts (``Dataset.responsible_ai``): the source's safety labels,
    the harmful categories this build holds, how the views and routing are made."""
    from benchwright.croissant import counts_text, value_counts

    categories = value_counts(dataset, root, "records", "harmful_category")
    descriptions = value_counts(dataset, root, "multimodal", "description_source")
    roles = value_counts(dataset, root, "multimodal", "role")
    return {
        "dataCollection": (
            "VLGuard-format annotations (train.json / test.json: an image, its safe flag, its harmful category and "
            "subcategory, instruction-response pairs), or another benchmark mapped onto the same fields, with its "
            "images. The build decomposes each example into three views (multimodal, text-only with an image "
            "description, image-only with the instruction rendered into the image) and routes the forget examples "
            "between views (ModRoute's visual pressure, or a seeded random draw)."),
        "dataCollectionType": ["Secondary Data analysis (a released safety benchmark's annotations and images)"],
        "dataAnnotationProtocol": [
            "Safety labels are the source's (VLGuard's `safe` flag, harmful category and subcategory); roles follow "
            "by a fixed rule: the training file's unsafe instructions are forget, its safe images' safe instructions "
            "retain, the test file is test.",
            "The text-only view's description is taken from the source's own annotations where it has them "
            "(description_source: caption, category, safe_response), else a fixed template; no model writes it."],
        "annotationsPerItem": "The source's labels, once per image; no labels are added.",
        "machineAnnotationTools": ["Pillow (the image-only view's typographic render, parameters in `render`)",
                                   "routing scores: a supplied model-gradient file, or a seeded stable-hash draw"],
        "dataAnnotationAnalysis": f"Where this build's text-only descriptions come from: {counts_text(descriptions)}.",
        "dataBiases": [
            f"Examples per role in this build: {counts_text(roles)}; unsafe records per harmful category: "
            f"{counts_text(categories)}.",
            "The harmful categories are VLGuard's four (privacy, risky behavior, deception, discrimination) and "
            "their nine subcategories; other harms are not represented."],
        "dataLimitations": [
            "A description from a template or a category says little about the image: the text-only view of such "
            "an example carries less of the image than the multimodal one.",
            "The embedded default is a small VLGuard-shaped set built from sample photographs shipped in "
            "scikit-image and matplotlib, not VLGuard itself."],
        "dataUseCases": [
            "Machine-unlearning research on vision-language models: unlearn the forget split, keep utility on "
            "retain and test (`benchwright evaluate vlm_unlearning`: VLGuard's refusal metric, Forget, Utility).",
            "Not for training a model to comply with the harmful requests it holds."],
        "personalSensitiveInformation": [
            "Sensitive by design: the forget split holds harmful requests (and the source's responses) in VLGuard's "
            f"categories; records per harmful category in this build: {counts_text(categories)}. The privacy "
            "category covers requests for personal data.",
            "Images can show people (the embedded default includes portraits: Grace Hopper, Eileen Collins); the "
            "build does not detect or blur faces."],
        "dataSocialImpact": (
            "The data holds harmful instructions on purpose, so that models can be made to refuse them; released "
            "as an unlearning benchmark, it should not be used to train compliance with them."),
    }
