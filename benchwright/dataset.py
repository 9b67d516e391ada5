"""The dataset contract: what one dataset declares. The core does everything else, once.

A dataset module (``pipelines/<ds>.py``) defines a ``Dataset`` subclass with its declarative parts
(its configs' Features, how the source becomes tables (``expand``), its units for reconciliation,
its exports, card statistics and expectations, and the CLI parts it offers) and registers it in
``benchwright.registry``. See docs/ADDING_A_DATASET.md.
"""
from __future__ import annotations

import dataclasses

from benchwright.files import SOURCE_COMPLETE_MARKER, list_files


@dataclasses.dataclass
class Unit:
    """A unit of reconciliation: what is read, and which config's rows count as its written form."""

    name: str
    config: str
    primary: bool = False  # what the source is made of: --max-bad-fraction is measured on it; a source must yield one
    # the one split whose rows are its written form (a subset split's members: Workspace-Bench's Lite
    # list entries); None: the rows of every split but the subset splits
    split: str | None = None


class Dataset:
    """One dataset: the declarative parts. Subclasses set the class attributes and override the hooks."""

    name: str = ""
    configs: dict = {}          # config -> datasets.Features
    id_columns: dict = {}       # config -> the column whose stable hash picks the shard (unique, non-null)
    splits: tuple = ()          # the splits a build writes, in card order
    # {split: parent}: a split that is a subset of another (Workspace-Bench's lite of full). Its rows
    # repeat the parent's rows, so ids are unique within each split and each of its ids is the parent's.
    subset_splits: dict = {}
    # {config: (columns,)}: another config's id column this config carries but may leave null (a
    # Workspace-Bench file outside any task's folder has no task_id)
    optional_keys: dict = {}
    # configs a valid source may not have at all (Workspace-Bench: a folder has no tasks, a website
    # release no files); the primary units still make sure a source yields something
    optional_configs: tuple = ()
    units: tuple = ()           # Unit(...) per reconciled unit
    # Data quality (checked once in the core, listed on the card; docs/DATA_QUALITY.md):
    # {config: {column: target config}}: every non-null value is an id of the target config. A list
    # column is checked element by element, ``a.b`` is field b of struct (or list of structs) a.
    references: dict = {}
    # {"config.column": {value or "*": (low, high)}}: a value's share of the config's non-null values
    # (all splits) lies in [low, high]; "*" is every value a ClassLabel names (or every value seen).
    # Checked once the config has ``proportion_min_rows`` rows (a small source may hold one class).
    proportion_bounds: dict = {}
    proportion_min_rows: int = 100
    # DriftThreshold(...) beyond the core's defaults (benchwright.drift): the last that matches wins
    drift_thresholds: tuple = ()
    license: str = ""
    task_categories: tuple = ()
    tags: tuple = ()
    pretty_name: str = ""
    # Release metadata the Croissant file states (benchwright.croissant): declared facts only; what is
    # not known stays empty and the file says so, or leaves it out
    description: str = ""       # one paragraph: what the dataset is
    url: str = ""               # the dataset's home page
    citation: str = ""          # BibTeX of what to cite
    creators: tuple = ()        # ({"type": "Organization" or "Person", "name": ..., "url": ...}, ...)
    version: str = ""           # the dataset's MAJOR.MINOR.PATCH; default: benchwright's version
    # The parts the CLI drives, as "module:function" (imported only when used):
    synth: str | None = None      # f(out, scale=, seed=, progress=, **extra) writes a raw source (`benchwright synth`)
    evaluator: str | None = None  # run_cli(argv) -> exit code (`benchwright evaluate <ds> ...`)
    baselines: str | None = None  # run_cli(argv) -> exit code (`benchwright baseline <ds> ...`)
    runner: str | None = None     # run_cli(argv) -> exit code (`benchwright run <ds> ...`): an agent over the cases
    # {format: "module:function"}: on-demand exports, function(build folder, out folder) -> summary dict
    # (`benchwright export BUILD --format FORMAT OUT`); the build's own exports are ``export``'s
    export_formats: dict = {}

    def default_source(self, workdir: str) -> str:
        """Materialise the embedded default source under ``workdir``; returns its URL. By default the
        dataset's ``synth`` at scale ``default``, seed 0, written once (a marker says it is complete,
        so an interrupted write is redone, never reused)."""
        import shutil
        from pathlib import Path

        from benchwright.registry import resolve

        if not self.synth:
            raise NotImplementedError(f"{self.name}: no synth to write the embedded default with")
        out = Path(workdir) / f"{self.name}-default"
        if not (out / SOURCE_COMPLETE_MARKER).exists():
            shutil.rmtree(out, ignore_errors=True)
            resolve(self.synth)(out, scale="default", seed=0)
            (out / SOURCE_COMPLETE_MARKER).write_text("")
        return str(out)

    def expand(self, pipeline, source: str, staging: str, previous: str | None) -> tuple[dict, list]:
        """Returns ({config: PCollection of pyarrow Tables}, [PCollections of reject rows])."""
        raise NotImplementedError

    def source_files(self, source: str) -> list[str]:
        """The files whose content defines the input (fingerprinted in the manifest)."""
        return list_files(source)

    def export(self, staging: str) -> dict:
        """Write format exports under ``staging/exports``; returns a summary for the manifest."""
        return {}

    def export_format(self, root: str, fmt: str, out: str | None) -> dict:
        """The on-demand export ``fmt`` of the local build at ``root`` written into ``out``."""
        from benchwright.errors import BenchwrightError
        from benchwright.registry import resolve

        if fmt not in self.export_formats:
            raise BenchwrightError(f"{self.name} has no {fmt!r} export; its formats: "
                                   f"{', '.join(self.export_formats) or 'none (benchwright export BUILD re-writes its exports)'}")
        if not out:
            raise BenchwrightError(f"--format {fmt} writes a folder: benchwright export BUILD --format {fmt} OUT")
        return resolve(self.export_formats[fmt])(root, out)

    def card_context(self, staging: str) -> dict:
        """Statistics and figures for the card (figures written under ``_build/figures``)."""
        return {}

    def responsible_ai(self, staging: str, source: str) -> dict:
        """The dataset's Responsible-AI facts for the Croissant file: {rai field (``benchwright.croissant.
        RAI_FIELDS``, e.g. "dataBiases"): text or [texts]} from what the dataset knows and what the build at
        ``staging`` (read from ``source``) holds. The core adds its own facts; a field nobody states is
        written as unknown, never guessed."""
        return {}

    def validate_tables(self, staging: str) -> list[dict]:
        """Dataset-specific table checks beyond the great-expectations suites: [{check, ok, detail}]."""
        return []

    def plant_bad_record(self, source: str) -> str:
        """Damage one record of a tiny source written by ``synth`` (the contract test's bad input) and
        return the start of the quarantine locator that must name it."""
        raise NotImplementedError(f"{self.name}: the contract needs plant_bad_record")

    def expectation_suites(self) -> dict:
        """{config: [great-expectations expectation configs]} run on the written Parquet."""
        return {}
