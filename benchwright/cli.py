"""``benchwright``: build, unlock, synth, validate, screenshot, diff, export, evaluate, baseline, run, info.

Unknown ``--options`` of ``build`` go to Beam unchanged (``--runner DataflowRunner --project ...``).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

import fsspec
from tqdm import tqdm

from benchwright import published, registry
from benchwright.errors import BenchwrightError
from benchwright.layout import CARD_HTML, DRIFT, MANIFEST, QUARANTINE_DIR, STATISTICS, VALIDATION_DIR
from benchwright.options import RUNNING_MODES, BuildOptions


def cmd_build(args, beam_args) -> int:
    from benchwright.build import build  # Beam and datasets (~3 s): only build and validate need them

    names = list(registry.names()) if args.dataset == "all" else [args.dataset]
    if args.source and len(names) > 1:
        raise BenchwrightError("--source names one dataset's input; build datasets one at a time with it")
    options = BuildOptions(out=args.out, runner=args.runner, running_mode=args.running_mode,
                           num_workers=args.workers, max_bad_fraction=args.max_bad_fraction,
                           drift_blocking=tuple(p for v in args.drift_blocking or () for p in v.split(",") if p),
                           stale_lock_after=args.stale_lock_after, beam_args=beam_args,
                           dask_address=args.dask_address)
    with _dask_cluster(args, options):
        for name in names:
            final = build(registry.get(name), args.source, options)
            if final is not None:
                print(describe(final))
    return 0


@contextlib.contextmanager
def _dask_cluster(args, options: BuildOptions):
    """``--dask-local N``: a cluster of N worker processes on this machine for the builds, closed after."""
    from benchwright.options import DASK_RUNNER

    dask = args.dask_address or args.dask_local
    if dask and options.runner != DASK_RUNNER:
        raise BenchwrightError("--dask-address and --dask-local choose the cluster of --runner dask")
    if options.runner == DASK_RUNNER and not dask and not any(a.startswith("--dask_") for a in options.beam_args):
        raise BenchwrightError("--runner dask builds on a dask.distributed cluster: give its scheduler "
                               "(--dask-address HOST:PORT) or --dask-local N to start one here")
    if not args.dask_local:
        yield
        return
    from benchwright.runners.dask import local_cluster

    with local_cluster(args.dask_local) as address:
        options.dask_address = address
        yield


def cmd_synth(args, _) -> int:
    write = registry.part(args.dataset, "synth")
    extra = {"label_defects": True} if args.label_defects else {}
    summary = write(args.out, scale=args.scale, seed=args.seed, progress=_progress_bar(), **extra)
    print(json.dumps(summary, indent=2, sort_keys=True, default=str))
    return 0


def cmd_validate(args, _) -> int:
    from benchwright.validate import validate_url  # great-expectations and datasets: slow to import

    ds = registry.get(_dataset_of(args.path))
    report, where = validate_url(ds, args.path)
    for r in report["results"]:
        if not r["ok"] or args.verbose:
            print(f"{'ok  ' if r['ok'] else 'FAIL'} {r['check']}: {r['detail']}")
    print(f"{'passed' if report['passed'] else 'FAILED'}: {report['checks']} checks, {report['failed']} failed; "
          f"report {where}")
    return 0 if report["passed"] else 1


def cmd_screenshot(args, _) -> int:
    from benchwright.browser import Chromium, screenshot_build

    remote = [p for p in args.path if not published.is_local(p)]
    if remote:
        raise BenchwrightError(f"{remote[0]}: screenshots are taken of a local build folder; copy the build "
                               "to a local folder and run this on the copy")
    roots = [fsspec.core.url_to_fs(p)[1] for p in args.path]
    for root in roots:
        _dataset_of(root)  # a published build (its manifest names the dataset)
    problems = 0
    with Chromium() as browser:  # one browser for every build
        for root in roots:
            for page in screenshot_build(root, configs=args.configs, browser=browser):
                bad = page["broken_images"] + page["failed_requests"] + page["outside_requests"]
                problems += len(bad)
                print(f"{'ok  ' if not bad else 'FAIL'} {root}/{page['page']}: {page['images']} images -> "
                      f"{root}/{page['screenshot']}" + "".join(f"\n     did not load: {b}" for b in bad))
    return 0 if problems == 0 else 1


def cmd_unlock(args, _) -> int:
    print(published.unlock(args.path))
    return 0


def cmd_diff(args, _) -> int:
    from benchwright.diff import run_cli  # reads Parquet and statistics of both builds

    print(run_cli(args.old, args.new, args.json, args.markdown, args.examples), end="")
    return 0


def cmd_export(args, _) -> int:
    if not published.is_local(args.path):
        raise BenchwrightError(f"{args.path}: export re-writes a local build's exports; a build on object "
                               "storage already holds them (rebuild to change them)")
    ds = registry.get(_dataset_of(args.path))
    print(json.dumps(ds.export(fsspec.core.url_to_fs(args.path)[1]), indent=2, sort_keys=True))
    return 0


def cmd_info(args, _) -> int:
    print(describe(args.path))
    return 0


def describe(url: str) -> str:
    """Configs, splits, rows and bytes (from the manifest: no data file is opened), counts, reports."""
    manifest, root = published.committed(url)
    ds = registry.get(manifest["dataset"])
    nbytes = {f["path"]: f["bytes"] for f in manifest["files"]}
    lines = [f"{manifest['dataset']} at {url}" + (f" (build {root})" if root != url else "")]
    for config in ds.configs:
        sizes: dict[str, list[int]] = {}
        for shard in manifest["shards"]:
            if shard["config"] == config:
                entry = sizes.setdefault(shard["split"], [0, 0])
                entry[0] += shard["rows"]
                entry[1] += nbytes.get(shard["path"], 0)
        parts = ", ".join(f"{s} {rows:,} rows ({b / 1e6:.1f} MB)" for s, (rows, b) in sizes.items())
        lines.append(f"  {config:<14} {parts or 'empty'}")
    recon = manifest["reconciliation"]["units"]
    lines.append("  counts         " + "; ".join(
        f"{u}: {e['read']} read, {e['written']} written, {e['quarantined']} quarantined, {e['filtered']} filtered"
        for u, e in recon.items()))
    lines.append(f"  card           {published.join(root, 'README.md')} (as HTML: {published.join(root, CARD_HTML)})")
    lines.append(f"  manifest       {published.join(url, MANIFEST)}")
    lines.append(f"  validation     {published.join(root, VALIDATION_DIR, 'report.json')} (offline report: "
                 f"{published.join(root, VALIDATION_DIR, 'index.html')})")
    lines.append(f"  statistics     {published.join(root, STATISTICS)} (drift: {published.join(root, DRIFT)})")
    lines.append(f"  quarantine     {published.join(root, QUARANTINE_DIR)}")
    return "\n".join(lines)


def _dataset_of(url: str) -> str:
    return published.committed(url)[0]["dataset"]


def cmd_evaluate(args, rest) -> int:
    return registry.part(args.dataset, "evaluator")(rest)


def cmd_baseline(args, rest) -> int:
    return registry.part(args.dataset, "baselines")(rest)


def cmd_run(args, rest) -> int:
    return registry.part(args.dataset, "runner")(rest)


def _progress_bar():
    bar = {}

    def progress(done: int, total: int, what: str = "") -> None:
        if "bar" not in bar:
            bar["bar"] = tqdm(total=total, desc=what or "writing", unit="item", file=sys.stderr)
        bar["bar"].n = done
        bar["bar"].refresh()
        if done >= total:
            bar.pop("bar").close()

    return progress


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchwright", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    b = sub.add_parser("build", help="build a dataset (or all) into OUT/<dataset>; unknown --options go to Beam")
    b.add_argument("dataset", help=f"{' | '.join(registry.names())} | all")
    b.add_argument("--source", help="raw input (any fsspec URL); default: the dataset's embedded default")
    b.add_argument("--out", default="./out")
    b.add_argument("--runner", default="FnApiRunner",
                   help="FnApiRunner (default, in-process), dask (a dask.distributed cluster) or any Beam runner")
    b.add_argument("--running-mode", default="in_memory", choices=RUNNING_MODES,
                   help="FnApiRunner mode (multi_processing with --workers N uses N processes)")
    b.add_argument("--workers", type=int, default=1, help="FnApiRunner workers (0 = one per core)")
    b.add_argument("--dask-address", metavar="HOST:PORT",
                   help="--runner dask: the dask.distributed scheduler to build on (its workers need "
                        "benchwright installed and the object store's environment; README)")
    b.add_argument("--dask-local", type=int, metavar="N",
                   help="--runner dask: start a cluster of N worker processes on this machine for the build")
    b.add_argument("--max-bad-fraction", type=float, default=0.01)
    b.add_argument("--drift-blocking", action="append", nargs="?", const="*", metavar="TARGETS",
                   help="drift beyond its limit fails the build for these targets (config/split[/column] "
                        "patterns, comma-separated; alone: every target); by default drift is reported")
    b.add_argument("--stale-lock-after", type=float, default=BuildOptions.stale_lock_after, metavar="SECONDS",
                   help="on S3: another build's lock whose heartbeat is older than this is a dead build's and "
                        "is taken over (default %(default)g; the holder beats every fifth of it)")
    b.set_defaults(func=cmd_build, passthrough=True)

    s = sub.add_parser("synth", help="write a synthetic raw source")
    s.add_argument("dataset")
    s.add_argument("--out", required=True)
    s.add_argument("--scale", default="default", choices=["tiny", "default", "full"])
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--label-defects", action="store_true",
                   help="wildbox: also write the release's known label defects (sign flips, legless boxes, fragments)")
    s.set_defaults(func=cmd_synth)

    v = sub.add_parser("validate", help="re-check a published build (sha256, expectations, counts)")
    v.add_argument("path")
    v.add_argument("-v", "--verbose", action="store_true")
    v.set_defaults(func=cmd_validate)

    d = sub.add_parser("diff", help="what changed between two builds: rows by id, columns, statistics, drift, inputs")
    d.add_argument("old", help="the earlier build (dataset folder or URL)")
    d.add_argument("new", help="the later build")
    d.add_argument("--json", help="write the whole diff as JSON here")
    d.add_argument("--markdown", help="write the Markdown summary here (it is also printed)")
    d.add_argument("--examples", type=int, default=5, help="ids (and values) shown per kind of change")
    d.set_defaults(func=cmd_diff)

    sc = sub.add_parser("screenshot", help="load a local build's card and validation pages in headless Chromium "
                                           "(127.0.0.1 only) and save full-page PNGs under _build/screenshots/")
    sc.add_argument("path", nargs="+", help="built dataset folders (local)")
    sc.add_argument("--configs", action="store_true", help="also each config's validation page")
    sc.set_defaults(func=cmd_screenshot)

    u = sub.add_parser("unlock", help="remove the build lock of OUT/<dataset> on S3 by hand (prints its holder); "
                                      "a build still holding it stops before its commit")
    u.add_argument("path", help="the dataset URL, s3://.../OUT/<dataset>")
    u.set_defaults(func=cmd_unlock)

    e = sub.add_parser("export", help="re-write a built dataset's format exports")
    e.add_argument("path")
    e.set_defaults(func=cmd_export)

    i = sub.add_parser("info", help="configs, splits, row counts and where the reports are")
    i.add_argument("path")
    i.set_defaults(func=cmd_info)

    ev = sub.add_parser("evaluate", help="score predictions: evaluate <dataset> --help", add_help=False)
    ev.add_argument("dataset")
    ev.set_defaults(func=cmd_evaluate, passthrough=True)

    bl = sub.add_parser("baseline", help="run a baseline: baseline <dataset> --help", add_help=False)
    bl.add_argument("dataset")
    bl.set_defaults(func=cmd_baseline, passthrough=True)

    r = sub.add_parser("run", help="run an agent over a dataset's cases: run <dataset> --help", add_help=False)
    r.add_argument("dataset")
    r.set_defaults(func=cmd_run, passthrough=True)
    return p


def main(argv=None) -> int:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    p = parser()
    args, rest = p.parse_known_args(argv)
    if rest and not getattr(args, "passthrough", False):
        p.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        return args.func(args, rest)
    except BenchwrightError as err:
        print(f"benchwright: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
