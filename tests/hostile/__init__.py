"""The corpus of hostile and broken input: one hook per registered dataset, ``tests/hostile/<ds>.py``.

A hook's ``corpus(work, fixtures)`` writes ONE source under ``work`` holding all of its dataset's hostile cases
at once (generated from the tiny synthetic sources and real fixtures: no hand-edited binaries) and returns it
as a ``Corpus``: the source, its ``Case`` list (the format the case damages, what it is, the quarantine row it
must produce: locator prefix, reason substring, unit; or ``kept``: published unharmed, without a hang) and how
to build it. Its ``PEAK_LIMIT_MB`` bounds the peak RSS the corpus build may add (an expanded bomb would pass
it). ``tests/test_hostile_inputs.py`` builds every registered dataset's corpus once and checks it the same
way: every case met, counts reconciled, no reason that names an exception's type, peak memory under the
bound. A hook may also declare:

``NOT_APPLICABLE``    {hostile-input class: why no input of the dataset can hold it}
``refusals(root)``    [(Case, run(out))]: sources refused whole, each ``run`` raising the project's error
                      naming the file (``SourceError``), with nothing published under ``out``
``other_cases(root, fixtures, build)``  cases met outside the corpus build (a second format, a parser
                      called directly): counted in the reliability table, checked by the hook's checks
``evaluator_cases(root, fixtures)``  [(Case, run())]: what ``benchwright evaluate`` reads
                      (``tests/test_evaluator_hostile.py``)
``check_<what>(build, tmp_path, fixtures)``  the dataset's own checks of its corpus build (a
                      ``CorpusBuild``) and of its other cases, each run as a test

``reliability_table()`` renders docs/RELIABILITY.md's table from every hook, so its numbers are the
corpus's (``tests/test_hostile_inputs.py`` checks they are equal).
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import io
import json
import os
import re
import struct
import zipfile
import zlib
from pathlib import Path

QUARANTINED, KEPT, REFUSED = "quarantined", "kept", "refused"


@dataclasses.dataclass(frozen=True)
class Case:
    dataset: str
    format: str        # the input format (file kind) the case damages
    name: str
    locator: str       # quarantine: the row's locator starts with this; refused: the error names it
    reason: str        # a substring of the row's reason (or of the error)
    unit: str | None = None
    outcome: str = QUARANTINED


# --------------------------------------------------------------------------- generated bad bytes


@functools.lru_cache(maxsize=2)
def png_bomb(width: int, height: int) -> bytes:
    """A valid 8-bit greyscale PNG of ``width`` x ``height`` zeros, compressed row by row (1/230 of the
    ``width * height`` bytes it decodes to)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    comp, row, parts = zlib.compressobj(1), b"\0" * (width + 1), []
    for _ in range(height):
        parts.append(comp.compress(row))
    parts.append(comp.flush())
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", b"".join(parts)) + chunk(b"IEND", b"")


def jpeg_claiming(width: int, height: int, good: bytes) -> bytes:
    """A real JPEG whose frame header (SOF0) claims ``width`` x ``height``: the pixels a decoder
    would allocate are the header's, not the file's."""
    i = good.index(b"\xff\xc0")
    return good[:i + 5] + struct.pack(">HH", height, width) + good[i + 9:]


DEEP = "[" * 100_000 + "]" * 100_000  # 100,000-deep nesting (JSON, YAML flow style)
TOO_DEEP = "nested deeper than the JSON decoder"  # what the strict reader says of it (strict_json)


def huge_integer(digits: int = 5000) -> str:
    return "9" * digits


def zip_bytes(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), data, compress_type=compression)
    return buf.getvalue()


def zip_bomb(members: int = 40, member_bytes: int = 8 << 20) -> bytes:
    """``members`` x ``member_bytes`` of zeros (320 MiB by default) in about 320 KiB."""
    zeros = b"\0" * member_bytes
    return zip_bytes({f"part{i:03d}.bin": zeros for i in range(members)})


BILLION_LAUGHS = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
                  + b"".join(b'<!ENTITY lol%d "%s">' % (i, (b"&lol%s;" % (b"" if i == 1 else str(i - 1).encode())) * 10)
                             for i in range(1, 10))
                  + b"]><lolz>&lol9;</lolz>")
EXTERNAL_ENTITY = b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><d>&x;</d>'
YAML_BOMB = ("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(8)))


def damage_json(value, data, leaves, depth: int = 0, max_depth: int = 4):
    """A JSON value with one nested value replaced by a draw from the hypothesis strategy ``leaves``, or
    a key dropped: a random path from the top (never the top itself), stopping at a leaf, at ``max_depth``
    or (1 in 6) anywhere below, so a whole list or object is replaced too."""
    from hypothesis import strategies as st

    descend = depth < max_depth and (depth == 0 or data.draw(st.integers(0, 5)) > 0)
    if isinstance(value, dict) and value and descend:
        key = data.draw(st.sampled_from(sorted(value)))
        out = dict(value)
        if data.draw(st.integers(0, 4)) == 0:
            del out[key]
        else:
            out[key] = damage_json(value[key], data, leaves, depth + 1, max_depth)
        return out
    if isinstance(value, list) and value and descend:
        i = data.draw(st.integers(0, len(value) - 1))
        return value[:i] + [damage_json(value[i], data, leaves, depth + 1, max_depth)] + value[i + 1:]
    return data.draw(leaves)


def undecodable_name(folder: Path, name: bytes, data: bytes | None = b"x\n") -> str:
    """Write ``folder/name`` (bytes that are not UTF-8); returns the name as Python lists it."""
    path = os.path.join(os.fsencode(folder), name)
    if data is None:
        os.mkdir(path)
    else:
        with open(path, "wb") as fh:
            fh.write(data)
    return os.fsdecode(name)



def strict_ooxml(transitional: bytes) -> bytes:
    """The package as ISO/IEC 29500 Strict writes it (Strict namespaces, ``w:conformance="strict"``)."""
    pairs = ((b"http://schemas.openxmlformats.org/wordprocessingml/2006/main", b"http://purl.oclc.org/ooxml/wordprocessingml/main"),
             (b"http://schemas.openxmlformats.org/officeDocument/2006/relationships",
              b"http://purl.oclc.org/ooxml/officeDocument/relationships"))
    zin = zipfile.ZipFile(io.BytesIO(transitional))
    members = {}
    for info in zin.infolist():
        data = zin.read(info)
        if info.filename.endswith((".xml", ".rels")):
            for old, new in pairs:
                data = data.replace(old, new)
        members[info.filename] = data
    return zip_bytes(members)


def with_members(package: bytes, changes: dict[str, bytes]) -> bytes:
    """``package`` with members replaced or added."""
    zin = zipfile.ZipFile(io.BytesIO(package))
    members = {i.filename: zin.read(i) for i in zin.infolist()}
    members.update(changes)
    return zip_bytes(members)



def write_file(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass"))
    return path



# --------------------------------------------------------------------------- the hooks


@dataclasses.dataclass
class Corpus:
    """What a hook's ``corpus(work, fixtures)`` returns: one source (under ``work``) holding its cases, and
    how it is built (into ``work/out``)."""

    source: Path
    cases: list[Case]
    dataset: object = None          # a Dataset the test set up; None: the registered one
    options: dict = dataclasses.field(default_factory=dict)   # BuildOptions beyond max_bad_fraction=1.0


@dataclasses.dataclass
class CorpusBuild:
    """A corpus built: what the generic tests and a hook's checks read."""

    name: str
    source: Path
    built: Path
    cases: list[Case]
    peak_mb: float                  # peak RSS the build added (reset before it)


def hook(name: str):
    """The hostile corpus hook of registered dataset ``name``: ``tests/hostile/<name>.py``."""
    return importlib.import_module(f"tests.hostile.{name}")


def checks(name: str) -> list[str]:
    """The names of the hook's ``check_*`` functions, in the order the hook defines them."""
    return [n for n, value in vars(hook(name)).items() if n.startswith("check_") and callable(value)]


def peak_rss_growth_mb(fn, *args) -> float:
    """Peak resident memory added while ``fn(*args)`` runs (Linux: the high-water mark is reset first)."""
    def hwm() -> int:
        return int(re.search(r"VmHWM:\s+(\d+)", Path("/proc/self/status").read_text()).group(1))

    Path("/proc/self/clear_refs").write_text("5")
    before = hwm()
    fn(*args)
    return (hwm() - before) / 1024


BOMB_RSS_LIMIT_MB = 64  # every bomb a parser meets expands to 256 MB or more
BUILD_TIMEOUT_S = 600  # a hang guard, not a timing assertion


def guarded_build(dataset, source: Path, out: Path, **options) -> tuple[Path, float]:
    """``build_dataset`` under a hang guard (SIGALRM); returns (the build, the peak RSS it added in MB)."""
    import signal

    from tests.builds import build_dataset

    def hang(signum, frame):
        raise TimeoutError(f"{dataset}: the build of the hostile corpus ran over {BUILD_TIMEOUT_S} s")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(BUILD_TIMEOUT_S)
    try:
        out_box = []
        peak = peak_rss_growth_mb(lambda: out_box.append(build_dataset(dataset, source, out, **options)))
        return out_box[0], peak
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def build_corpus(name: str, work: Path, fixtures: Path) -> CorpusBuild:
    """Write dataset ``name``'s corpus under ``work`` (its hook's ``corpus``) and build it into ``work/out``."""
    corpus = hook(name).corpus(work, fixtures)
    options = {"max_bad_fraction": 1.0, **corpus.options}
    built, peak = guarded_build(corpus.dataset or name, corpus.source, work / "out", **options)
    return CorpusBuild(name, corpus.source, built, corpus.cases, peak)


# --------------------------------------------------------------------------- what every build is checked for


def quarantine_rows(built: Path) -> list[dict]:
    from benchwright.layout import QUARANTINE_DIR

    return [json.loads(line) for f in sorted((built / QUARANTINE_DIR).glob("*.jsonl"))
            for line in f.read_text().splitlines() if line.strip()]


def reconciled_units(built: Path) -> dict:
    from benchwright.layout import MANIFEST

    units = json.loads((built / MANIFEST).read_text())["reconciliation"]["units"]
    for unit, e in units.items():
        assert e["read"] == e["written"] + e["quarantined"] + e["filtered"], unit
    return units


def case_problem(case: Case, rows: list[dict]) -> str | None:
    """What is wrong with how the build met ``case`` (None: as the corpus says)."""
    mine = [r for r in rows if r["locator"].startswith(case.locator)]
    if case.outcome == KEPT:
        return f"{case}: quarantined {mine[:3]}" if mine else None
    hits = [r for r in mine if case.reason in r["reason"] and case.unit in (None, r["unit"])]
    if not hits:
        return (f"{case}: no quarantine row; rows at that locator: "
                f"{[(r['unit'], r['locator'], r['reason']) for r in mine][:5]}")
    # a clear reason, never an unexpected exception's type name (what the stage writes for a crash)
    if any(re.match(r"^[A-Z]\w*(Error|Exception): ", r["reason"]) for r in hits):
        return f"{case}: a crash's reason {[r['reason'] for r in hits][:2]}"
    return None


def assert_every_case(cases: list[Case], rows: list[dict]) -> None:
    problems = [p for c in cases if c.outcome != REFUSED and (p := case_problem(c, rows))]
    assert not problems, "\n".join(problems)
    assert_rows_in_words(rows)


# an exception's type name where a message puts one (``f"{type(err).__name__}: {err}"``, a module path too)
TYPE_NAME = re.compile(r"(^|: |; |\()([a-z_.]*[A-Z]\w*(Error|Exception|Invalid|ZipFile))(:|\)|$)")


def assert_rows_in_words(rows: list[dict]) -> None:
    """Every quarantine row of a build: its reason in words (no exception type name), its reason and
    locator at most 1 KB of UTF-8 (a 1 MB value quoted in one is cut)."""
    long = [(r["locator"][:60], len(r["reason"].encode())) for r in rows
            if len(r["reason"].encode()) > 1024 or len(r["locator"].encode()) > 1024]
    assert not long, long[:5]
    typed = [(r["locator"], r["reason"]) for r in rows if TYPE_NAME.search(r["reason"])]
    assert not typed, typed[:5]


# --------------------------------------------------------------------------- every dataset at once


def evaluator_cases(root: Path, fixtures: Path) -> list[tuple[Case, object]]:
    """What ``benchwright evaluate`` reads, every registered dataset whose hook declares it. Each case is
    (Case, run): ``run()`` evaluates the case's input and returns what the evaluator said about it (its
    warnings, or the reasons it listed for what it left out), or raises the project's error. Outcomes:
    ``refused`` (an error naming the file and the record or line), ``kept`` (scored, with a warning saying
    why the numbers say little: AP 0 for no predictions), ``quarantined`` (the file is left out of the
    score and listed with its reason, the rest scored: Workspace-Bench's judge files)."""
    from benchwright import registry

    return [case for name in registry.names() if hasattr(hook(name), "evaluator_cases")
            for case in hook(name).evaluator_cases(root / name, fixtures)]


def full_corpus(root: Path, fixtures: Path, builds: dict[str, CorpusBuild]) -> dict[str, list[Case]]:
    """Every case of every registered dataset: its corpus build's, its refusals, its other cases and its
    evaluator cases (written under ``root``)."""
    from benchwright import registry

    corpus = {}
    for name in registry.names():
        h = hook(name)
        cases = list(builds[name].cases)
        if hasattr(h, "other_cases"):
            cases += h.other_cases(root / name / "other", fixtures, builds[name])
        if hasattr(h, "refusals"):
            cases += [case for case, _ in h.refusals(root / name / "refused")]
        if hasattr(h, "evaluator_cases"):
            cases += [case for case, _ in h.evaluator_cases(root / name / "evaluators", fixtures)]
        corpus[name] = cases
    return corpus


def reliability_table(corpus: dict[str, list[Case]]) -> str:
    """docs/RELIABILITY.md's table: cases per dataset and format, and the classes that do not apply."""
    lines = ["| dataset | format | cases | quarantined / kept / refused (or why not) |", "|---|---|---|---|"]
    for dataset, cases in corpus.items():
        formats = sorted({c.format for c in cases})
        for fmt in formats:
            mine = [c for c in cases if c.format == fmt]
            counts = " / ".join(str(sum(c.outcome == o for c in mine)) for o in (QUARANTINED, KEPT, REFUSED))
            lines.append(f"| `{dataset}` | {fmt} | {len(mine)} | {counts} |")
        for item, why in getattr(hook(dataset), "NOT_APPLICABLE", {}).items():
            covered = "not covered" if why.startswith("not covered") else "n/a"
            lines.append(f"| `{dataset}` | {item} | {covered} | {why.removeprefix('not covered: ')} |")
    return "\n".join(lines) + "\n"
