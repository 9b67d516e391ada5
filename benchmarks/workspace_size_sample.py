"""A workspace sample with the Workspace-Bench release's size profile, for the scan benchmark.

The release holds 20,476 workspace files in up to 20 GB: about 1 MB per file on average, against a few
KB for the synthetic sources. ``write_size_sample(out, total_bytes)`` writes one workspace folder whose
file sizes follow a log-normal distribution with that mean (``sigma`` 1.5: median about 0.3 MB, 1% of
the files above 10 MB, none above the scan's 64 MB bound), in real formats written by the synthetic
release's own writers (``workspace_bench.synth_files``), drawn from the synthetic ``default`` workspaces'
74-type mix. A file is grown to its drawn size the way its format grows: more table rows (CSV, JSON,
XML, SQLite, Parquet, NumPy, gzip), more pixels (images, noise), more samples (WAV), a stored member
of random bytes (zip, tar), an embedded picture (docx, pptx: the picture is also a file of the sample,
as in a real workspace), or its lines repeated (text documents and code). Formats that grow no cheaper
way (PDF, xlsx, notebooks, configuration) keep their natural size; sizes are given out so that the big
draws go to formats that are big in a real workspace (archives, media, documents, data tables, then text
documents) and the small ones to source code and configuration (a rank per group, jittered by a normal
draw of deviation 1, so the groups overlap). Same (total, seed): the same bytes.

    python -m benchwright.benchmarks.workspace_size_sample OUT [--bytes 1.5e9] [--seed 0]
"""
from __future__ import annotations

import argparse
import io
import json
import math
import posixpath
import random
import sys
import tarfile
import zipfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

MEAN_BYTES = 1_000_000
SIGMA = 1.5
MAX_BYTES = 64 * 1024 * 1024 - 1   # the scan's per-file bound (Limits.max_file_bytes)
MIN_BYTES = 200

TABLE = frozenset({"csv", "tsv", "json", "jsonl", "xml", "sqlite", "db", "parquet", "feather", "npy", "npz", "gz"})
PIXELS = {"png": "PNG", "jpg": "JPEG", "gif": "GIF", "bmp": "BMP", "tiff": "TIFF", "webp": "WEBP"}
MEMBERS = frozenset({"zip", "tar"})
PICTURE = frozenset({"docx", "pptx"})
LINES = frozenset({"txt", "log", "md", "rst", "tex", "bib", "srt", "eml", "patch", "html", "svg"})
CODE = frozenset({"py", "js", "ts", "jsx", "tsx", "css", "sql", "sh", "bat", "ps1", "java", "go", "rs", "c", "h", "cpp",
                  "rb", "php", "lua", "pl", "r", "proto", "graphql", "Dockerfile", "Makefile", "dot", "mmd"})
# how big a format tends to be, from small to big (sizes are handed out in this order, jittered): source
# code and configuration smallest, then text documents, data tables, pictures and documents, archives
_RANK = {"code": -1.0, "natural": -1.0, "lines": 0.0, "table": 1.0, "picture": 2.0, "pixels": 2.0, "wav": 2.0,
         "members": 3.0}


def growth(file_type: str) -> str:
    for name, group in (("table", TABLE), ("pixels", PIXELS), ("members", MEMBERS), ("picture", PICTURE),
                        ("lines", LINES), ("code", CODE)):
        if file_type in group:
            return name
    return "wav" if file_type == "wav" else "natural"


def _rows(header: list, n: int, seed: int) -> list[list]:
    from benchwright.workspace_bench.synth_content import MONTHS

    r = random.Random(seed)
    return [list(header)] + [[f"{MONTHS[i % 12][:3]}-{i}"] + [r.randint(1, 90_000) for _ in header[1:]]
                             for i in range(n)]


def _grow_table(spec, size: int, root: Path) -> bytes:
    """Re-render with as many rows as reach ``size`` (bytes per row measured on a 200-row render)."""
    from benchwright.workspace_bench.synth_files import _table, render

    header = _table(spec)[0]
    small, probe = render(replace(spec, table=_rows(header, 10, spec.seed)), root), render(
        replace(spec, table=_rows(header, 210, spec.seed)), root)
    per_row = max(1.0, (len(probe) - len(small)) / 200)
    rows = max(10, min(2_000_000, int((size - len(small)) / per_row) + 10))
    return render(replace(spec, table=_rows(header, rows, spec.seed)), root)


def _noise_image(file_type: str, size: int, rng) -> bytes:
    """An image of random pixels about ``size`` bytes long (bytes per pixel measured on a small one)."""
    from PIL import Image

    fmt = PIXELS[file_type]

    def encode(side: int) -> bytes:
        if fmt == "GIF":
            img = Image.frombytes("P", (side, side), rng.integers(0, 256, side * side, dtype="uint8").tobytes())
            img.putpalette(list(range(256)) * 3)
        else:
            img = Image.frombytes("RGB", (side, side), rng.integers(0, 256, side * side * 3, dtype="uint8").tobytes())
        buf = io.BytesIO()
        options = {"PNG": {"compress_level": 1}, "JPEG": {"quality": 85}, "WEBP": {"quality": 80, "method": 0}}
        img.save(buf, fmt, **options.get(fmt, {}))
        return buf.getvalue()

    per_pixel = len(encode(64)) / (64 * 64)
    return encode(max(16, int(math.sqrt(size / per_pixel))))


def _wav(size: int, rng) -> bytes:
    import wave

    buf = io.BytesIO()
    with wave.open(buf, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(rng.integers(-8000, 8000, max(1, (size - 44) // 2), dtype="<i2").tobytes())
    return buf.getvalue()


def _add_member(data: bytes, file_type: str, size: int, rng) -> bytes:
    from benchwright.workspace_bench.synth_files import FIXED_DATETIME, FIXED_ZIP_TIME

    blob = rng.integers(0, 256, max(0, size - len(data)), dtype="uint8").tobytes()
    buf = io.BytesIO(data)
    if file_type == "zip":
        with zipfile.ZipFile(buf, "a", zipfile.ZIP_STORED) as z:
            z.writestr(zipfile.ZipInfo("attachments/blob.bin", date_time=FIXED_ZIP_TIME), blob)
    else:
        with tarfile.open(fileobj=buf, mode="a", format=tarfile.PAX_FORMAT) as tar:
            info = tarfile.TarInfo("backup/blob.bin")
            info.size, info.mtime, info.mode = len(blob), int(FIXED_DATETIME.timestamp()), 0o644
            tar.addfile(info, io.BytesIO(blob))
    return buf.getvalue()


def _repeat_lines(data: bytes, size: int) -> bytes:
    if not data:
        return data
    body = data if data.endswith(b"\n") else data + b"\n"
    out = body * max(1, size // len(body))
    return out + body[:max(0, size - len(out))].rsplit(b"\n", 1)[0]


def write_size_sample(out: str | Path, total_bytes: int = 1_500_000_000, seed: int = 0, mean_bytes: int = MEAN_BYTES,
                      sigma: float = SIGMA) -> dict:
    """Write the sample under ``out`` (absent or empty); returns its counts by how each file grew."""
    import numpy as np

    from benchwright.workspace_bench.synth import plan_source
    from benchwright.workspace_bench.synth_files import Ref, file_type, render

    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"{out} is not an empty folder")
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    n = max(1, round(total_bytes / mean_bytes))
    sizes = np.clip(rng.lognormal(math.log(mean_bytes) - sigma ** 2 / 2, sigma, n), MIN_BYTES, MAX_BYTES)
    plan = plan_source("default", seed)
    specs = [s for ws in plan.workspaces.values() for s in ws.files.values()]
    picked = [specs[i] for i in rng.integers(0, len(specs), n)]
    ranked = sorted(range(n), key=lambda k: _RANK[growth(file_type(picked[k].path))] + rng.normal(0, 1.0))
    by_growth: Counter = Counter()
    bytes_by_growth: Counter = Counter()
    written = 0
    for k, size in zip(ranked, sorted(int(s) for s in sizes)):
        spec = picked[k]
        folder, name = posixpath.split(spec.path)
        # a name of its own (a type without an extension, Makefile, is told by its name: a folder of its own)
        path = posixpath.join(folder, f"{k:05d}_{name}" if "." in name else f"{k:05d}/{name}")
        # references to other files' bytes (pictures, embedded objects) cannot be kept: those files are elsewhere
        spec = replace(spec, path=path, refs=[r for r in spec.refs if r.edge_type not in ("image", "embedded_object")])
        kind, ext = growth(file_type(path)), file_type(path)
        if kind == "picture":  # the picture is a file of the workspace too, written first
            picture = posixpath.join(folder, f"{k:05d}_figure.jpg")
            data = _noise_image("jpg", max(MIN_BYTES, size - 40_000), rng)
            (out / picture).parent.mkdir(parents=True, exist_ok=True)
            (out / picture).write_bytes(data)
            written += len(data)
            spec = replace(spec, refs=spec.refs + [Ref("image", picture)])
        data = render(spec, out)
        if len(data) < size:
            if kind == "table":
                data = _grow_table(spec, size, out)
            elif kind == "pixels":
                data = _noise_image(ext, size, rng)
            elif kind == "wav":
                data = _wav(size, rng)
            elif kind == "members":
                data = _add_member(data, ext, size, rng)
            elif kind in ("lines", "code"):
                data = _repeat_lines(data, size)
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_bytes(data)
        written += len(data)
        by_growth[kind] += 1
        bytes_by_growth[kind] += len(data)
    files = sum(by_growth.values()) + by_growth["picture"]
    return {"files": files, "bytes": written, "mean_bytes": round(written / files), "seed": seed, "sigma": sigma,
            "files_by_growth": dict(sorted(by_growth.items())),
            "mb_by_growth": {k: round(v / 1e6, 1) for k, v in sorted(bytes_by_growth.items())}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--bytes", type=float, default=1.5e9)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print(json.dumps(write_size_sample(args.out, int(args.bytes), args.seed), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
