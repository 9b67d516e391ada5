"""WildBox: taxonomy and the datasets.Features of every config (the single source of truth)."""
from __future__ import annotations

from datasets import ClassLabel, Features, Image, List, Value

# Fixed order = dataset category id ascending; a model's contiguous id is the rank.
SPECIES = ("giraffe", "grevys_zebra", "elephant", "plains_zebra", "rhino", "gazelle")
CATEGORY_IDS = {name: 1000 + i for i, name in enumerate(SPECIES)}
# Coarse classes merge the two zebras (the curriculum's first stage).
COARSE_CLASSES = ("giraffe", "zebra", "elephant", "rhino", "gazelle")
COARSE_OF = {s: ("zebra" if s.endswith("zebra") else s) for s in SPECIES}
# Names a raw source may use for a species (SAM3 prompts, KITTI type column, Omni3D category_name).
SPECIES_ALIASES = {
    **{s: s for s in SPECIES},
    "grevy's zebra": "grevys_zebra", "grevy_zebra": "grevys_zebra", "grevys zebra": "grevys_zebra",
    "plains zebra": "plains_zebra", "zebra_plains": "plains_zebra",
}
SPLITS = ("train", "validation")
BBOX_SOURCES = ("sam3", "vggt", "projected")

# Typical adult body size in metres [W, H, L] (width across, shoulder/total height, body length).
SPECIES_DIMENSIONS_M = {
    "giraffe": (1.0, 4.8, 4.0),
    "grevys_zebra": (0.7, 1.5, 2.6),
    "elephant": (2.5, 3.2, 6.0),
    "plains_zebra": (0.65, 1.35, 2.3),
    "rhino": (1.5, 1.7, 3.8),
    "gazelle": (0.35, 0.85, 1.1),
}


def canonical_species(name: str) -> str | None:
    """The canonical species name for a raw class name, or None if it is not a WildBox species."""
    key = name.strip().lower()
    return SPECIES_ALIASES.get(key) or SPECIES_ALIASES.get(key.replace("-", "_").replace(" ", "_"))
