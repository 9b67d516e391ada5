"""Template's build settings (``benchwright build template --help`` lists them; the manifest records them).

SLOT: each setting a build of your dataset takes is a field here, made with ``setting(default, help)``. Import
nothing slow in this module: the CLI reads it to print ``--help`` without Beam.
"""
from __future__ import annotations

import dataclasses

from benchwright.dataset import Config as BaseConfig, setting


@dataclasses.dataclass(frozen=True)
class Config(BaseConfig):
    dataset = "template"

    min_words: int = setting(1, "a record whose text has fewer words than this is filtered out (listed in "
                                "_build/filtered/ with the rule, never published)")

    def check(self) -> None:  # more than the types say
        if self.min_words < 0:
            raise self.refused("min_words", f"{self.min_words} is negative")
