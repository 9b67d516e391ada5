"""What the data-quality steps cost on a build: statistics, drift, all data checks, the offline report
and ``benchwright diff`` (the build against itself: every row compared). Prints one JSON object.

    python -m benchwright.benchmarks.data_quality --data OUT/wildbox [OUT/wordeval ...]
"""
from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from benchwright.arguments import ArgumentParser


def measure(root: Path) -> dict:
    from benchwright import published, registry
    from benchwright.diff import diff_builds
    from benchwright.drift import compare, thresholds
    from benchwright.report import write_report
    from benchwright.statistics import compute_statistics
    from benchwright.validate import check_data

    manifest = json.loads((root / "_build" / "manifest.json").read_text())
    dataset = registry.get(manifest["dataset"])
    out: dict = {"dataset": dataset.name, "rows": manifest["reconciliation"]["rows"],
                 "parquet_bytes": sum(f["bytes"] for f in manifest["files"] if f["path"].endswith(".parquet"))}
    t = time.perf_counter()
    stats = compute_statistics(dataset, root)
    out["statistics_s"] = round(time.perf_counter() - t, 3)
    t = time.perf_counter()
    comparisons = compare(stats, stats, thresholds(dataset))
    out["drift_s"], out["drift_comparisons"] = round(time.perf_counter() - t, 4), len(comparisons)
    t = time.perf_counter()
    results = check_data(dataset, root)
    out["data_checks_s"], out["data_checks"] = round(time.perf_counter() - t, 3), len(results)
    with tempfile.TemporaryDirectory() as work:
        t = time.perf_counter()
        write_report(dataset, {"passed": True, "failed": 0, "checks": len(results), "results": results}, stats, Path(work))
        out["report_s"] = round(time.perf_counter() - t, 3)
    t = time.perf_counter()
    diff = diff_builds(str(root), str(root))
    out["diff_s"] = round(time.perf_counter() - t, 3)
    out["diff_changed_rows"] = sum(e["changed"] for c in diff["configs"].values() for e in c["splits"].values())
    out["build_timings"] = manifest.get("timings")
    out["build"] = published.build_id(manifest)
    return out


def main(argv=None) -> int:
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", required=True, help="built dataset folders")
    args = p.parse_args(argv)
    print(json.dumps({"builds": [measure(Path(d)) for d in args.data]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
