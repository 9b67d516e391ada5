"""The VLM unlearning sets' build settings (``benchwright build vlm_unlearning --help`` lists them; the manifest
records them)."""
from __future__ import annotations

import dataclasses

from benchwright.dataset import Config as BaseConfig, setting

FORMATS = ("vlguard", "mapped")
RENDER_STYLES = ("figstep", "dejavu")  # views.STYLES' names


@dataclasses.dataclass(frozen=True)
class Config(BaseConfig):
    dataset = "vlm_unlearning"

    format: str | None = setting(None, "the source's format: vlguard (VLGuard's release layout) or mapped "
                                       "(mapping.yaml over JSON, JSON Lines or Parquet); default: detected",
                                 FORMATS)
    routing_scores: str | None = setting(None, "a score file (.json/.jsonl/.csv, any fsspec URL) to route by "
                                               "instead of the built-in scorer")
    render: str = setting("figstep", "the image-only view's render: figstep (FigStep's own, FreeMonoBold, RGB) or "
                                     "dejavu (DejaVu Sans Mono Bold from matplotlib's wheel, no system font needed)",
                          RENDER_STYLES)
    routing_seed: int = setting(0, "the seed of the built-in scorer's fit and of the random routing configs")
