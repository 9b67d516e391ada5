"""``benchwright``: build, unlock, new, synth, validate, screenshot, diff, export, evaluate, baseline, run, info.

``build`` passes options to Beam: those after ``--`` or in ``--beam-arg`` as they are, and any other
option only when Beam's own ``PipelineOptions`` knows it (``--runner DataflowRunner --project ...``);
anything else is a usage error. No command takes an abbreviated option.
"""
from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import sys

# Only what parsing the command line needs is imported here: `benchwright --help` and `benchwright info`
# answer in a fraction of a second. Beam, datasets, great-expectations, fsspec and the datasets' modules are
# imported by the commands that use them (tests/test_cli_usage.py checks it).
from benchwright import registry
from benchwright.arguments import ArgumentParser, option_strings, unrecognized
from benchwright.errors import BenchwrightError
from benchwright.layout import CARD_HTML, DRIFT, MANIFEST, QUARANTINE_DIR, STATISTICS, VALIDATION_DIR
from benchwright.memory import collection_paused
from benchwright.options import RUNNING_MODES, BuildOptions


def cmd_build(args, rest) -> int:
    from benchwright.target import check_target

    names = list(registry.published()) if args.dataset == "all" else [args.dataset]
    if args.source and len(names) > 1:
        raise BenchwrightError("--source names one dataset's input; build datasets one at a time with it")
    given, rest = dataset_settings(args, names, rest)
    options = BuildOptions(out=args.out, runner=args.runner, running_mode=args.running_mode,
                           num_workers=args.workers, max_bad_fraction=args.max_bad_fraction,
                           drift_blocking=tuple(p for v in args.drift_blocking or () for p in v.split(",") if p),
                           stale_lock_after=args.stale_lock_after, decode_images=args.decode_images,
                           beam_args=beam_args(args, rest), force=args.force, progress=not args.quiet,
                           dask_address=args.dask_address)
    _check_dask_options(args, options)
    for name in names:  # every output is checked before anything is built or imported
        check_target(name, options)
    with collection_paused():
        from benchwright.build import build  # Beam and datasets (~3 s): only build and validate need them

    datasets = [registry.get(name).configured(**given[name]) for name in names]
    with _dask_cluster(args, options):
        for dataset in datasets:
            final = build(dataset, args.source, options)
            if final is not None:
                print(describe(final))
    return 0


def _check_dask_options(args, options: BuildOptions) -> None:
    from benchwright.options import DASK_RUNNER

    dask = args.dask_address or args.dask_local
    if dask and options.runner != DASK_RUNNER:
        raise BenchwrightError("--dask-address and --dask-local choose the cluster of --runner dask")
    if args.dask_address and args.dask_local:
        raise BenchwrightError("--dask-address names a running cluster, --dask-local starts one: give one of them")
    if args.dask_local is not None and args.dask_local < 1:
        raise BenchwrightError("--dask-local N: N worker processes, at least 1")
    given = any(a.startswith(("--dask_client_address", "--dask_scheduler_file")) for a in options.beam_args)
    if options.runner == DASK_RUNNER and not dask and not given:
        raise BenchwrightError("--runner dask builds on a dask.distributed cluster: give its scheduler "
                               "(--dask-address HOST:PORT) or --dask-local N to start one here")


@contextlib.contextmanager
def _dask_cluster(args, options: BuildOptions):
    """``--dask-local N``: a cluster of N worker processes on this machine for the builds, closed after."""
    if not args.dask_local:
        yield
        return
    from benchwright.runners.dask import local_cluster

    with local_cluster(args.dask_local) as address:
        options.dask_address = address
        yield


def settings_parser(names: list[str], prog: str = "benchwright build") -> ArgumentParser:
    """A parser of the settings (``benchwright.dataset.Config``) of the datasets ``names``: an option two of them
    have is taken for both (it must mean the same to both)."""
    parser = ArgumentParser(prog=prog, strict=False, add_help=False)
    seen: dict[str, tuple[str, dict]] = {}
    for name in names:
        for option, kwargs in registry.settings(name).options():
            if option in seen:
                first, other = seen[option]
                if {k: v for k, v in kwargs.items() if k != "help"} != {k: v for k, v in other.items() if k != "help"}:
                    raise BenchwrightError(f"{option} is a setting of {first} and of {name} with different values: "
                                           "build them one at a time")
                continue
            seen[option] = (name, kwargs)
            parser.add_argument(option, **kwargs)
    return parser


def dataset_settings(args, names: list[str], rest: list[str]) -> tuple[dict[str, dict], list[str]]:
    """({dataset: {setting: value}} of the settings given in ``rest`` (``build all``: each dataset takes those it
    has), the arguments left: Beam's)."""
    parsed, left = settings_parser(names, f"benchwright build {args.dataset}").parse_known_args(rest)
    values = {k: v for k, v in vars(parsed).items() if v is not None}
    given = {}
    for name in names:
        fields = [option[2:].replace("-", "_") for option, _ in registry.settings(name).options()]
        given[name] = {k: v for k, v in values.items() if k in fields}
    return given, left


def beam_args(args, rest: list[str]) -> list[str]:
    """The options ``build`` passes to Beam: those after ``--`` and in ``--beam-arg`` as they are; an
    option the CLI does not know only when Beam's ``PipelineOptions`` knows it (a mistyped option is a
    usage error with a "did you mean", never a Beam flag nobody reads). Beam options that benchwright's
    own options set are refused, naming the option to use."""
    from benchwright.options import beam_parser, not_beam_options, overridden_beam_option

    passed = [*rest, *args.beam_arg, *args.after_dashes]
    overridden = overridden_beam_option(passed, args.runner)
    if overridden:
        args.parser.error(f"{overridden[0]} is set with benchwright's own {overridden[1]} (given to Beam as well, "
                          "it would be overridden)")
    try:  # (Beam's options are read only when there is something to look up: importing Beam takes ~3 s)
        unknown = not_beam_options(rest, args.runner) if rest else []
    except argparse.ArgumentError as err:
        args.parser.error(str(err))
    if unknown:
        names = list(registry.published()) if args.dataset == "all" else [args.dataset]
        for option in (o.split("=", 1)[0] for o in unknown if o.startswith("--")):
            owners = _owners(option)
            if owners:  # another dataset's setting
                args.parser.error(f"{option} is a setting of {', '.join(owners)}, not of {args.dataset} "
                                  f"(benchwright build {args.dataset} --help lists its settings)")
        args.parser.error(unrecognized(unknown, option_strings(settings_parser(names)), option_strings(args.parser),
                                       option_strings(settings_parser(list(registry.names()))),
                                       option_strings(beam_parser(args.runner)))
                          + "; an option for Beam that Beam's PipelineOptions does not know goes after -- "
                            "(or in --beam-arg=OPTION)")
    return passed


def _owners(option: str) -> list[str]:
    """The datasets that have the setting ``option``."""
    return [n for n in registry.names() if option in (o for o, _ in registry.settings(n).options())]


def cmd_new(args, _) -> int:
    from benchwright import scaffold

    written = scaffold.create(args.name, args.root or scaffold.REPOSITORY)
    print("\n".join(f"  wrote {path}" for path in written))
    print(scaffold.next_steps(args.name))
    return 0


def cmd_synth(args, _) -> int:
    from benchwright import progress

    write = registry.part(args.dataset, "synth")
    extra = {}
    if args.label_defects:
        if "label_defects" not in inspect.signature(write).parameters:
            raise BenchwrightError(f"--label-defects: {args.dataset}'s synth writes no label defects")
        extra["label_defects"] = True
    with progress.Progress("auto", prefix=f"[{args.dataset}]").phase("synth") as phase:
        summary = write(args.out, scale=args.scale, seed=args.seed, progress=phase.reporter("written"), **extra)
    print(json.dumps(summary, indent=2, sort_keys=True, default=str))
    return 0


def cmd_validate(args, _) -> int:
    with collection_paused():
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
    import fsspec

    from benchwright import published
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
    from benchwright import published

    print(published.unlock(args.path))
    return 0


def cmd_diff(args, _) -> int:
    from benchwright.diff import run_cli  # reads Parquet and statistics of both builds

    print(run_cli(args.old, args.new, args.json, args.markdown, args.examples), end="")
    return 0


def cmd_export(args, rest) -> int:
    import fsspec

    from benchwright import published

    if not published.is_local(args.path):
        raise BenchwrightError(f"{args.path}: export re-writes a local build's exports; a build on object "
                               "storage already holds them (rebuild to change them)")
    ds = registry.get(_dataset_of(args.path))
    root = fsspec.core.url_to_fs(args.path)[1]
    if args.format:  # `export BUILD --format F OUT` (or --out OUT): an on-demand export into its own folder
        if rest and not args.out and len(rest) == 1 and not rest[0].startswith("-"):
            args.out, rest = rest[0], []
        if rest:
            raise BenchwrightError(f"export: unrecognized arguments: {' '.join(rest)}")
        summary = ds.export_format(root, args.format, args.out)
    elif rest or args.out:  # the dataset's own export options (wildbox: another KITTI root under --out DIR)
        if "options" not in inspect.signature(ds.export).parameters:
            raise BenchwrightError(f"export {ds.name} takes no options, got {' '.join(rest)}")
        summary = ds.export(root, rest + (["--out", args.out] if args.out else []))
    else:
        summary = ds.export(root)
    print(json.dumps(summary, indent=2, sort_keys=True))
    return 0


def cmd_info(args, _) -> int:
    print(describe(args.path))
    return 0


def describe(url: str) -> str:
    """Configs, splits, rows and bytes (from the manifest: no data file is opened, no dataset module
    imported), counts, reports."""
    from benchwright import published

    manifest, root = published.committed(url)
    # the dataset's configs, empty ones too (a build before the manifest listed them: from its module)
    configs = manifest.get("configs") or list(registry.get(manifest["dataset"]).configs)
    nbytes = {f["path"]: f["bytes"] for f in manifest["files"]}
    lines = [f"{manifest['dataset']} at {url}" + (f" (build {root})" if root != url else "")]
    for config in configs:
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
    from benchwright import published

    return published.committed(url)[0]["dataset"]


def cmd_dataset_part(args, rest) -> int:
    """``evaluate``, ``baseline``, ``run``: the dataset's own command line parses the rest."""
    return registry.part(args.dataset, args.part)(rest)


class _BuildHelp(argparse.Action):
    """``build --help``: the build's options, then each dataset's settings (its ``Config``: no Beam, no pipeline
    imported to list them)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(parser.format_help())
        names = [namespace.dataset] if getattr(namespace, "dataset", None) not in (None, "all") else registry.names()
        for name in names:
            own = settings_parser([name], f"benchwright build {name}")
            own.usage, own._optionals.title = argparse.SUPPRESS, "settings"
            own.description = (f"{name}'s settings (recorded in the build's manifest, options.settings)"
                               + (":" if own._actions else ": none"))
            print(own.format_help().strip() + "\n")
        parser.exit()


class _DatasetPartHelp(argparse.Action):
    """``evaluate|baseline|run [DATASET] --help``: this command's usage, then the options of each dataset's
    command (or of the one named), from the parser its ``run_cli`` declares (``arguments.parser_of``)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        part = parser.get_default("part")
        named = getattr(namespace, "dataset", None)
        if named is None:
            print(parser.format_help())
        for name in [named] if named else registry.names():
            if not getattr(registry.get(name), part, None):
                if named:
                    try:
                        registry.part(name, part)
                    except BenchwrightError as err:
                        parser.error(str(err))
                continue
            run = registry.part(name, part)
            make = getattr(run, "parser", None)
            print(make().format_help() if make else f"benchwright {parser.prog.split()[-1]} {name}: "
                                                    "its command declares no parser (arguments.parser_of)\n")
        parser.exit()


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="benchwright", strict=False,  # each command is strict or not
                       description="Build, validate, load and evaluate research benchmark datasets "
                                   f"({', '.join(registry.names())}).",
                       epilog="benchwright COMMAND --help shows a command's options (evaluate, baseline and run: "
                              "each dataset's).")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, func, **kwargs) -> ArgumentParser:
        c = sub.add_parser(name, **kwargs)
        c.set_defaults(func=func, parser=c)
        return c

    b = command("build", cmd_build, add_help=False, strict=False,
                help="build a dataset (or all) into OUT/<dataset>; options for Beam: see build --help",
                description="Build a dataset from its source (or its embedded default) into OUT/<dataset>, "
                            "replacing the build there (a folder there that is not a build of this dataset is "
                            "refused unless --force).",
                epilog="Beam options: any option Beam's PipelineOptions knows is passed to Beam (--project P, "
                       "--temp_location gs://..., --dask_client_address ...); everything after -- and each "
                       "--beam-arg=OPTION is passed as it is. A mistyped option is an error.")
    build_arguments(b)

    s = command("synth", cmd_synth, help="write a synthetic raw source",
                description="Write a synthetic raw source of a dataset in its release's layout and formats "
                            "(the same scale and seed give byte-identical files).")
    s.add_argument("dataset", choices=registry.names(), metavar="DATASET", help=" | ".join(registry.names()))
    s.add_argument("--out", required=True, help="the folder to write the source into (created)")
    s.add_argument("--scale", default="default", choices=["tiny", "default", "full"],
                   help="how much to write: tiny (seconds, for tests), default (the size of the embedded "
                        "default; the default), full (the release's size)")
    s.add_argument("--seed", type=int, default=0, help="the seed of every random draw (default %(default)s)")
    s.add_argument("--label-defects", action="store_true",
                   help="wildbox: also write the release's known label defects (sign flips, legless boxes, fragments)")

    new_arguments(command("new", cmd_new, help="a new dataset: a copy of the template dataset, registered "
                                               "(docs/ADDING_A_DATASET.md)"))

    v = command("validate", cmd_validate, help="re-check a published build (sha256, expectations, counts)")
    v.add_argument("path", help="the built dataset (OUT/<dataset>, local or a URL)")
    v.add_argument("-v", "--verbose", action="store_true", help="also print the checks that passed")

    d = command("diff", cmd_diff, help="what changed between two builds: rows by id, columns, statistics, drift, inputs")
    d.add_argument("old", help="the earlier build (dataset folder or URL)")
    d.add_argument("new", help="the later build")
    d.add_argument("--json", help="write the whole diff as JSON here")
    d.add_argument("--markdown", help="write the Markdown summary here (it is also printed)")
    d.add_argument("--examples", type=int, default=5, help="ids (and values) shown per kind of change")

    sc = command("screenshot", cmd_screenshot, help="load a local build's card and validation pages in headless "
                                                    "Chromium (127.0.0.1 only) and save full-page PNGs under "
                                                    "_build/screenshots/")
    sc.add_argument("path", nargs="+", help="built dataset folders (local)")
    sc.add_argument("--configs", action="store_true", help="also each config's validation page")

    u = command("unlock", cmd_unlock, help="remove the build lock of OUT/<dataset> on S3 by hand (prints its "
                                           "holder); a build still holding it stops before its commit")
    u.add_argument("path", help="the dataset URL, s3://.../OUT/<dataset>")

    e = command("export", cmd_export, strict=False,  # the dataset's own export options follow
                help="re-write a built dataset's format exports, or write one on demand (--format F OUT; wildbox: "
                     "[--kitti-rotation yaw-only|strict] [--kitti-images png|jpg] --out DIR writes another KITTI root)")
    e.add_argument("path", help="the built dataset (a local OUT/<dataset>)")
    e.add_argument("--format", help="an on-demand export into OUT (vlm_unlearning: llava)")
    e.add_argument("--out", help="the folder an on-demand export (--format) or another KITTI root is written to")

    i = command("info", cmd_info, help="configs, splits, row counts and where the reports are")
    i.add_argument("path", help="the built dataset (OUT/<dataset>, local or a URL)")

    for name, part, what in (("evaluate", "evaluator", "score predictions against a built dataset"),
                             ("baseline", "baselines", "run a dataset's baselines"),
                             ("run", "runner", "run an agent over a dataset's cases")):
        c = command(name, cmd_dataset_part, add_help=False, strict=False, help=f"{what}: {name} DATASET --help",
                    usage=f"benchwright {name} DATASET [options]",
                    description=f"{what[0].upper()}{what[1:]}. The options are the dataset's own (below).")
        c.add_argument("-h", "--help", action=_DatasetPartHelp, help="show each dataset's options (or the named "
                                                                     "dataset's) and exit")
        c.add_argument("dataset", choices=registry.names(), metavar="DATASET", help=" | ".join(registry.names()))
        c.set_defaults(part=part)
    return p


def new_arguments(n: ArgumentParser) -> None:
    """The options of ``benchwright new``."""
    n.description = ("Copy the template dataset's files to NAME's in the repository checkout, register NAME and "
                     "print what to fill next (every place is marked SLOT).")
    n.add_argument("name", metavar="NAME", help="the new dataset's name: a lower-case Python identifier")
    n.add_argument("--root", help="the checkout to write into (default: the one benchwright is installed from)")


def build_arguments(b: ArgumentParser) -> None:
    """The options of ``benchwright build`` (a dataset's settings are taken from what is left: ``dataset_settings``)."""
    b.add_argument("-h", "--help", action=_BuildHelp, help="show this help (and each dataset's settings) and exit")
    b.add_argument("dataset", choices=[*registry.names(), "all"], metavar="DATASET",
                   help=f"{' | '.join(registry.names())} | all (every dataset but the template, "
                        f"{', '.join(registry.TEMPLATE)})")
    b.add_argument("--source", help="raw input (any fsspec URL); default: the dataset's embedded default")
    b.add_argument("--out", default="./out", help="the output folder or URL; the build goes to OUT/<dataset> "
                                                  "(default %(default)s)")
    b.add_argument("--force", action="store_true",
                   help="replace OUT/<dataset> even when it is not a build of this dataset (what it holds is lost)")
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
    b.add_argument("--max-bad-fraction", type=float, default=0.01,
                   help="the build fails when more than this fraction of a unit is quarantined (default %(default)g)")
    b.add_argument("--drift-blocking", action="append", nargs="?", const="*", metavar="TARGETS",
                   help="drift beyond its limit fails the build for these targets (config/split[/column] "
                        "patterns, comma-separated; alone: every target); by default drift is reported")
    b.add_argument("--stale-lock-after", type=float, default=BuildOptions.stale_lock_after, metavar="SECONDS",
                   help="on S3: another build's lock whose heartbeat is older than this is a dead build's and "
                        "is taken over (default %(default)g; the holder beats every fifth of it)")
    b.add_argument("--decode-images", action="store_true",
                   help="decode every image for the statistics and the image check (default: each image's "
                        "header only, its format and size; `benchwright validate` decodes every image)")
    b.add_argument("--quiet", action="store_true",
                   help="no progress (by default: bars on a terminal, else a line every few seconds on stderr)")
    b.add_argument("--beam-arg", action="append", default=[], metavar="OPTION",
                   help="an option passed to Beam as it is, e.g. --beam-arg=--flexrs_goal=COST_OPTIMIZED "
                        "(repeatable; so is everything after --)")


def main(argv=None) -> int:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    argv = list(sys.argv[1:] if argv is None else argv)
    after_dashes: list[str] = []
    if argv[:1] == ["build"] and "--" in argv:  # build: what follows -- goes to Beam as it is
        at = argv.index("--")
        argv, after_dashes = argv[:at], argv[at + 1:]
    try:
        args, rest = parser().parse_known_args(argv)
        args.after_dashes = after_dashes  # rest: what a command that is not strict passes on (build: to Beam)
        return args.func(args, rest)
    except BenchwrightError as err:
        print(f"benchwright: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the output's reader stopped reading (`benchwright evaluate --help | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        return 1


if __name__ == "__main__":
    sys.exit(main())
