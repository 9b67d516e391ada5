"""The VLM unlearning card's routing-score histogram: its axis fits the scores (they fill 0-0.25 of a
share's 0-1 on a real build), and each gamma's label is readable: no two labels overlap, even when the
cuts fall close together."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchwright.card import save_figure
from benchwright.cards.vlm_unlearning import axis_range, routing_scores, scores_plot
from tests.quality_builds import tiny_build


def _labels(fig):
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    return ax, [(t.get_text(), t.get_window_extent(renderer)) for t in ax.texts]


@pytest.mark.parametrize("cuts", [
    {0.25: 0.201, 0.5: 0.118, 0.75: 0.052},     # spread out
    {0.25: 0.121, 0.5: 0.1205, 0.75: 0.120},    # three cuts within a pixel of each other
    {0.25: 0.2499, 0.5: 0.2498, 0.75: 0.0},     # at both ends of the axis
])
def test_gamma_labels_do_not_collide_and_the_axis_fits_the_scores(cuts):
    scores = np.random.default_rng(0).beta(2, 14, 300) * 0.25 / 0.6
    scores = np.clip(scores, 0, 0.25)
    fig = scores_plot(scores, cuts)
    ax, labels = _labels(fig)
    assert sorted(text for text, _ in labels) == sorted(f"γ={g:g}" for g in cuts)
    for (a, box_a), (b, box_b) in itertools.combinations(labels, 2):
        assert not box_a.overlaps(box_b), (a, b, box_a, box_b)
    for text, box in labels:  # inside the axes, where a reader looks for them
        assert ax.bbox.x0 - 1 <= box.x0 and box.x1 <= ax.bbox.x1 + 1 and ax.bbox.y0 <= box.y0, text
    values = [*scores, *cuts.values()]
    low, high = ax.get_xlim()
    assert low <= min(values) and high >= max(values)
    assert high - low <= 1.1 * (max(values) - min(values)) + 1e-9  # no empty stretch: the data fill the axis


def test_axis_range_edges():
    assert axis_range([]) == (0.0, 1.0)
    assert axis_range([0.3, 0.3]) == pytest.approx((0.25, 0.35))
    assert axis_range([0.0, 1.0]) == (0.0, 1.0)
    assert axis_range([0.1, 0.2]) == pytest.approx((0.095, 0.205))


def test_the_built_card_figure_fits_the_build_scores(tmp_path_factory, tmp_path):
    """On a real (tiny) build, the histogram the card shows spans the forget examples' scores, not 0-1,
    and the PNG the build published is this plot's, byte for byte."""
    root = tiny_build("vlm_unlearning", tmp_path_factory)[1]
    scores, cuts = routing_scores(root)
    assert len(scores) > 0
    fig = scores_plot(scores, cuts)
    low, high = fig.axes[0].get_xlim()
    values = [*scores, *cuts.values()]
    assert low <= min(values) and high >= max(values)
    assert high - low <= 1.1 * (max(values) - min(values)) + 0.1 + 1e-9
    rel = save_figure(fig, tmp_path, "routing_scores")
    assert (tmp_path / rel).read_bytes() == (root / rel).read_bytes()
    assert f"]({rel})" in (root / "README.md").read_text(encoding="utf-8")  # the card shows it
