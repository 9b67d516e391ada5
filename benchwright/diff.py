"""``benchwright diff OLD NEW``: what changed between two builds of a dataset (local folders or ``s3://``).

Per config and split, by id (``Dataset.id_columns``; with subset splits by split and id): the rows
added, removed and changed, with examples; the columns whose values changed (struct fields and the
fields of lists of structs by their path, ``objects.center_cam``), with old and new values of a few
rows; the statistics of both builds side by side with the drift figures (``benchwright.drift``);
the files added, removed and changed (from the manifests); and both builds' input fingerprints.

Rows are compared columnar (pyarrow, numpy): a column's values are equal when both are null, both
NaN, or equal element by element at every level of nesting.
"""
from __future__ import annotations

import hashlib
import json

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchwright import published
from benchwright.errors import BenchwrightError
from benchwright.tables import is_list_like

FORMAT = "benchwright-diff/1"
KEY = "__key__"
SPLIT = "__split__"


def diff_builds(old_url: str, new_url: str, examples: int = 5) -> dict:
    from benchwright import registry
    from benchwright.drift import compare, thresholds
    from benchwright.statistics import statistics_of

    old_manifest, old_root = published.committed(old_url)
    new_manifest, new_root = published.committed(new_url)
    if old_manifest["dataset"] != new_manifest["dataset"]:
        raise BenchwrightError(f"{old_url} is a {old_manifest['dataset']} build, {new_url} a {new_manifest['dataset']} one")
    dataset = registry.get(new_manifest["dataset"])
    configs = {config: _config_diff(dataset, config, old_manifest, old_root, new_manifest, new_root, examples)
               for config in dataset.configs}
    old_stats, new_stats = statistics_of(dataset, old_root), statistics_of(dataset, new_root)
    return {
        "format": FORMAT,
        "dataset": dataset.name,
        "old": _about(old_url, old_root, old_manifest),
        "new": _about(new_url, new_root, new_manifest),
        "configs": configs,
        "statistics": {config: {"old": old_stats["configs"].get(config), "new": new_stats["configs"].get(config)}
                       for config in dataset.configs},
        "drift": compare(old_stats, new_stats, thresholds(dataset)),
        "files": file_diff(old_manifest, new_manifest, examples),
    }


def _about(url: str, root: str, manifest: dict) -> dict:
    return {"url": url, "build": published.build_id(manifest), "input": manifest.get("input"),
            "benchwright_version": manifest.get("benchwright_version"),
            "rows": manifest.get("reconciliation", {}).get("rows")}


def file_diff(old: dict, new: dict, examples: int) -> dict:
    a = {f["path"]: f["sha256"] for f in old["files"]}
    b = {f["path"]: f["sha256"] for f in new["files"]}
    added, removed = sorted(set(b) - set(a)), sorted(set(a) - set(b))
    changed = sorted(p for p in set(a) & set(b) if a[p] != b[p])
    return {"added": len(added), "removed": len(removed), "changed": len(changed),
            "unchanged": len(set(a) & set(b)) - len(changed),
            "examples": {"added": added[:examples], "removed": removed[:examples], "changed": changed[:examples]}}


def _read(dataset, config: str, manifest: dict, root: str) -> pa.Table | None:
    shards = sorted((s["path"], s["split"]) for s in manifest["shards"] if s["config"] == config)
    if not shards:
        return None
    fs, base = fsspec.core.url_to_fs(root)
    tables = []
    for path, split in shards:  # the split is the file's (a table need not store it as a column)
        table = pq.read_table(f"{base.rstrip('/')}/{path}", filesystem=fs)
        tables.append(table.append_column(SPLIT, pa.array([split] * table.num_rows, pa.string())))
    table = pa.concat_tables(tables, promote_options="default")
    id_column = dataset.id_columns[config]
    key = pc.cast(table.column(id_column), pa.string())
    if dataset.subset_splits:  # an id repeats across subset splits: the key is (split, id)
        key = pc.binary_join_element_wise(table.column(SPLIT), key, "\x00")
    return table.append_column(KEY, key)


def _config_diff(dataset, config, old_manifest, old_root, new_manifest, new_root, examples) -> dict:
    old = _read(dataset, config, old_manifest, old_root)
    new = _read(dataset, config, new_manifest, new_root)
    id_column = dataset.id_columns[config]
    if old is None and new is None:
        return {"splits": {}, "columns": {}}
    old = new.schema.empty_table() if old is None else old
    new = old.schema.empty_table() if new is None else new
    old_keys, new_keys = old.column(KEY).combine_chunks(), new.column(KEY).combine_chunks()
    in_old = pc.index_in(new_keys, value_set=old_keys)             # each new row's old row (null: added)
    added_rows = np.flatnonzero(~in_old.is_valid().to_numpy(zero_copy_only=False))
    removed_rows = np.flatnonzero(~pc.is_in(old_keys, value_set=new_keys).to_numpy(zero_copy_only=False))
    common_new = np.flatnonzero(in_old.is_valid().to_numpy(zero_copy_only=False))
    common_old = in_old.to_numpy(zero_copy_only=False)[common_new].astype(np.int64) if len(common_new) else \
        np.zeros(0, np.int64)

    columns = [c for c in new.column_names if c not in (KEY, SPLIT) and c in old.column_names]
    splits_new = new.column(SPLIT).to_pylist()
    changed_any = np.zeros(len(common_new), bool)
    column_changes = {}
    for column in columns:
        a = old.column(column).combine_chunks().take(pa.array(common_old, pa.int64()))
        b = new.column(column).combine_chunks().take(pa.array(common_new, pa.int64()))
        same, inner = _equal(a, b)
        for path, eq in [(column, same), *((f"{column}.{p}", e) for p, e in inner.items())]:
            rows = np.flatnonzero(~eq)
            if not len(rows):
                continue
            ids = _ids(new, common_new[rows], id_column)
            order = sorted(range(len(rows)), key=lambda k: (str(ids[k]), splits_new[common_new[rows[k]]]))[:examples]
            column_changes[path] = {  # a field's examples name the rows; the column's show its values
                "rows": int(len(rows)),
                "examples": [{"id": ids[k], "split": splits_new[common_new[rows[k]]]} if path != column else
                             {"id": ids[k], "split": splits_new[common_new[rows[k]]],
                              "old": _brief(a[int(rows[k])].as_py()), "new": _brief(b[int(rows[k])].as_py())}
                             for k in order],
            }
        changed_any |= ~same
    changed_rows = common_new[changed_any]
    split_of_new, split_of_old = splits_new, old.column(SPLIT).to_pylist()
    splits: dict[str, dict] = {}

    def entry(split):
        return splits.setdefault(split, {"old_rows": 0, "new_rows": 0, "added": 0, "removed": 0, "changed": 0,
                                         "examples": {"added": [], "removed": [], "changed": []}})

    for s in split_of_old:
        entry(s)["old_rows"] += 1
    for s in split_of_new:
        entry(s)["new_rows"] += 1
    for what, rows, table, split_of in (("added", added_rows, new, split_of_new),
                                        ("removed", removed_rows, old, split_of_old),
                                        ("changed", changed_rows, new, split_of_new)):
        ids = _ids(table, rows, id_column)
        for row, id_ in sorted(zip(rows, ids), key=lambda r: str(r[1])):
            e = entry(split_of[row])
            e[what] += 1
            if len(e["examples"][what]) < examples:
                e["examples"][what].append(id_)
    order = {"train": 0, "validation": 1, "test": 2}
    return {"id_column": id_column,
            "splits": {s: splits[s] for s in sorted(splits, key=lambda s: (order.get(s, 9), s))},
            "columns": dict(sorted(column_changes.items()))}


def _ids(table: pa.Table, rows, id_column: str) -> list:
    if not len(rows):
        return []
    return table.column(id_column).combine_chunks().take(pa.array(np.asarray(rows, np.int64))).to_pylist()


# ---------------------------------------------------------------------------------------------
# Columnar equality at every level of nesting


def _equal(a: pa.Array, b: pa.Array) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(rows equal, {field path: rows where that field is equal}) of two aligned arrays."""
    n = len(a)
    va = a.is_valid().to_numpy(zero_copy_only=False)
    vb = b.is_valid().to_numpy(zero_copy_only=False)
    both = va & vb
    inner: dict[str, np.ndarray] = {}
    t = a.type
    if a.type != b.type:
        try:
            b = b.cast(a.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return ~(va | vb), inner
    if pa.types.is_struct(t):
        values = np.ones(n, bool)
        for i in range(t.num_fields):
            name = t.field(i).name
            eq, sub = _equal(pc.struct_field(a, [i]), pc.struct_field(b, [i]))
            eq = eq | ~both  # a null struct's fields are not its values
            inner[name] = eq
            inner.update({f"{name}.{p}": e | ~both for p, e in sub.items()})
            values &= eq
    elif is_list_like(t):
        la = pc.fill_null(pc.list_value_length(a), 0).to_numpy(zero_copy_only=False)
        lb = pc.fill_null(pc.list_value_length(b), 0).to_numpy(zero_copy_only=False)
        aligned = both & (la == lb)
        pa_idx = pc.list_parent_indices(a).to_numpy(zero_copy_only=False)
        pb_idx = pc.list_parent_indices(b).to_numpy(zero_copy_only=False)
        ma, mb = aligned[pa_idx], aligned[pb_idx]
        child_eq, child_inner = _equal(pc.filter(pc.list_flatten(a), pa.array(ma)),
                                       pc.filter(pc.list_flatten(b), pa.array(mb)))
        parents = pa_idx[ma]
        values = aligned & (np.bincount(parents, weights=~child_eq, minlength=n) == 0)
        for p, e in child_inner.items():
            inner[p] = ~both | ~aligned | (np.bincount(parents, weights=~e, minlength=n) == 0)
    else:
        eq = pc.fill_null(pc.equal(a, b), False).to_numpy(zero_copy_only=False)
        if pa.types.is_floating(t):
            eq = eq | (pc.fill_null(pc.is_nan(a), False).to_numpy(zero_copy_only=False)
                       & pc.fill_null(pc.is_nan(b), False).to_numpy(zero_copy_only=False))
        values = eq
    return (both & values) | ~(va | vb), inner


def _brief(value, width: int = 160):
    """A value short enough to read: bytes as their size and hash, long text and nested values cut."""
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value):,} bytes, sha256 {hashlib.sha256(value).hexdigest()[:12]}>"
    if isinstance(value, dict) and isinstance(value.get("bytes"), (bytes, bytearray)):
        value = {**value, "bytes": _brief(value["bytes"])}
    if isinstance(value, (list, dict)):
        text = json.dumps(value, default=str, ensure_ascii=False)
        return value if len(text) <= width else text[:width - 1] + "\u2026"
    if isinstance(value, str) and len(value) > width:
        return value[:width - 1] + "\u2026"
    return value


# ---------------------------------------------------------------------------------------------
# For people


def markdown(diff: dict, top: int = 15) -> str:
    from benchwright.card import markdown_table

    old, new = diff["old"], diff["new"]
    lines = [f"# {diff['dataset']}: {old['url']} -> {new['url']}", "",
             f"Builds `{old['build']}` -> `{new['build']}`. Input: "
             f"`{str((old['input'] or {}).get('sha256'))[:12]}` ({(old['input'] or {}).get('files')} files) -> "
             f"`{str((new['input'] or {}).get('sha256'))[:12]}` ({(new['input'] or {}).get('files')} files).", "",
             "## Rows", "",
             markdown_table(["config", "split", "old rows", "new rows", "added", "removed", "changed"],
                            [[c, s, e["old_rows"], e["new_rows"], e["added"], e["removed"], e["changed"]]
                             for c, cd in diff["configs"].items() for s, e in cd["splits"].items()])]
    for config, cd in diff["configs"].items():
        notes = []
        for split, e in cd["splits"].items():
            for what in ("added", "removed", "changed"):
                if e["examples"][what]:
                    more = e[what] - len(e["examples"][what])
                    notes.append(f"- {split}, {what}: " + ", ".join(f"`{x}`" for x in e["examples"][what])
                                 + (f" and {more:,} more" if more else ""))
        if cd["columns"]:
            notes.append("- columns changed: " + ", ".join(f"`{p}` ({c['rows']:,} rows)" for p, c in cd["columns"].items()))
        if notes:
            lines += ["", f"### {config}", "", *notes]
    moved = sorted((c for c in diff["drift"] if c["value"] > 0), key=lambda c: (not c["exceeded"], -c["value"], c["target"]))
    lines += ["", "## Statistics and drift", ""]
    if moved:
        lines.append(markdown_table(["target", "metric", "value", "limit", "old", "new"],
                                    [[f"`{c['target']}`", c["metric"], c["value"], c["limit"],
                                      str(c["previous"]).replace("|", "\\|"), str(c["current"]).replace("|", "\\|")]
                                     for c in moved[:top]]))
        if len(moved) > top:
            lines.append(f"\n...and {len(moved) - top:,} more comparisons that moved (all of them in the JSON).")
    else:
        lines.append("No statistic moved.")
    f = diff["files"]
    lines += ["", "## Files", "", f"{f['added']:,} added, {f['removed']:,} removed, {f['changed']:,} changed, "
              f"{f['unchanged']:,} unchanged."]
    return "\n".join(lines) + "\n"


def run_cli(old: str, new: str, json_out: str | None, markdown_out: str | None, examples: int) -> str:
    result = diff_builds(old, new, examples)
    text = markdown(result)
    if json_out:
        with fsspec.open(json_out, "w", encoding="utf-8") as f:
            f.write(json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False, default=str) + "\n")
    if markdown_out:
        with fsspec.open(markdown_out, "w", encoding="utf-8") as f:
            f.write(text)
    return text
