"""The dataset contract: what one dataset declares. The core does everything else, once.

A dataset module (``pipelines/<ds>.py``) defines a ``Dataset`` subclass with its declarative parts
(its configs' Features, how the source becomes tables (``expand``), its units for reconciliation,
its exports, card statistics and expectations, and the CLI parts it offers) and registers it in
``benchwright.registry``. Its build settings are one frozen dataclass, a ``Config`` (in the manner of HF's
``BuilderConfig`` and TFDS's ``BUILDER_CONFIGS``), which the CLI lists and the manifest records. See
docs/ADDING_A_DATASET.md and docs/ARCHITECTURE.md.

This module imports nothing slow (no Beam, datasets or fsspec at import): ``benchwright build <ds> --help`` reads a
dataset's ``Config`` through it.
"""
from __future__ import annotations

import argparse
import dataclasses
import difflib
import types
import typing

from benchwright.errors import BenchwrightError
from benchwright.utf8 import encodable


def setting(default, help: str, choices: tuple = ()):
    """A field of a dataset's ``Config``: its default, what it does (``benchwright build <ds> --help`` shows it) and,
    for a text setting, the values it may take."""
    return dataclasses.field(default=default, metadata={"help": help, "choices": tuple(choices)})


@dataclasses.dataclass(frozen=True)
class Config:
    """A dataset's build settings: a frozen dataclass whose fields are made with ``setting`` and typed ``bool``,
    ``int``, ``float``, ``str``, ``tuple[int, ...]`` or ``tuple[str, ...]`` (each may be ``| None``). Each is
    ``--<name with dashes>`` on ``benchwright build <ds>`` (a tuple as comma-separated values), is recorded in the
    build's manifest (``options.settings``) and may shape the output: two builds of one input with the same
    settings are byte-identical. A value of the wrong type or outside its choices, and a name the dataset does not
    have, are refused naming them (``make``, ``replace``)."""

    dataset = ""  # the dataset's name, for the refusals (a class attribute, not a field)

    def __post_init__(self):
        hints = typing.get_type_hints(type(self))
        for field in dataclasses.fields(self):
            value = _typed(self, field, hints[field.name], getattr(self, field.name))
            object.__setattr__(self, field.name, value)
        self.check()

    def check(self) -> None:
        """More than the types say (a share between 0 and 1): raise ``self.refused(name, why)``."""

    def refused(self, name: str, why: str) -> BenchwrightError:
        return BenchwrightError(f"{self.dataset or 'the dataset'}'s setting {name}: {why}")

    @classmethod
    def make(cls, **values) -> Config:
        """The settings with ``values`` in place of the defaults; a name that is no field is refused, with the field
        meant when it is close to one (``--seedz``: did you mean seeds?)."""
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = [name for name in values if name not in names]
        if unknown:
            hints = [f"{name}: did you mean {close[0]}?" for name in unknown
                     if (close := difflib.get_close_matches(name, names, n=1, cutoff=0.6))]
            raise BenchwrightError(f"{cls.dataset or 'the dataset'} has no setting {', '.join(unknown)}"
                                   + (f" ({'; '.join(hints)})" if hints else "")
                                   + f"; its settings: {', '.join(names) or 'none'}")
        return cls(**values)

    def replace(self, **values) -> Config:
        """These settings with ``values`` in place (refused as ``make`` refuses them)."""
        return self.make(**{**self.recorded(), **values})

    def recorded(self) -> dict:
        """{field: value} in field order, as the manifest records them: JSON (a tuple as a list) that UTF-8 can
        encode (a lone surrogate a setting carries, say a unit id a catalogue escaped, is U+FFFD there, as in
        every string a build writes: ``benchwright.utf8``)."""
        return {f.name: encodable(list(v) if isinstance(v := getattr(self, f.name), tuple) else v)[0]
                for f in dataclasses.fields(self)}

    @classmethod
    def options(cls) -> list[tuple[str, dict]]:
        """Each field as a command-line option: (``--name``, ``argparse`` keyword arguments; the value parsed
        into the field's type, no default, so only the options given are set)."""
        hints = typing.get_type_hints(cls)
        out = []
        for field in dataclasses.fields(cls):
            kind, _ = _kind(hints[field.name])
            shown = ",".join(map(str, field.default)) if isinstance(field.default, tuple) else field.default
            kwargs = {"dest": field.name, "default": None,
                      "help": field.metadata.get("help", "") + (f" (default: {shown})" if shown is not None else "")}
            if kind is bool:
                kwargs["action"] = argparse.BooleanOptionalAction  # --name / --no-name
            else:
                kwargs["type"] = _parser(hints[field.name])
                kwargs["metavar"] = field.name.upper()
            if field.metadata.get("choices"):
                kwargs["choices"] = field.metadata["choices"]
                kwargs.pop("metavar")
            out.append((option_name(field.name), kwargs))
        return out


def option_name(field: str) -> str:
    return "--" + field.replace("_", "-")


def _kind(hint) -> tuple[type, bool]:
    """(the base type of a field's annotation, whether it may be None)."""
    optional = False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        optional, hint = True, args[0]
    return (tuple if typing.get_origin(hint) is tuple else hint), optional


def _item_type(hint) -> type:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = [a for a in typing.get_args(hint) if a is not type(None)][0]
    return typing.get_args(hint)[0]


_NAMES = {bool: "true or false", int: "an integer", float: "a number", str: "text", tuple: "a list"}
_ITEMS = {int: "integers", float: "numbers", str: "texts"}


def _typed(config: Config, field: dataclasses.Field, hint, value):
    """``value`` as the field's type (an int for a float, a list for a tuple), or the refusal naming the field."""
    kind, optional = _kind(hint)
    if value is None and optional:
        return None
    if kind is tuple and isinstance(value, (list, tuple)):
        item = _item_type(hint)
        if all(isinstance(v, item) and not (item is int and isinstance(v, bool)) for v in value):
            return tuple(value)
        raise config.refused(field.name, f"{value!r} is not a list of {_ITEMS[item]}")
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise config.refused(field.name, f"{value!r} is not {_NAMES[kind]}" + (" (or None)" if optional else ""))
    choices = field.metadata.get("choices")
    if choices and value not in choices:
        raise config.refused(field.name, f"{value!r} is not one of {', '.join(map(str, choices))}")
    return value


def _parser(hint):
    """The command-line text of a field's value -> the value (a tuple: comma-separated)."""
    kind, _ = _kind(hint)
    if kind is not tuple:
        return kind
    item = _item_type(hint)

    def parse(text: str) -> tuple:
        return tuple(item(part.strip()) for part in text.split(",") if part.strip())

    parse.__name__ = f"comma-separated list of {_ITEMS[item]}"  # argparse names the type in its error
    return parse


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
    """One dataset: the declarative parts. Subclasses set the class attributes and override the hooks. An instance
    holds the build's ``settings`` (its ``Config``): ``configured(**values)`` is the dataset with other ones."""

    Config: type[Config] = Config  # the type of its build settings (this base: none)

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
    # A build's size on disk as OUTPUT_FIXED_BYTES + OUTPUT_PER_INPUT_BYTE x its input's bytes, fitted on
    # its tiny and default builds: a full disk's line says how much space a first build needs from it
    # (benchwright.output_faults); None: not measured
    output_per_input_byte: float | None = None
    output_fixed_bytes: int = 0
    # The parts the CLI drives, as "module:function" (imported only when used):
    synth: str | None = None      # f(out, scale=, seed=, progress=, **extra) writes a raw source (`benchwright synth`)
    evaluator: str | None = None  # run_cli(argv) -> exit code (`benchwright evaluate <ds> ...`)
    baselines: str | None = None  # run_cli(argv) -> exit code (`benchwright baseline <ds> ...`)
    runner: str | None = None     # run_cli(argv) -> exit code (`benchwright run <ds> ...`): an agent over the cases
    # {format: "module:function"}: on-demand exports, function(build folder, out folder) -> summary dict
    # (`benchwright export BUILD --format FORMAT OUT`); the build's own exports are ``export``'s
    export_formats: dict = {}
    # The card's tables a consumer of the build makes (a baseline run on it), as "module:function"(build folder,
    # settings) -> {template variable: value}: the pipeline names its consumers (evaluation/ and baselines/ sit
    # above it), the core resolves and calls them when it makes the card (``benchwright.card.card_baselines``).
    # ``card_baselines`` runs with the card, on the driver once the exports and the checks are done;
    # ``card_baselines_beside`` beside the statistics and the checks, in the exports' forked child after the
    # exports: work that takes the other core (VLM's heads), whose progress is not shown.
    card_baselines: str | None = None
    card_baselines_beside: str | None = None

    def __init__(self, settings: Config | None = None):
        if settings is not None and not isinstance(settings, self.Config):
            raise BenchwrightError(f"{self.name}'s settings are a {self.Config.__module__}.Config, not "
                                   f"{type(settings).__name__}")
        self.settings = settings if settings is not None else self.Config()

    def configured(self, **values) -> Dataset:
        """This dataset with ``values`` in place of its settings' (a name it has not, or a value of the wrong type,
        is refused naming it: ``Config.make``)."""
        return type(self)(self.settings.replace(**values))

    def as_built(self, manifest: dict) -> Dataset:
        """This dataset with the settings a manifest of one of its builds records (``options.settings``; a build
        from before settings were recorded: these)."""
        recorded = (manifest.get("options") or {}).get("settings")
        return self.configured(**recorded) if recorded else self

    def default_source(self, workdir: str) -> str:
        """Materialise the embedded default source under ``workdir``; returns its URL. By default the
        dataset's ``synth`` at scale ``default``, seed 0, written once (a marker says it is complete,
        so an interrupted write is redone, never reused)."""
        import shutil
        from pathlib import Path

        from benchwright import progress
        from benchwright.files import SOURCE_COMPLETE_MARKER
        from benchwright.registry import resolve

        if not self.synth:
            raise NotImplementedError(f"{self.name}: no synth to write the embedded default with")
        out = Path(workdir) / f"{self.name}-default"
        if not (out / SOURCE_COMPLETE_MARKER).exists():
            shutil.rmtree(out, ignore_errors=True)
            # WildBox's takes minutes: say what is written where, and show its counts as a build's phases do
            display = progress.current()
            display.say(f"writing the embedded default source (scale default, seed 0) into {out}: once, later "
                        f"builds reuse it")
            with display.phase("default source") as phase:
                resolve(self.synth)(out, scale="default", seed=0, progress=phase.reporter("written"))
            (out / SOURCE_COMPLETE_MARKER).write_text("")
        return str(out)

    def expand(self, pipeline, source: str, staging: str, previous: str | None) -> tuple[dict, list]:
        """Returns ({config: PCollection of pyarrow Tables}, [PCollections of reject rows])."""
        raise NotImplementedError

    def source_files(self, source: str) -> list[str]:
        """The files whose content defines the input (fingerprinted in the manifest)."""
        from benchwright.files import list_files

        return list_files(source)

    def export(self, staging: str, prepared=None) -> dict:
        """Write format exports under ``staging/exports``; returns a summary for the manifest. ``prepared``:
        a ``benchwright.prepared.Prepared``, what ``export_conversions`` made while the pipeline ran (None
        or ``Prepared()``: nothing); the export writes each converted file with ``prepared.write``."""
        return {}

    def export_conversions(self) -> tuple:
        """The files the exports make from one source file's bytes alone (``benchwright.prepared.Conversion``):
        a build makes them from the source while its pipeline runs, in a forked child at low priority."""
        return ()

    def export_format(self, root: str, fmt: str, out: str | None) -> dict:
        """The on-demand export ``fmt`` of the local build at ``root`` written into ``out``."""
        from benchwright.registry import resolve

        if fmt not in self.export_formats:
            raise BenchwrightError(f"{self.name} has no {fmt!r} export; its formats: "
                                   f"{', '.join(self.export_formats) or 'none (benchwright export BUILD re-writes its exports)'}")
        if not out:
            raise BenchwrightError(f"--format {fmt} writes a folder: benchwright export BUILD --format {fmt} OUT")
        return resolve(self.export_formats[fmt])(root, out)

    def card_context(self, staging: str) -> dict:
        """Statistics and figures for the card (figures written under ``_build/figures``); the baselines' tables are
        the declared ``card_baselines``'."""
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
