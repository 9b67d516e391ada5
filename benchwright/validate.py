"""Table-level validation of a build: manifest integrity, count reconciliation, great-expectations suites.

Used twice: by the build on its staging folder before publishing, and by ``benchwright validate``
on a published folder. Writes ``_build/validation/report.json`` and an HTML report that renders
offline (``_build/validation/index.html``, ``benchwright.report``). great-expectations is imported
here only, lazily: it is slow to import and never needed per element.
"""
from __future__ import annotations

import json
import logging
import os
import posixpath
import shutil
import tempfile
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from benchwright import published
from benchwright.card import split_sizes
from benchwright.croissant import check_croissant
from benchwright.errors import BenchwrightError
from benchwright.layout import MANIFEST, VALIDATION_DIR
from benchwright.manifest import describe_files, reconcile
from benchwright.memory import collection_paused
from benchwright.tables import is_list_like, parquet_leaf_path
from benchwright.writer import SPLIT_COLUMN, parse_shard_name


def check_manifest(root: Path, described: list[dict] | None = None) -> list[dict]:
    """Every file the manifest lists has its sha256 and size; no data file is missing from it (any
    other file is reported, except screenshots under ``_build/screenshots/``: views of the build that
    ``benchwright screenshot`` makes after it, which ``describe_files`` leaves out). ``described``: the
    files as ``describe_files`` just read them (a build passes what it wrote into the manifest a moment
    ago, instead of hashing every byte a second time)."""
    manifest_path = root / MANIFEST
    if not manifest_path.exists():
        return [{"check": "manifest", "ok": False, "detail": f"{manifest_path} is missing"}]
    manifest = json.loads(manifest_path.read_text())
    listed = {f["path"]: f for f in manifest["files"]}
    actual = {f["path"]: f for f in (described if described is not None else describe_files(root))}
    results = []
    for path, want in sorted(listed.items()):
        got = actual.get(path)
        if got is None:
            results.append({"check": "file present", "ok": False, "detail": f"{path} is listed but missing"})
        elif (got["sha256"], got["bytes"]) != (want["sha256"], want["bytes"]):
            results.append({"check": "file sha256", "ok": False,
                            "detail": f"{path}: sha256 {got['sha256'][:12]}... != manifest {want['sha256'][:12]}..."})
    for path in sorted(set(actual) - set(listed)):
        results.append({"check": "file listed", "ok": False, "detail": f"{path} is not in the manifest"})
    if not results:
        results.append({"check": "manifest", "ok": True, "detail": f"{len(listed)} files match their sha256"})
    return results


def check_reconciliation(dataset, root: Path) -> list[dict]:
    manifest = json.loads((root / MANIFEST).read_text())
    try:
        recon = reconcile(dataset, root, manifest["counters"], manifest["options"]["max_bad_fraction"])
    except BenchwrightError as err:
        return [{"check": "reconciliation", "ok": False, "detail": str(err)}]
    if recon["units"] != manifest["reconciliation"]["units"]:
        return [{"check": "reconciliation", "ok": False,
                 "detail": f"counts from the files {recon['units']} differ from the manifest's"}]
    return [{"check": "reconciliation", "ok": True,
             "detail": ", ".join(f"{u}: {e['read']} read = {e['written']} written + {e['quarantined']} quarantined + "
                                 f"{e['filtered']} filtered" for u, e in recon["units"].items())}]


def derived_expectations(dataset) -> dict[str, list]:
    """The expectations every dataset gets from its declaration, so no dataset restates them: each
    config's id column unique and non-null, the id columns of other configs it carries (its keys)
    non-null, every ClassLabel within its names, a stored split column within the declared splits."""
    from datasets import ClassLabel  # ~2 s to import; validation alone needs it

    out = {}
    for config, features in dataset.configs.items():
        own = dataset.id_columns[config]
        # with subset splits an id repeats across splits: unique within each split (check_subset_splits)
        exps = [] if dataset.subset_splits else [("ExpectColumnValuesToBeUnique", {"column": own})]
        exps += [("ExpectColumnValuesToNotBeNull", {"column": own})]
        exps += [("ExpectColumnValuesToNotBeNull", {"column": key})
                 for key in sorted(set(dataset.id_columns.values()) - {own} - set(dataset.optional_keys.get(config, ())))
                 if key in features]
        exps += [("ExpectColumnValuesToBeInSet", {"column": name, "value_set": list(range(feature.num_classes))})
                 for name, feature in features.items() if isinstance(feature, ClassLabel)]
        if SPLIT_COLUMN in features and dataset.splits:
            exps.append(("ExpectColumnValuesToBeInSet", {"column": SPLIT_COLUMN, "value_set": list(dataset.splits)}))
        out[config] = exps
    return out


def check_splits(dataset, root: Path) -> list[dict]:
    """Every config holds only declared splits, none of them written empty. A declared split with
    no rows is reported, not failed: a small source (one video, say) can fill only one split."""
    results = []
    for config in dataset.configs:
        sizes = split_sizes(root, config)
        unknown = sorted(set(sizes) - set(dataset.splits))
        empty = sorted(s for s, (rows, _) in sizes.items() if rows == 0)
        absent = [s for s in dataset.splits if s not in sizes]
        ok = not (unknown or empty)
        detail = ", ".join(f"{s} {rows:,} rows" for s, (rows, _) in sizes.items()) if ok else \
            "; ".join(f"{what}: {names}" for what, names in (("undeclared", unknown), ("empty", empty)) if names)
        if absent:
            detail += f" (no rows for {', '.join(absent)})"
        results.append({"check": f"{config}: split sizes", "ok": ok, "detail": detail})
    return results


def check_subset_splits(dataset, root: Path) -> list[dict]:
    """With subset splits (``Dataset.subset_splits``) ids are unique within each split, and each id of a
    subset split is also an id of its parent split."""
    results = []
    for config in dataset.configs if dataset.subset_splits else ():
        own = dataset.id_columns[config]
        ids: dict[str, set] = {}
        duplicates: list = []
        for f in sorted((root / config).glob("*.parquet")):
            split = parse_shard_name(f.as_posix())[1]
            seen = ids.setdefault(split, set())
            for value in pq.read_table(f, columns=[own]).column(own).to_pylist():
                if value in seen:
                    duplicates.append(f"{split}:{value}")
                seen.add(value)
        results.append({"check": f"{config}: {own} unique within each split", "ok": not duplicates,
                        "detail": f"{len(duplicates):,} repeated, e.g. {duplicates[:3]}" if duplicates else
                        ", ".join(f"{s} {len(v):,}" for s, v in ids.items())})
        for split, parent in dataset.subset_splits.items():
            outside = sorted(ids.get(split, set()) - ids.get(parent, set()), key=str)
            results.append({"check": f"{config}: {split} within {parent}", "ok": not outside,
                            "detail": f"{len(ids.get(split, ())):,} ids" if not outside else
                            f"{len(outside):,} {own} values not in {parent}, e.g. {outside[:3]}"})
    return results


def import_expectations() -> None:
    """Import great-expectations (2-3 s), only in the process that validates: a build has its child that
    checks the data do it while the pipeline runs (``check_files``), never the CLI at start-up."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    with collection_paused():
        import great_expectations  # noqa: F401
        import great_expectations.expectations  # noqa: F401
        from great_expectations.data_context.types.base import ProgressBarsConfig  # noqa: F401

    # great-expectations sets this logger to INFO when imported, and it logs the temporary folder of every
    # ephemeral context it makes ("Created temporary directory ... for ephemeral docs site"): its warnings stay
    logging.getLogger("great_expectations.data_context.types.base").setLevel(logging.WARNING)


def prepare_expectations() -> None:
    """``import_expectations`` and this process's ephemeral context (``_pandas_source``): what a build's
    child that checks the data does while the pipeline runs, and what a later build in the same process (a
    test worker's) does once in the process itself, so that its children inherit them."""
    import_expectations()
    with collection_paused():
        _pandas_source()


def run_expectations(dataset, root: Path) -> list[dict]:
    """Runs each config's suite (the derived expectations, then the dataset's own) on its Parquet
    (all splits). The results go into the project's own offline report (``benchwright.report``):
    great-expectations' Data Docs pull their styles and scripts from CDNs and stamp the run's time."""
    import_expectations()
    import great_expectations as gx
    import great_expectations.expectations as gxe
    from great_expectations.core.result_format import ResultFormat

    own = dataset.expectation_suites()
    suites = {config: exps + list(own.get(config, [])) for config, exps in derived_expectations(dataset).items()}
    source = _pandas_source()
    results = []
    for config, expectations in sorted(suites.items()):
        files = sorted((root / config).glob("*.parquet"))
        columns = sorted({e[1][k] for e in expectations for k in ("column", "column_A", "column_B") if k in e[1]}
                         | {c for e in expectations for c in e[1].get("column_list", [])})
        frame = pq.ParquetDataset(files).read(columns=columns or None).to_pandas() if files else None
        if frame is None:
            optional = config in dataset.optional_configs
            results.append({"check": f"{config}: data", "ok": optional, "config": config,
                            "detail": "no rows: the source has none (an optional config)" if optional else
                            "no Parquet files"})
            continue
        # The suite is validated on the batch as it is: not saved to the context's stores, nor wrapped in a
        # saved ValidationDefinition (their serialisation cost more than the checks of a small build).
        suite = gx.ExpectationSuite(name=f"{dataset.name}.{config}",
                                    expectations=[getattr(gxe, name)(**kwargs) for name, kwargs in expectations])
        asset = source.add_dataframe_asset(f"{dataset.name}.{config}.{len(source.assets)}")
        batch = asset.add_batch_definition_whole_dataframe("all").get_batch(batch_parameters={"dataframe": frame})
        outcome = batch.validate(suite, result_format=ResultFormat.SUMMARY)
        source.delete_asset(asset.name)
        for r in outcome.to_json_dict()["results"]:
            cfg = r["expectation_config"]
            kwargs = {k: v for k, v in cfg["kwargs"].items() if k != "batch_id"}
            detail = {"unexpected_count": r["result"].get("unexpected_count"),
                      "examples": r["result"].get("partial_unexpected_list", [])[:5],
                      "observed": r["result"].get("observed_value")}
            results.append({"check": f"{config}: {cfg['type']}({_short(kwargs)})", "ok": bool(r["success"]),
                            "config": config, "detail": json.dumps(detail, default=str)})
    return results


_CONTEXT: list = []  # this process's ephemeral great-expectations context and its pandas data source


def _pandas_source():
    """A pandas data source of an ephemeral great-expectations context, made once per process (a context
    makes its stores and temporary docs folder: made per build, it cost more than a small build's checks)."""
    if not _CONTEXT:
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig

        context = gx.get_context(mode="ephemeral")
        context.variables.progress_bars = ProgressBarsConfig(globally=False)
        _CONTEXT.append(context.data_sources.add_pandas("benchwright"))
    return _CONTEXT[0]


def check_references(dataset, root: Path) -> list[dict]:
    """Referential integrity between configs, as the dataset declares it (``Dataset.references``):
    every non-null value of a key column is an id of the target config (lists element by element)."""
    import pyarrow.compute as pc

    results = []
    for config, keys in sorted(dataset.references.items()):
        for column, target in sorted(keys.items()):
            name = f"{config}: {column} -> {target}.{dataset.id_columns[target]}"
            values = _leaf_values(root, config, column)
            ids = _leaf_values(root, target, dataset.id_columns[target])
            if values is None:
                optional = config in dataset.optional_configs
                results.append({"check": name, "ok": optional, "config": config, "kind": "reference",
                                "detail": "no rows" if optional else "no Parquet files"})
                continue
            values = pc.drop_null(values)
            known = pc.is_in(values, value_set=pc.unique(ids)) if ids is not None else pa.array([False] * len(values))
            dangling = pc.unique(pc.filter(values, pc.invert(known))).to_pylist()
            results.append({"check": name, "ok": not dangling, "config": config, "kind": "reference",
                            "detail": f"{len(values):,} references resolve" if not dangling else
                            f"{len(dangling):,} values name no {target} row, e.g. {sorted(map(str, dangling))[:5]}"})
    return results


def _leaf_values(root: Path, config: str, column: str):
    """The values of ``column`` (``a.b``: field b of a; lists flattened) over a config's files, or None."""
    import pyarrow.compute as pc

    files = sorted((root / config).glob("*.parquet"))
    if not files:
        return None
    head, *fields = column.split(".")
    # Only the leaf is read (``objects.list.element.box_id``, not every field of every object: 69 MB
    # against 443 MB for the WildBox release's frames).
    leaf = parquet_leaf_path(pq.ParquetFile(files[0]), column)
    arr = pa.concat_arrays([c for f in files for c in pq.ParquetFile(f).read(columns=[leaf]).column(head).chunks]) \
        if leaf else pq.ParquetDataset(files).read(columns=[head]).column(head).combine_chunks()
    for field in [None, *fields]:
        while is_list_like(arr.type):
            arr = pc.list_flatten(arr)
        if field is not None:
            arr = pc.struct_field(arr, [field])
    return arr


def check_proportions(dataset, stats: dict) -> list[dict]:
    """Class and split shares within the dataset's bounds (``Dataset.proportion_bounds``), over
    every split of a config, from the build's statistics."""
    results = []
    for target, bounds in sorted(dataset.proportion_bounds.items()):
        config, column = target.split(".", 1)
        counts: dict = {}
        splits = stats["configs"].get(config, {}).get("splits", {})
        for entry in splits.values():
            col = entry["columns"].get(column)
            for value, n in (col or {}).get("values", []):
                counts[value] = counts.get(value, 0) + n
        total = sum(counts.values())
        if total < dataset.proportion_min_rows:
            results.append({"check": f"{target}: shares within bounds", "ok": True, "config": config,
                            "kind": "proportion",
                            "detail": f"not applied: {total:,} values < {dataset.proportion_min_rows:,}"})
            continue
        names = _class_names(dataset, config, column) or sorted(counts, key=str)
        for value, (low, high) in sorted(bounds.items(), key=lambda kv: str(kv[0])):
            for v in (names if value == "*" else [value]):
                share = counts.get(v, 0) / total
                results.append({"check": f"{target}: share of {v} in [{low:g}, {high:g}]", "ok": low <= share <= high,
                                "config": config, "kind": "proportion",
                                "detail": f"{share:.3f} ({counts.get(v, 0):,} of {total:,})"})
    return results


def _class_names(dataset, config: str, column: str) -> list | None:
    from datasets import ClassLabel

    feature = dataset.configs[config].get(column)
    return list(feature.names) if isinstance(feature, ClassLabel) else None


def check_images(stats: dict) -> list[dict]:
    """Every stored image reads, per config and split, as the statistics counted it: its bytes decode
    (``checked`` "decode") or, from a build's header-only statistics, its header reads."""
    from benchwright.statistics import DECODE, image_failures

    results = []
    for config, entry in stats["configs"].items():
        for split, s in entry["splits"].items():
            for column, col in s["columns"].items():
                if col["kind"] == "image":
                    checked, bad = image_failures(col)
                    what = "bytes decode" if checked == DECODE else "headers read (pixels not decoded)"
                    results.append({"check": f"{config}: {column} {what} ({split})", "ok": bad == 0,
                                    "config": config, "kind": "image",
                                    "detail": f"{col['count']:,} images: {what}" if not bad else
                                    f"{bad:,} of {col['count']:,} fail ({what}), e.g. {col['failed_examples']}"})
    return results


def _short(kwargs: dict) -> str:
    text = ", ".join(f"{k}={v}" for k, v in sorted(kwargs.items()))
    return text if len(text) < 120 else text[:117] + "..."


def check_data(dataset, root: Path, decode_images: bool = False, files: dict | None = None) -> list[dict]:
    """Every check on the data itself (what the card lists): splits, subset splits, the dataset's
    table checks, declared references and proportions, the images (as the stored statistics read
    them: each one's header, or with ``build --decode-images`` its bytes decoded; with ``decode_images``
    every image's bytes decoded now), the expectation suites, and the drift the build recorded
    against its previous build. ``files``: ``check_files``'s results when the caller has them (a build
    computes them in a child beside its statistics)."""
    from benchwright.drift import drift_results, read_drift
    from benchwright.statistics import image_statistics, statistics_of

    root = Path(root)
    files = files if files is not None else check_files(dataset, root)
    stats = statistics_of(dataset, str(root))
    results = files["split"] + files["table"] + files["reference"]
    results += check_proportions(dataset, stats)
    results += _unless_unreadable("image", lambda: check_images(
        image_statistics(dataset, root, decode_images=True) if decode_images else stats))
    results += files["expectation"]
    results += [dict(r, kind="drift") for r in drift_results(read_drift(str(root)))]
    return results


def check_files(dataset, root: Path | str) -> dict[str, list[dict]]:
    """The checks of ``check_data`` that read only the build's data files (not its statistics or drift),
    by kind: split sizes and subset splits, the dataset's table checks, references, expectation suites."""
    root = Path(root)
    return {
        "split": _unless_unreadable("split", lambda: [dict(r, kind="split") for r in
                                                      check_splits(dataset, root) + check_subset_splits(dataset, root)]),
        "table": _unless_unreadable("table", lambda: [{"kind": "table", **r} for r in dataset.validate_tables(str(root))]),
        "reference": _unless_unreadable("reference", lambda: check_references(dataset, root)),
        "expectation": _unless_unreadable("expectation", lambda: [dict(r, kind="expectation")
                                                                  for r in run_expectations(dataset, root)]),
    }


def _unless_unreadable(kind: str, checks) -> list[dict]:
    """``checks()``'s results, or one failed check when a file they read is damaged (a shard whose
    bytes changed after the build): the report names the failure instead of the command crashing."""
    try:
        return checks()
    except (OSError, pa.ArrowException) as err:
        return [{"check": f"{kind} checks", "ok": False, "kind": kind,
                 "detail": f"a file they read cannot be read: {err}"}]


def validate_build(dataset, root: Path, extra: list[dict] | None = None,
                   described: list[dict] | None = None, data: list[dict] | None = None) -> dict:
    """Validates the build at ``root`` and writes its report (``report.json`` and the offline HTML
    report, ``index.html``) under ``_build/validation/``. ``data``: the results of ``check_data``
    when the caller has them already (a build runs them before rendering its card); without them every
    image's bytes are decoded (``benchwright validate``: the build itself reads only their headers,
    unless built with ``--decode-images``)."""
    from benchwright.report import write_report
    from benchwright.statistics import statistics_of

    root = Path(root)
    vdir = root / VALIDATION_DIR
    described = described if described is not None else describe_files(root)
    results = [{"kind": "integrity", **r} for r in list(extra or []) + check_manifest(root, described)
               + _unless_unreadable("integrity", lambda: check_reconciliation(dataset, root))
               + check_croissant(dataset, root, described)]
    results += data if data is not None else check_data(dataset, root, decode_images=True)
    failed = [r for r in results if not r["ok"]]
    report = {
        "dataset": dataset.name,
        "passed": not failed,
        "checks": len(results),
        "failed": len(failed),
        "warnings": sum(bool(r.get("warning")) for r in results),
        "summary": "; ".join(f"{r['check']}: {r['detail']}" for r in failed[:5]) or "all checks passed",
        "results": results,
        "data_docs": f"{VALIDATION_DIR}/index.html",
    }
    if vdir.exists():
        shutil.rmtree(vdir)
    vdir.mkdir(parents=True, exist_ok=True)
    (vdir / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    write_report(dataset, report, statistics_of(dataset, str(root)), vdir)
    return report


def validate_url(dataset, url: str) -> tuple[dict, str]:
    """Validate the committed build at a dataset URL (local folder or object store); returns the
    report and where it was written. On object storage the committed build is checked on a local
    copy (every byte must be read for its sha256 anyway), the root manifest must be the build's own
    manifest, and the report is written back beside the build."""
    if published.is_local(url):
        root = Path(fsspec.core.url_to_fs(url)[1])
        return validate_build(dataset, root), str(root / VALIDATION_DIR / "report.json")
    root_manifest, build_url = published.committed(url)  # one read: a commit meanwhile cannot mix builds
    with tempfile.TemporaryDirectory(prefix="benchwright-validate-") as work:
        local = Path(work) / "build"
        published.mirror(build_url, local)
        shutil.rmtree(local / VALIDATION_DIR, ignore_errors=True)  # the previous report is not under test
        report = validate_build(dataset, local, extra=_root_manifest_check(url, root_manifest, local))
        fs, target = fsspec.core.url_to_fs(published.join(build_url, VALIDATION_DIR))
        fs.put(str(local / VALIDATION_DIR), posixpath.dirname(target), recursive=True)
    return report, published.join(build_url, VALIDATION_DIR, "report.json")


def _root_manifest_check(url: str, root: dict, local: Path) -> list[dict]:
    own = json.loads((local / MANIFEST).read_text())
    same = {k: v for k, v in root.items() if k != "published_at"} == own
    return [{"check": "root manifest", "ok": same,
             "detail": f"{url}/{MANIFEST} commits {root.get('published_at')}" + ("" if same else
                       ", but differs from that build's own manifest")}]
