"""What watching a source for changes costs a build (``benchwright.source_watch``): prints JSON with the
first listing (in the build's process, before the pipeline), the fingerprint (every file hashed, in a
forked child beside the pipeline) and the second pass (listed and stat-ed again before publishing) with
nothing changed, and with one file changed (read again, and the build refused); beside them what the
simpler check would cost, hashing every file again before publishing (``rehash_all_s``), which the
second pass replaces: a build would otherwise read its whole source twice, once on its critical path.

    python -m benchwright.benchmarks.source_watch [--source RAW | --scale default] [--repeat 3]

``--source`` may be any fsspec URL (``s3://...``: the second pass is one listing, the alternative
downloads every object again). Without ``--source`` it writes WildBox's synthetic source at ``--scale``
(default: the default scale, 7,423 files) into a temporary folder. Numbers are the median of
``--repeat`` runs; the second pass is run after the files' ctimes are older than ``RACY_S``, as they
are in a build of a source not written moments before it.
"""
from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

import fsspec

from benchwright.arguments import ArgumentParser


def measure(source: str, repeat: int) -> dict:
    from benchwright import registry
    from benchwright.errors import BuildError
    from benchwright.manifest import fingerprint_files
    from benchwright.source_watch import RACY_S, SourceWatch

    dataset = registry.get("wildbox")
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        watch = SourceWatch(dataset, source)
        started = time.perf_counter() - t
        t = time.perf_counter()
        fingerprint = watch.result()
        hashed = time.perf_counter() - t
        watch.check()
        t = time.perf_counter()
        again = fingerprint_files(source, list(watch.state.files))[0]  # the alternative: every file read again
        rehash_all = time.perf_counter() - t
        assert again["sha256"] == fingerprint["sha256"]
        runs.append({"listing_s": watch.listed_s, "start_s": started, "fingerprint_wait_s": hashed,
                     "check_s": watch.check_s, "rehashed": watch.rehashed, "rehash_all_s": rehash_all})
    # one file changed after the listing: read again and named
    watch = SourceWatch(dataset, source)
    watch.result()
    fs = fsspec.core.url_to_fs(source)[0]
    victim = sorted(watch.state.files)[len(watch.state.files) // 2]
    data = fs.cat_file(victim)
    try:
        fs.pipe_file(victim, data[:-1] + bytes([data[-1] ^ 1]))
        try:
            watch.check()
            refused = None
        except BuildError as err:
            refused = str(err)
    finally:
        fs.pipe_file(victim, data)
    median = {k: round(statistics.median(r[k] for r in runs), 3) for k in runs[0]}
    return {"source": source, "files": fingerprint["files"], "mb": round(fingerprint["bytes"] / 1e6, 1),
            "racy_s": RACY_S, "runs": repeat, **median,
            "rehash_all_over_check": round(median["rehash_all_s"] / max(median["check_s"], 1e-3), 1),
            "one_changed": {"check_s": watch.check_s, "rehashed": watch.rehashed, "refused": refused}}


def main(argv=None) -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", help="a raw WildBox source (default: write one at --scale)")
    parser.add_argument("--scale", default="default", help="the synthetic source's scale (no --source)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="benchwright-source-watch-") as work:
        source = args.source
        if source is None:
            from benchwright.wildbox.synth import write_source

            source = str(Path(work) / "raw")
            write_source(Path(source), scale=args.scale, seed=0)
            from benchwright.source_watch import RACY_S

            time.sleep(RACY_S)  # as a source written well before its build
        print(json.dumps(measure(source, args.repeat), indent=2))


if __name__ == "__main__":
    main()
