"""WildBox's build settings (``benchwright build wildbox --help`` lists them; the manifest records them)."""
from __future__ import annotations

import dataclasses

from benchwright.dataset import Config as BaseConfig, setting


@dataclasses.dataclass(frozen=True)
class Config(BaseConfig):
    dataset = "wildbox"

    validation_share: float = setting(0.2, "the share of each species' videos held out for validation (video-level "
                                           "splits: a video and all its frames in one split; an earlier build's "
                                           "assignments are kept)")
    split_seed: int = setting(0, "the seed of the stable-hash order in which new videos fill each species' "
                                 "validation quota")

    def check(self) -> None:
        if not 0 < self.validation_share < 1:
            raise self.refused("validation_share", f"{self.validation_share} is not between 0 and 1")
