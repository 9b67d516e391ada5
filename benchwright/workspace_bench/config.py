"""Workspace-Bench's build settings (``benchwright build workspace_bench --help`` lists them; the manifest records
them)."""
from __future__ import annotations

import dataclasses

from benchwright.dataset import Config as BaseConfig, setting

RELEASE, FOLDER = "release", "folder"
SOURCE_KINDS = (RELEASE, FOLDER)
LITE_NAMESPACE = "workspace-bench-lite"  # what the Lite rule's stable hash mixes with the seed and the task id


@dataclasses.dataclass(frozen=True)
class Config(BaseConfig):
    dataset = "workspace_bench"

    source_kind: str | None = setting(None, "read --source as a release or as one folder workspace (default: a "
                                            "release when it holds the release's own markers, else a folder)",
                                      SOURCE_KINDS)
    lite_seed: int = setting(0, "the seed of the Lite rule's stable-hash choice inside each persona (a source's "
                                "own Lite list, when it ships one, is kept as it is)")
    lite_namespace: str = setting(LITE_NAMESPACE, "the namespace the Lite rule's stable hash mixes with the "
                                                          "seed and the task id")
