"""A build's Croissant file (``croissant.json``): MLCommons' JSON-LD description of the dataset, built with
``mlcroissant`` from what the build knows, with the Responsible-AI (``rai:``) fields.

- Distribution: one ``FileObject`` per Parquet shard (relative ``contentUrl``, ``sha256``, size) and one
  ``FileSet`` per config (``<config>/*.parquet``, relative to the file). Relative URLs resolve in the
  local layout and in an object store's ``builds/<build id>/`` alike: the file sits at the build's root.
- Record sets: one per config, its fields derived from the config's ``datasets.Features`` (the single
  source of truth): typed values, nested structs as ``subField``s, lists as arrays (``arrayShape``),
  images as ``sc:ImageObject``, class labels as integers with their names in an ``sc:Enumeration``
  record set; a ``cr:Split`` record set names the splits, which each config's ``split`` field
  references.
- Dataset level: name, description, licence, citation, creators, version, a fixed date, keywords.
- Responsible AI: the core's facts (how the pipeline reads, checks, splits and rejects records, with
  this build's counts) and the dataset's own (``Dataset.responsible_ai``); a field nobody states is
  written as unknown.

mlcroissant reads a ``FileSet`` from the folder the file sits in; it does not check the shards' sha256
when it reads such a set (only a ``FileObject`` a field reads is checked), so ``check_croissant``
compares every ``FileObject``'s sha256 and size with the published files (``benchwright validate``).
"""
from __future__ import annotations

import datetime
import fnmatch
import hashlib
import json
import os
import re
from pathlib import Path

from benchwright import __version__
from benchwright.layout import CROISSANT
from benchwright.writer import parse_shard_name

CROISSANT_1_1 = "http://mlcommons.org/croissant/1.1"
RAI_1_0 = "http://mlcommons.org/croissant/RAI/1.0"
PARQUET = "application/x-parquet"
SPLITS_RECORD_SET = "splits"
SPLIT_FIELD = "split"
# Croissant's known split types (the spec's "Splits"); other names are described, not typed
SPLIT_URLS = {"train": "cr:TrainingSplit", "validation": "cr:ValidationSplit", "test": "cr:TestSplit"}
# datasets Value dtype -> Croissant data type (as the Hugging Face Hub maps them)
VALUE_TYPES = {
    "bool": "sc:Boolean", "string": "sc:Text", "large_string": "sc:Text",
    "int8": "cr:Int8", "int16": "cr:Int16", "int32": "cr:Int32", "int64": "cr:Int64",
    "uint8": "cr:UInt8", "uint16": "cr:UInt16", "uint32": "cr:UInt32", "uint64": "cr:UInt64",
    "float16": "cr:Float16", "float32": "cr:Float32", "float64": "cr:Float64",
    # Croissant has no byte-string type: bytes are declared as text, and mlcroissant yields bytes (see limits)
    "binary": "sc:Text", "large_binary": "sc:Text",
}
# The date written when SOURCE_DATE_EPOCH (the reproducible-builds convention) does not give one: the
# release date of this benchwright version, so that rebuilds stay byte-identical.
RELEASE_DATE = "2026-01-15"
SOURCE_DATE_EPOCH = "SOURCE_DATE_EPOCH"
UNKNOWN = "Unknown: not recorded by this build or its dataset's declaration."


# -- Features -> fields ---------------------------------------------------------------------------------

def _uri(data_type: str):
    """A data type written ``sc:X`` / ``cr:X`` as the URI mlcroissant's nodes hold."""
    from rdflib import term

    prefix, name = data_type.split(":", 1)
    return term.URIRef({"sc": "https://schema.org/", "cr": "http://mlcommons.org/croissant/"}[prefix] + name)


def _escape(name: str) -> str:
    """A column name as a JSONPath key (the Hub's rule): bracketed when it holds / ' [ or ]."""
    if any(c in name for c in "/'[]"):
        return "['" + re.sub(r"(?<!\\)(['\[\]])", r"\\\1", name) + "']"
    return name


def _array(feature) -> tuple[object, list[int]]:
    """(the innermost item feature, the shape) of a list feature: -1 where the length varies."""
    from datasets import LargeList, List, Sequence

    shape = []
    while isinstance(feature, (List, LargeList, Sequence, list)):
        if isinstance(feature, list):
            shape.append(-1)
            feature = feature[0]
        else:
            length = getattr(feature, "length", -1)
            shape.append(length if length and length > 0 else -1)
            feature = feature.feature
    return feature, shape


def field_specs(features, config: str) -> list[dict]:
    """The fields of a config's record set, as plain dicts (``croissant_field`` makes mlcroissant
    nodes of them): one per column, nested structs as sub-fields."""
    return [_field_spec(feature, f"{config}/{name}", name, column=name, path=[], config=config)
            for name, feature in features.items()]


def _field_spec(feature, field_id: str, name: str, column: str, path: list[str], config: str) -> dict:
    from datasets import ClassLabel, Image, Value

    spec = {"id": field_id, "name": name, "column": column, "path": list(path)}
    item, shape = _array(feature)
    if shape:
        spec["shape"] = shape
        if len(shape) > 1 and isinstance(item, dict):
            spec["unsupported"] = "a list of lists of structs"
    if isinstance(item, dict):
        # a list of structs: each sub-field reads its key of every element (mlcroissant gives a list of dicts)
        sub_path = [] if shape else path
        spec["sub_fields"] = [_field_spec(f, f"{field_id}/{n}", n, column, sub_path + [_escape(n)], config)
                              for n, f in item.items()]
        if shape and path:
            spec["unsupported"] = "a list of structs inside a struct"
        return spec
    if isinstance(item, Image):
        spec["data_type"] = "sc:ImageObject"
        spec["path"] = spec["path"] + ["bytes"]  # datasets stores {bytes, path}: the pixels are the bytes
        if shape:
            spec["unsupported"] = "a list of images"
    elif isinstance(item, ClassLabel):
        spec["data_type"] = "cr:Int64"
        spec["names"] = list(item.names)
    elif isinstance(item, Value) and item.dtype in VALUE_TYPES:
        spec["data_type"] = VALUE_TYPES[item.dtype]
        if item.dtype in ("binary", "large_binary"):
            spec["binary"] = True
    else:
        spec["data_type"] = "sc:Text"
        spec["unsupported"] = f"a {type(item).__name__} feature"
    return spec


def limitations(dataset) -> list[str]:
    """What the Croissant file cannot say exactly about the dataset's configs, in plain words (the card
    lists them): binary columns declared as text, image file names, nested class labels, null structs,
    subset splits, features with no Croissant form. Configs sharing a column share its line."""
    found: dict[tuple[str, str], list[str]] = {}
    for config, features in dataset.configs.items():
        for spec in _walk(field_specs(features, config)):
            column = f"`{_column_path(spec)}`"
            if spec.get("binary"):
                found.setdefault((column, "holds bytes; Croissant has no byte-string type, so it is declared "
                                          "`sc:Text` (mlcroissant yields the bytes unchanged)"), []).append(config)
            if spec.get("data_type") == "sc:ImageObject":
                found.setdefault((column, "is described by its bytes (`sc:ImageObject`); the file name datasets "
                                          "stores beside them (`path`) is not in the Croissant file"), []).append(config)
            if "names" in spec and ("shape" in spec or spec["path"]):
                found.setdefault((column, "is a class label inside a list or struct: its enumeration is named in the "
                                          "field's description, not as a reference (mlcroissant 1.1.1 cannot join on "
                                          "a nested field)"), []).append(config)
            if "sub_fields" in spec and "shape" not in spec:
                found.setdefault((column, "is a struct: where it is null, mlcroissant reads it back as a struct whose "
                                          "fields are null"), []).append(config)
            if spec.get("unsupported"):
                found.setdefault((column, f"is {spec['unsupported']}, which mlcroissant cannot read back: it is "
                                          "declared, but its records are not checked"), []).append(config)
    notes = [f"{', '.join(f'`{c}`' for c in configs)}: {column} {what}" for (column, what), configs in found.items()]
    for split, parent in sorted(dataset.subset_splits.items()):
        notes.append(f"split `{split}` repeats rows of `{parent}`: Croissant describes splits as names, so "
                     f"the file cannot say that `{split}` is a subset of `{parent}` except in its description")
    return notes


def croissant_section(dataset) -> str:
    """The card's section on the Croissant file: what it holds, how to read it, what it cannot say."""
    notes = limitations(dataset)
    lines = ["## Croissant metadata", "",
             f"`{CROISSANT}` beside this card describes this build in MLCommons Croissant 1.1 with the "
             "Responsible-AI fields (Croissant RAI 1.0): one record set per config (its fields from the config's "
             "`datasets.Features`: types, nested structs, arrays, images, class labels with their names), the "
             "splits, and every Parquet shard with its sha256. It is generated by the build (never written by "
             "hand) and checked by `benchwright validate` against the published files. Read it with "
             f"`mlcroissant`: `mlcroissant.Dataset(jsonld=\"{CROISSANT}\").records(\"<config>\")`. Where each "
             "Responsible-AI field comes from: docs/DATA_QUALITY.md.", ""]
    if not dataset.citation:
        lines += ["The dataset declares no citation, so the file has no `citeAs` (mlcroissant warns that it is "
                  "recommended): add the BibTeX of the paper to cite to the dataset's `citation` before submitting.", ""]
    if notes:
        lines += ["What the Croissant file cannot say exactly (each is declared as closely as Croissant allows):", ""]
        lines += [f"- {n}" for n in notes]
    else:
        lines.append("Every config and column has its exact Croissant form.")
    return "\n".join(lines) + "\n"


def _walk(specs: list[dict]):
    for spec in specs:
        yield spec
        yield from _walk(spec.get("sub_fields", []))


def _column_path(spec: dict) -> str:
    return spec["id"].split("/", 1)[1].replace("/", ".")


# -- the document ---------------------------------------------------------------------------------------

def shard_files(described: list[dict]) -> list[dict]:
    """The Parquet shards among a build's files (``describe_files``'s entries), in path order."""
    out = []
    for entry in described:
        path = entry["path"]
        if path.endswith(".parquet") and path.count("/") == 1:
            config, split, _, _ = parse_shard_name(path)
            out.append({**entry, "config": config, "split": split})
    return out


def release_date() -> str:
    """The date the file states: ``SOURCE_DATE_EPOCH``'s (UTC) when set, else ``RELEASE_DATE``."""
    epoch = os.environ.get(SOURCE_DATE_EPOCH)
    if epoch:
        return datetime.datetime.fromtimestamp(int(epoch), tz=datetime.timezone.utc).date().isoformat()
    return RELEASE_DATE


def croissant_metadata(dataset, described: list[dict], rai: dict):
    """The build's ``mlcroissant.Metadata``. ``described``: the build's files with their sha256
    (``describe_files``); ``rai``: the Responsible-AI fields (``responsible_ai``)."""
    import mlcroissant as mlc

    ctx = mlc.Context(conforms_to=CROISSANT_1_1)
    shards = shard_files(described)
    distribution = []
    for shard in shards:
        distribution.append(mlc.FileObject(
            ctx=ctx, id=shard["path"], name=shard["path"], content_url=shard["path"],
            content_size=f"{shard['bytes']} B", encoding_formats=[PARQUET], sha256=shard["sha256"],
            description=f"Config {shard['config']}, split {shard['split']}: {shard['rows']:,} rows."))
    configs = [c for c in dataset.configs if any(s["config"] == c for s in shards)]
    for config in configs:
        distribution.append(mlc.FileSet(
            ctx=ctx, id=f"parquet-{config}", name=f"parquet-{config}", encoding_formats=[PARQUET],
            includes=[f"{config}/*.parquet"],
            description=f"The Parquet shards of config {config} (one FileObject each above, with its sha256)."))

    record_sets = [_splits_record_set(mlc, ctx, dataset, shards)]
    enumerations: dict[tuple, str] = {}
    for config in configs:
        specs = field_specs(dataset.configs[config], config)
        for spec in _walk(specs):
            if "names" in spec:
                key = (spec["name"], tuple(spec["names"]))
                if key not in enumerations:
                    taken = set(enumerations.values()) | set(dataset.configs)
                    rid = f"{spec['name']}_labels"
                    rid = rid if rid not in taken else f"{config}_{rid}"
                    enumerations[key] = rid
                    record_sets.append(_enumeration(mlc, ctx, rid, spec["names"]))
                spec["enumeration"] = enumerations[key]
        fields = [_field(mlc, ctx, spec, f"parquet-{config}") for spec in specs]
        if SPLIT_FIELD in dataset.configs[config]:
            split_field = next(f for f in fields if f.id == f"{config}/{SPLIT_FIELD}")
            split_field.references = mlc.Source(ctx=ctx, field=f"{SPLITS_RECORD_SET}/name")
        else:
            fields.append(mlc.Field(
                ctx=ctx, id=f"{config}/{SPLIT_FIELD}", name=SPLIT_FIELD, data_types=[_uri("sc:Text")],
                description="The split, from the shard's file name.",
                source=mlc.Source(ctx=ctx, file_set=f"parquet-{config}",
                                  extract=mlc.Extract(ctx=ctx, file_property="fullpath"),
                                  transforms=[mlc.Transform(ctx=ctx, regex=_split_regex(config))]),
                references=mlc.Source(ctx=ctx, field=f"{SPLITS_RECORD_SET}/name")))
        rows = {s["split"]: 0 for s in shards if s["config"] == config}
        for s in shards:
            if s["config"] == config:
                rows[s["split"]] += s["rows"]
        record_sets.append(mlc.RecordSet(
            ctx=ctx, id=config, name=config, fields=fields, key=[f"{config}/{dataset.id_columns[config]}"],
            description=f"Config {config}: " + ", ".join(f"{s} {n:,} rows" for s, n in rows.items()) + "."))

    return mlc.Metadata(
        ctx=ctx, name=dataset.name, description=dataset.description or dataset.pretty_name,
        url=dataset.url or None, license=[_license_url(dataset.license)], cite_as=dataset.citation or None,
        creators=[_agent(mlc, ctx, c) for c in dataset.creators], version=dataset.version or __version__,
        date_published=release_date(), keywords=sorted({*dataset.task_categories, *dataset.tags}),
        conforms_to=[CROISSANT_1_1, RAI_1_0], distribution=distribution, record_sets=record_sets,
        **{_SNAKE[k]: v for k, v in rai.items()})


def _split_regex(config: str) -> str:
    """The split from a shard's path relative to the file (``<config>/<split>-00000-of-00001.parquet``).
    It also maps a bare split name to itself: mlcroissant 1.1.1 applies a join key's transforms twice
    (in the join, then again when it reads the field), and the second pass sees the split name."""
    return rf"^(?:{re.escape(config)}/)?([^/]+?)(?:-\d+-of-\d+\.parquet)?$"


def _splits_record_set(mlc, ctx, dataset, shards: list[dict]):
    present = {s["split"] for s in shards}
    data = []
    for split in [s for s in dataset.splits if s in present] + sorted(present - set(dataset.splits)):
        parent = dataset.subset_splits.get(split)
        data.append({f"{SPLITS_RECORD_SET}/name": split, f"{SPLITS_RECORD_SET}/url": SPLIT_URLS.get(split),
                     f"{SPLITS_RECORD_SET}/description": f"a subset of {parent}: repeats its rows" if parent else None})
    return mlc.RecordSet(
        ctx=ctx, id=SPLITS_RECORD_SET, name=SPLITS_RECORD_SET, data_types=[_uri("cr:Split")],
        key=[f"{SPLITS_RECORD_SET}/name"], data=data, description="The splits of this build.",
        fields=[mlc.Field(ctx=ctx, id=f"{SPLITS_RECORD_SET}/name", name="name", data_types=[_uri("sc:Text")]),
                mlc.Field(ctx=ctx, id=f"{SPLITS_RECORD_SET}/url", name="url", data_types=[_uri("sc:URL"), _uri("cr:Split")]),
                mlc.Field(ctx=ctx, id=f"{SPLITS_RECORD_SET}/description", name="description",
                          data_types=[_uri("sc:Text")])])


def _enumeration(mlc, ctx, rid: str, names: list[str]):
    return mlc.RecordSet(
        ctx=ctx, id=rid, name=rid, data_types=[_uri("sc:Enumeration")], key=[f"{rid}/index"],
        description="Class names: a label's stored value is its index here (datasets.ClassLabel).",
        data=[{f"{rid}/index": i, f"{rid}/name": n} for i, n in enumerate(names)],
        fields=[mlc.Field(ctx=ctx, id=f"{rid}/index", name="index", data_types=[_uri("cr:Int64")]),
                mlc.Field(ctx=ctx, id=f"{rid}/name", name="name", data_types=[_uri("sc:Text")])])


def _field(mlc, ctx, spec: dict, file_set: str):
    kw = {}
    if "shape" in spec:
        kw = {"is_array": True, "array_shape": ",".join(str(n) for n in spec["shape"])}
    if "sub_fields" in spec:
        return mlc.Field(ctx=ctx, id=spec["id"], name=spec["name"], **kw,
                         sub_fields=[_field(mlc, ctx, s, file_set) for s in spec["sub_fields"]])
    transforms = [mlc.Transform(ctx=ctx, json_path=p) for p in spec["path"]]
    source = mlc.Source(ctx=ctx, file_set=file_set, extract=mlc.Extract(ctx=ctx, column=spec["column"]),
                        transforms=transforms)
    description = None
    if "names" in spec:
        description = f"Class label: the index of a name in {spec['enumeration']}."
        if "shape" not in spec and not spec["path"]:
            # (a label inside a list or struct names its enumeration in words only: mlcroissant 1.1.1 would
            # join on the whole list column and fail)
            kw["references"] = mlc.Source(ctx=ctx, field=f"{spec['enumeration']}/index")
    elif spec.get("binary"):
        description = "Bytes (Parquet binary), declared as text: Croissant has no byte-string type."
    return mlc.Field(ctx=ctx, id=spec["id"], name=spec["name"], data_types=[_uri(spec["data_type"])], source=source,
                     description=description, **kw)


def _agent(mlc, ctx, creator: dict):
    kind = mlc.Person if creator.get("type") == "Person" else mlc.Organization
    return kind(ctx=ctx, name=creator["name"], url=creator.get("url"))


def _license_url(license_id: str) -> str:
    """An SPDX identifier (the card's ``license``) as its SPDX URL."""
    spdx = {"mit": "MIT", "apache-2.0": "Apache-2.0", "cc-by-4.0": "CC-BY-4.0",
            "cc-by-nc-sa-4.0": "CC-BY-NC-SA-4.0", "cc-by-sa-4.0": "CC-BY-SA-4.0", "cc0-1.0": "CC0-1.0"}
    return f"https://spdx.org/licenses/{spdx.get(license_id.lower(), license_id)}.html"


# -- Responsible AI -------------------------------------------------------------------------------------

# The rai: fields this file fills (Croissant RAI 1.0), their JSON-LD names -> mlcroissant's Metadata names
_SNAKE = {
    "dataCollection": "data_collection", "dataCollectionType": "data_collection_type",
    "dataCollectionMissingData": "data_collection_missing_data", "dataCollectionRawData": "data_collection_raw_data",
    "dataPreprocessingProtocol": "data_preprocessing_protocol", "dataManipulationProtocol": "data_manipulation_protocol",
    "dataImputationProtocol": "data_imputation_protocol",
    "dataAnnotationProtocol": "data_annotation_protocol", "dataAnnotationPlatform": "data_annotation_platform",
    "dataAnnotationAnalysis": "data_annotation_analysis", "annotationsPerItem": "annotations_per_item",
    "annotatorDemographics": "annotator_demographics", "machineAnnotationTools": "machine_annotation_tools",
    "dataBiases": "data_biases", "dataLimitations": "data_limitations", "dataUseCases": "data_use_cases",
    "dataSocialImpact": "data_social_impact", "personalSensitiveInformation": "personal_sensitive_information",
    "dataReleaseMaintenancePlan": "data_release_maintenance_plan",
}
RAI_FIELDS = tuple(_SNAKE)
_ONE = {"dataCollection", "dataCollectionMissingData", "dataCollectionRawData", "dataManipulationProtocol",
        "dataImputationProtocol", "annotationsPerItem", "dataSocialImpact", "dataReleaseMaintenancePlan"}


# mlcroissant (1.1.1 and before) writes the RAI spec's rai:dataManipulationProtocol as
# rai:dataDataManipulationProtocol (constants.ML_COMMONS_RAI_DATA_DATA_MANIPULATION_PROTOCOL): the file
# carries the spec's name. (For upstream: the constant's name and value.)
_MISNAMED = {"rai:dataDataManipulationProtocol": "rai:dataManipulationProtocol"}


def _spec_names(jsonld: dict) -> dict:
    return {_MISNAMED.get(k, k): v for k, v in jsonld.items()}


def responsible_ai(dataset, root: Path, source: str, manifest: dict) -> dict:
    """Every rai: field: the core's facts about the build, then the dataset's own
    (``Dataset.responsible_ai``), joined; a field nobody states is ``UNKNOWN``."""
    core = _core_facts(dataset, manifest)
    own = dataset.responsible_ai(str(root), source)
    unknown = sorted(set(own) - set(RAI_FIELDS))
    if unknown:
        raise ValueError(f"{dataset.name}: responsible_ai returned fields Croissant RAI does not have: {unknown}")
    out = {}
    for name in RAI_FIELDS:
        values = [v for part in (own.get(name), core.get(name)) for v in _as_list(part)]
        if not values:
            values = [UNKNOWN]
        out[name] = " ".join(values) if name in _ONE else values
    return out


def _as_list(value) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def value_counts(dataset, root: Path, config: str, column: str) -> dict:
    """{value: rows} of a categorical column over a config's splits (a subset split's repeated rows left
    out), from the build's statistics, most frequent first: the facts RAI statements quote."""
    from benchwright.statistics import statistics_of

    counts: dict = {}
    splits = statistics_of(dataset, str(root))["configs"].get(config, {}).get("splits", {})
    for split, entry in splits.items():
        if split in dataset.subset_splits:
            continue
        for value, n in entry["columns"].get(column, {}).get("values", []):
            counts[value] = counts.get(value, 0) + n
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0]))))


def counts_text(counts: dict) -> str:
    """``{"a": 3, "b": 1}`` as "a 3, b 1" (or "none")."""
    return ", ".join(f"{k} {n:,}" for k, n in counts.items()) or "none"


def source_origin(dataset, source: str) -> str:
    """What the build knows of where its source came from: the embedded default is written by the
    dataset's synthetic generator (a marker says so); any other source cannot be told apart from it."""
    import fsspec

    from benchwright.files import SOURCE_COMPLETE_MARKER

    fs, path = fsspec.core.url_to_fs(source) if source else (None, "")
    if fs is not None and fs.exists(f"{path.rstrip('/')}/{SOURCE_COMPLETE_MARKER}"):
        return (f"This build's source is the embedded default: synthetic data written by benchwright's generator "
                f"(`benchwright synth {dataset.name} --scale default --seed 0`), not real data.")
    return (f"This build's source was given to the build: a real release, or output of `benchwright synth "
            f"{dataset.name}` in the same layout. The build cannot tell which; whoever publishes it states it.")


def _core_facts(dataset, manifest: dict) -> dict:
    recon = manifest.get("reconciliation", {})
    units = recon.get("units", {})
    counts = "; ".join(f"{u}: {e.get('read', e['written'] + e['quarantined'] + e['filtered']):,} read, "
                       f"{e['written']:,} written, {e['quarantined']:,} quarantined, {e['filtered']:,} filtered"
                       for u, e in units.items())
    quarantined = recon.get("quarantined_by_stage", {})
    filtered = recon.get("filtered_by_reason", {})
    stages = sorted({k.split(".")[1] for k in manifest.get("counters", {}) if k.startswith("stage.")})
    fingerprint = manifest.get("input", {})
    facts = {
        "dataCollectionRawData": (
            f"{source_origin(dataset, fingerprint.get('url', ''))} It holds {fingerprint.get('files', 0):,} files whose "
            f"(path, size, sha256) list hashes to sha256 {fingerprint.get('sha256', 'unknown')} (_build/manifest.json)."),
        "dataPreprocessingProtocol": [
            f"benchwright {__version__} Apache Beam pipeline: parse each raw record (one parser per raw format), "
            f"derive and check it, assign its split by a stable hash of its grouping key, write the configs as "
            f"Parquet with their datasets.Features schema; the pipeline's stages: {', '.join(stages) or 'none recorded'}.",
            f"Every record is accounted for: read = written + quarantined + filtered, per unit ({counts}).",
            "Every file is validated before publication: sha256 per file, count reconciliation, the derived and "
            "dataset-specific expectations (_build/validation/report.json).",
        ],
        "dataCollectionMissingData": (
            "Records the pipeline could not use are quarantined with their file, record and reason "
            f"(_build/quarantine/): {_counts(quarantined) or 'none in this build'}. Records left out by a "
            f"documented rule are listed in _build/filtered/: {_counts(filtered) or 'none in this build'}."),
        "dataReleaseMaintenancePlan": (
            "Each build is versioned by its files: the manifest lists every file with its sha256, and a rebuild "
            "of the same input with the same options is byte-identical; drift against the previous build is "
            "reported in _build/statistics/drift.json."),
    }
    return facts


def _counts(counts: dict) -> str:
    return "; ".join(f"{k} ({n:,})" for k, n in counts.items())


# -- writing and checking -------------------------------------------------------------------------------

def write_croissant(dataset, root: Path, manifest: dict) -> list[dict]:
    """Write ``croissant.json`` at ``root`` (the build's root, beside the card) from the build's files and
    its ``manifest`` so far (input fingerprint, counters, reconciliation); returns every file of the
    build as ``describe_files`` lists them, the Croissant file included (its shards hashed once)."""
    from benchwright.manifest import describe_files

    root = Path(root)
    described = [f for f in describe_files(root) if f["path"] != CROISSANT]
    source = manifest.get("input", {}).get("url", "")
    metadata = croissant_metadata(dataset, described, responsible_ai(dataset, root, source, manifest))
    data = (json.dumps(_spec_names(metadata.to_json()), indent=2, ensure_ascii=False, sort_keys=True)
            + "\n").encode("utf-8")
    (root / CROISSANT).write_bytes(data)
    _WRITTEN[hashlib.sha256(data).hexdigest()] = _short_warnings(metadata.ctx.issues.warnings)
    entry = {"path": CROISSANT, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    return sorted([*described, entry], key=lambda f: f["path"].split("/"))


def check_croissant(dataset, root: Path, described: list[dict]) -> list[dict]:
    """The build's Croissant file against its published files (``benchwright validate``): it loads with
    mlcroissant without errors; every FileObject names a shard of this build by a relative URL, with the
    shard's sha256 and size; every shard has one; each config's FileSet selects exactly its shards; each
    config has a record set with a field per column. ``described``: the build's files (``describe_files``)."""
    root = Path(root)
    path = root / CROISSANT
    if not path.exists():
        return [{"check": "croissant", "ok": False, "detail": f"{CROISSANT} is missing"}]
    data = path.read_bytes()
    try:
        warnings = _mlcroissant_warnings(path, data)
        doc = json.loads(data)
    except Exception as err:  # mlcroissant's ValidationError, or a file that is not JSON-LD
        return [{"check": "croissant", "ok": False, "detail": f"{CROISSANT} does not load with mlcroissant: {err}"}]
    shards = {s["path"]: s for s in shard_files(described)}
    problems = []
    declared = set()
    distribution = doc.get("distribution", [])
    for fo in (d for d in distribution if d.get("@type") == "cr:FileObject"):
        url = fo.get("contentUrl", "")
        if "://" in url or url.startswith("/") or ".." in url.split("/"):
            problems.append(f"{fo.get('@id')}: contentUrl {url!r} is not a path inside the build")
            continue
        declared.add(url)
        got = shards.get(url)
        if got is None:
            problems.append(f"{url}: declared, but the build has no such shard")
        elif fo.get("sha256") != got["sha256"]:
            problems.append(f"{url}: sha256 {got['sha256'][:12]}... != {CROISSANT}'s {str(fo.get('sha256'))[:12]}...")
        elif fo.get("contentSize") != f"{got['bytes']} B":
            problems.append(f"{url}: {got['bytes']} bytes != {CROISSANT}'s {fo.get('contentSize')}")
    problems += [f"{p}: a shard {CROISSANT} does not declare" for p in sorted(set(shards) - declared)]
    for fs in (d for d in distribution if d.get("@type") == "cr:FileSet"):
        config = fs["@id"].removeprefix("parquet-")
        # mlcroissant selects a file when a pattern matches its whole path (fnmatch's rule)
        selected = {p for p in shards if any(fnmatch.fnmatchcase(p, i) for i in _as_list(fs.get("includes")))}
        own = {p for p, s in shards.items() if s["config"] == config}
        if selected != own:
            problems.append(f"{fs['@id']}: includes {fs.get('includes')} select {sorted(selected ^ own)} "
                            "beside or instead of the config's shards")
    record_sets = {rs["@id"]: rs for rs in doc.get("recordSet", [])}
    for config in sorted({s["config"] for s in shards.values()}):
        rs = record_sets.get(config)
        if rs is None:
            problems.append(f"config {config}: no record set")
            continue
        fields = {f["@id"].split("/", 1)[1] for f in rs.get("field", [])}
        missing = [c for c in dataset.configs[config] if c not in fields]
        if missing:
            problems.append(f"record set {config}: no field for the columns {missing}")
    if problems:
        return [{"check": "croissant", "ok": False, "detail": "; ".join(problems[:5])
                 + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else "")}]
    return [{"check": "croissant", "ok": True,
             "detail": f"{CROISSANT} loads with mlcroissant; its {len(declared)} FileObjects match the shards' "
                       f"sha256 and size; {len(record_sets)} record sets"
                       + (f" (mlcroissant warns: {'; '.join(warnings)})" if warnings else "")}]


# Files this process wrote from a Metadata that mlcroissant validated as it was built ({sha256: warnings}):
# a build's own validation need not parse its fresh file again (1-4 s of JSON-LD expansion per build).
_WRITTEN: dict[str, list[str]] = {}


def _mlcroissant_warnings(path: Path, data: bytes) -> list[str]:
    """mlcroissant's warnings on the file (raises its ValidationError on an error)."""
    digest = hashlib.sha256(data).hexdigest()
    if digest not in _WRITTEN:
        _WRITTEN[digest] = _short_warnings(load_metadata(path).ctx.issues.warnings)
    return _WRITTEN[digest]


def _short_warnings(warnings) -> list[str]:
    """mlcroissant's warnings with its vocabularies' URLs as their prefixes (``cr:citeAs``): the validation
    report names no URL (it renders offline, and a reader would take one for a link)."""
    out = []
    for w in warnings:
        text = str(w)
        for url, prefix in (("http://mlcommons.org/croissant/RAI/", "rai:"), ("http://mlcommons.org/croissant/", "cr:"),
                            ("https://schema.org/", "sc:"), ("http://schema.org/", "sc:")):
            text = text.replace(url, prefix)
        out.append(text)
    return sorted(out)


def load_metadata(path: Path):
    """The Croissant file at ``path`` as mlcroissant reads it (``mlcroissant.Dataset``; its warnings, e.g. a
    missing citation, are in ``.ctx.issues.warnings``, not logged); raises mlcroissant's ValidationError."""
    import logging

    import mlcroissant as mlc

    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)
    try:
        return mlc.Dataset(jsonld=str(path)).metadata
    finally:
        absl.setLevel(level)
