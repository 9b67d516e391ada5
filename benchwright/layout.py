"""Where a build keeps what it writes beside its data (``_build/``): names only, so anything can import
them without the machinery (Beam, datasets) that writes them."""
from __future__ import annotations

BUILD_DIR = "_build"
MANIFEST = f"{BUILD_DIR}/manifest.json"
VALIDATION_DIR = f"{BUILD_DIR}/validation"
QUARANTINE_DIR = f"{BUILD_DIR}/quarantine"
STATISTICS_DIR = f"{BUILD_DIR}/statistics"
STATISTICS = f"{STATISTICS_DIR}/statistics.json"
DRIFT = f"{STATISTICS_DIR}/drift.json"
CARD_HTML = f"{BUILD_DIR}/card.html"
# the Croissant (MLCommons JSON-LD) metadata, beside the card (benchwright.croissant)
CROISSANT = "croissant.json"
# views of the build made after it (benchwright screenshot): not part of it, never in its manifest
SCREENSHOTS_DIR = f"{BUILD_DIR}/screenshots"


def described(rel: str) -> bool:
    """Whether the manifest lists the build's file at ``rel``: all but the manifest itself, the
    validation output and the screenshots (views of the build made after it, ``benchwright screenshot``)."""
    return not (rel == MANIFEST or rel.startswith((f"{VALIDATION_DIR}/", f"{SCREENSHOTS_DIR}/")))
