"""WordEval's build settings (``benchwright build wordeval --help`` lists them; the manifest records them)."""
from __future__ import annotations

import dataclasses

from benchwright.dataset import Config as BaseConfig, setting

LIBREOFFICE_GATES = ("all", "none")


@dataclasses.dataclass(frozen=True)
class Config(BaseConfig):
    dataset = "wordeval"

    seeds: tuple[int, ...] = setting((0, 1), "the seeds of each unit's cases: a case per unit, base document and "
                                             "seed (the same case twice is kept once)")
    lite_seed: int = setting(0, "the seed of Lite's stable-hash choice inside each stratum (config, subsystem, base "
                                "document)")
    libreoffice_gate: str = setting("all", "which generated files LibreOffice must open: all (the build's "
                                           "validation), none (a machine without LibreOffice: the card's "
                                           "LibreOffice agent is left out too)", LIBREOFFICE_GATES)
    unit_ids: tuple[str, ...] | None = setting(None, "build only these catalogue units and the templates made of "
                                                     "them (comma-separated ids); default: every unit")

    def check(self) -> None:
        if not self.seeds:
            raise self.refused("seeds", "no seed: no case would be made")
