"""The hostile-input corpus (``tests/hostile.py``), every dataset: ONE build per dataset of a source
holding all its cases at once; each case quarantined with its reason naming the file and record
(or kept unharmed, or the source refused naming the file), counts reconciled, no crash, no hang
(a timeout per build), bounded memory (peak RSS of the parser on each bomb, measured around the
call), and the README's reliability table equal to the corpus."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from benchwright.errors import BuildError, SourceError
from benchwright.layout import MANIFEST, QUARANTINE_DIR
from tests import hostile
from tests.wildbox_helpers import build_wildbox, tiny_source

README = Path(__file__).resolve().parents[1] / "README.md"
BOMB_RSS_LIMIT_MB = 64  # every bomb below expands to 256 MB or more


def peak_rss_growth_mb(fn, *args) -> float:
    """Peak resident memory added while ``fn(*args)`` runs (Linux: the high-water mark is reset first)."""
    def hwm() -> int:
        return int(re.search(r"VmHWM:\s+(\d+)", Path("/proc/self/status").read_text()).group(1))

    Path("/proc/self/clear_refs").write_text("5")
    before = hwm()
    fn(*args)
    return (hwm() - before) / 1024


BUILD_PEAK_MB: dict[str, float] = {}  # peak RSS each corpus build added (the process's, reset before it)
BUILD_TIMEOUT_S = 600  # a hang guard, not a timing assertion


def guarded_build(dataset: str, *args, **kw) -> Path:
    """``_build`` under a hang guard (SIGALRM), its peak RSS growth recorded in BUILD_PEAK_MB."""
    import signal

    def hang(signum, frame):
        raise TimeoutError(f"{dataset}: the build of the hostile corpus ran over {BUILD_TIMEOUT_S} s")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(BUILD_TIMEOUT_S)
    try:
        out = []
        BUILD_PEAK_MB[dataset] = peak_rss_growth_mb(lambda: out.append(_build(dataset, *args, **kw)))
        return out[0]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _build(name: str, source: Path, out: Path, **kw) -> Path:
    from benchwright import registry
    from benchwright.build import build
    from benchwright.options import BuildOptions

    return Path(build(registry.get(name), str(source), BuildOptions(out=str(out), progress=False, **kw)))


# Measured on 2 shared cores: WildBox 194 MB, VLM 382 MB, Workspace-Bench 552 MB. The WildBox build decoded
# its 20000 x 20000 mask before the fix (+765 MB: over its bound); the others' bombs are parser-level below.
BUILD_PEAK_LIMIT_MB = {"wildbox": 600, "vlm_unlearning": 1000, "workspace_bench": 1200}


def test_no_corpus_build_grows_memory_like_a_bomb(wildbox, vlm, workspace):
    """Peak RSS each corpus build added, against a bound an expanded bomb would pass."""
    assert set(BUILD_PEAK_MB) >= set(BUILD_PEAK_LIMIT_MB)
    assert all(BUILD_PEAK_MB[d] < limit for d, limit in BUILD_PEAK_LIMIT_MB.items()), BUILD_PEAK_MB
    print("peak RSS growth per corpus build (MB):", {k: round(v) for k, v in BUILD_PEAK_MB.items()})


def quarantine_rows(built: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((built / QUARANTINE_DIR).glob("*.jsonl"))
            for line in f.read_text().splitlines() if line.strip()]


def reconciled_units(built: Path) -> dict:
    units = json.loads((built / MANIFEST).read_text())["reconciliation"]["units"]
    for unit, e in units.items():
        assert e["read"] == e["written"] + e["quarantined"] + e["filtered"], unit
    return units


def case_problem(case: hostile.Case, rows: list[dict]) -> str | None:
    """What is wrong with how the build met ``case`` (None: as the corpus says)."""
    mine = [r for r in rows if r["locator"].startswith(case.locator)]
    if case.outcome == hostile.KEPT:
        return f"{case}: quarantined {mine[:3]}" if mine else None
    hits = [r for r in mine if case.reason in r["reason"] and case.unit in (None, r["unit"])]
    if not hits:
        return (f"{case}: no quarantine row; rows at that locator: "
                f"{[(r['unit'], r['locator'], r['reason']) for r in mine][:5]}")
    # a clear reason, never an unexpected exception's type name (what the stage writes for a crash)
    if any(re.match(r"^[A-Z]\w*(Error|Exception): ", r["reason"]) for r in hits):
        return f"{case}: a crash's reason {[r['reason'] for r in hits][:2]}"
    return None


def assert_every_case(cases: list[hostile.Case], rows: list[dict]) -> None:
    problems = [p for c in cases if c.outcome != hostile.REFUSED and (p := case_problem(c, rows))]
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- WildBox


@pytest.fixture(scope="module")
def wildbox(tmp_path_factory):
    root = tmp_path_factory.mktemp("wildbox-hostile") / "wildbox"
    cases = hostile.write_wildbox(root)
    built = guarded_build("wildbox", root, tmp_path_factory.mktemp("out"), max_bad_fraction=1.0,
                          running_mode="in_memory", num_workers=1)
    return root, built, cases


def test_every_wildbox_case_is_quarantined_with_its_reason(wildbox):
    _, built, cases = wildbox
    assert len(cases) >= 30
    assert_every_case(cases, quarantine_rows(built))


def test_wildbox_counts_reconcile_with_the_damage(wildbox):
    root, built, cases = wildbox
    units = reconciled_units(built)
    segment_cases = [c for c in cases if c.unit == "segment" and c.outcome == hostile.QUARANTINED]
    assert units["segment"]["quarantined"] == len(segment_cases)
    assert units["frame"]["quarantined"] == sum(c.unit == "frame" and c.outcome == hostile.QUARANTINED for c in cases)
    assert units["box"]["quarantined"] >= sum(c.unit == "box" for c in cases)
    published = {r["segment_id"] for f in (built / "segments").glob("*.parquet")
                 for r in pq.read_table(f, columns=["segment_id"]).to_pylist()}
    frames = {r["image_path"]: r["image"]["bytes"] for f in (built / "frames").glob("*.parquet")
              for r in pq.read_table(f, columns=["image_path", "image"]).to_pylist()}
    for case in cases:
        if case.outcome == hostile.KEPT and case.unit == "segment":
            assert case.locator in published
        if case.outcome == hostile.KEPT and case.unit == "frame":  # published with its bytes as they are
            assert frames[case.locator] == (root / case.locator).read_bytes(), case
    # nothing read from outside the source: the symlinked frame's target is not published
    outside = (root.parent / "outside.jpg").read_bytes()
    assert outside not in frames.values()


def test_wildbox_mask_bomb_is_refused_before_decoding():
    """A 20000 x 20000 PNG of zeros (400 MB decoded) against its 518 x 294 frame: refused from its header."""
    from benchwright.pipelines.wildbox import _LocalFiles, _mask_extent

    bomb = hostile.png_bomb(20000, 20000)
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".png") as tmp:
        tmp.write(bomb)
        tmp.flush()
        grown = peak_rss_growth_mb(lambda: _mask_extent(_LocalFiles, tmp.name, 518 * 294))
        assert _mask_extent(_LocalFiles, tmp.name, 518 * 294) is None
    assert grown < BOMB_RSS_LIMIT_MB


def test_frame_truncation_check_walks_real_images_to_their_end(fixtures_dir):
    """The frame check on real JPEGs (EXIF thumbnails, 300 dpi, 4:2:0; and each re-encoded progressive)
    and real PNGs (KITTI frames): bytes after the end marker (padding, a trailer, a second picture) are
    not a truncation; a cut anywhere is, even right after an EXIF thumbnail's own end-of-image marker or
    when the cut file is then padded (the old check, an end marker in the last KiB, got both wrong)."""
    import io

    from PIL import Image

    from benchwright.pipelines.wildbox_sources import truncation_problem

    images = sorted((fixtures_dir / "docx" / "python-docx").glob("*.jp*g")) + sorted(
        (fixtures_dir / "kitti" / "training" / "image_2").glob("*.png"))
    real = [(p.name, p.read_bytes()) for p in images]
    for name, data in list(real):
        if name.endswith(("jpg", "jpeg")):
            out = io.BytesIO()
            Image.open(io.BytesIO(data)).convert("RGB").save(out, "JPEG", progressive=True, quality=90)
            real.append((f"{name} (progressive)", out.getvalue()))
    problems = []

    def expect(what, data, fmt, truncated):
        got = truncation_problem(io.BytesIO(data), fmt)
        if bool(got) != truncated:
            problems.append(f"{what}: {got!r}")

    for name, data in real:
        fmt = Image.open(io.BytesIO(data)).format
        expect(name, data, fmt, False)
        for pad, trailer in (("4 KiB of zeros", b"\0" * 4096), ("64 KiB of 0xFF", b"\xff" * 65536),
                             ("a second picture", data), ("4 KiB of a maker's trailer", bytes(range(256)) * 16)):
            expect(f"{name} + {pad}", data + trailer, fmt, False)
        for cut in (len(data) // 4, len(data) // 2, len(data) * 9 // 10, len(data) - 2, len(data) - 1):
            expect(f"{name} cut at {cut}", data[:cut], fmt, True)
            expect(f"{name} cut at {cut}, then 4 KiB of zeros", data[:cut] + b"\0" * 4096, fmt, True)
        thumbnail_end = data.find(b"\xff\xd9") + 2  # an EXIF thumbnail's own end marker, inside APP1
        if fmt == "JPEG" and 2 < thumbnail_end < len(data) // 2:
            expect(f"{name} cut after its EXIF thumbnail", data[:thumbnail_end], fmt, True)
    assert sum("EXIF thumbnail" not in n for n, _ in real) >= 10
    assert not problems, "\n".join(problems)


def test_too_many_bad_records_fail_and_publish_nothing(wildbox, tmp_path):
    root, _, _ = wildbox
    with pytest.raises(BuildError, match="max-bad-fraction"):
        build_wildbox(root, tmp_path / "out", max_bad_fraction=0.0)
    assert not (tmp_path / "out" / "wildbox").exists()


def test_a_failed_build_keeps_the_previous_publication(wildbox, tmp_path):
    root, built, _ = wildbox
    out = tmp_path / "out"
    shutil.copytree(built, out / "wildbox", symlinks=True)
    before = (out / "wildbox" / MANIFEST).read_bytes()
    with pytest.raises(BuildError):
        build_wildbox(root, out, max_bad_fraction=0.0)
    assert (out / "wildbox" / MANIFEST).read_bytes() == before


def test_an_unreadable_wildbox_source_fails_with_one_clear_message(tmp_path, monkeypatch):
    import tempfile

    system_temp = tmp_path / "system-temp"
    system_temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system_temp))
    with pytest.raises(SourceError, match="not a folder"):
        build_wildbox(tmp_path / "does-not-exist", tmp_path / "out")
    (tmp_path / "empty" / "junk").mkdir(parents=True)
    with pytest.raises(SourceError, match="no <video>/<segment>/ folders"):
        build_wildbox(tmp_path / "empty", tmp_path / "out")
    assert not (tmp_path / "out" / "wildbox").exists()
    # A source refused while the pipeline graph is built leaves nothing in the system temp folder
    # (Beam's Pipeline() makes a folder there that only run() removes).
    assert sorted(p.name for p in system_temp.iterdir()) == []


def test_a_wildbox_source_whose_every_segment_is_broken_fails(tmp_path):
    root = tiny_source(tmp_path / "raw")
    for seg in sorted(p.parent.parent for p in root.glob("*/*/vggt_results/cameras.json")):
        (seg / "vggt_results" / "cameras.json").write_text("not json")
    with pytest.raises(BuildError, match="yielded nothing|max-bad-fraction"):
        build_wildbox(root, tmp_path / "out")
    assert not (tmp_path / "out" / "wildbox").exists()


# --------------------------------------------------------------------------- VLM unlearning


@pytest.fixture(scope="module")
def vlm(tmp_path_factory, fixtures_dir):
    root = tmp_path_factory.mktemp("vlm-hostile") / "raw"
    cases = hostile.write_vlm_unlearning(root, fixtures_dir)
    scores = root.parent / "scores.json"  # supplied scores: the built-in scorer's training is not under test
    records = [r for r in json.loads((root / "train.json").read_text()) if isinstance(r, dict)]
    scores.write_text(json.dumps({f"train/{r['id']}#{i}": round((n * 37 + i) % 100 / 100, 2)
                                  for n, r in enumerate(records) if isinstance(r.get("id"), str)
                                  and isinstance(r.get("instr-resp"), list) for i in range(len(r["instr-resp"]))}))
    built = guarded_build("vlm_unlearning", root, tmp_path_factory.mktemp("out"), max_bad_fraction=1.0,
                   beam_args=["--format", "vlguard", "--routing-scores", str(scores)])
    return root, built, cases


def test_every_vlm_case_is_quarantined_with_its_reason(vlm):
    root, built, cases = vlm
    assert len(cases) >= 15
    assert_every_case(cases, quarantine_rows(built))
    units = reconciled_units(built)
    bad = [c for c in cases if c.outcome == hostile.QUARANTINED]
    assert units["record"]["quarantined"] == sum(c.unit == "record" for c in bad)
    assert units["example"]["quarantined"] >= len(bad)
    records = {r["record_id"] for f in (built / "records").glob("*.parquet")
               for r in pq.read_table(f, columns=["record_id"]).to_pylist()}
    kept = {c.locator.split("#id=", 1)[1] for c in cases if c.outcome == hostile.KEPT}
    assert kept and kept <= records
    # a literal <image> in the source: the one token of each conversation is the leading one of an image row
    token_id = next(c.locator.split("#id=", 1)[1] for c in cases if "image token" in c.name)
    for view in ("multimodal", "text_only", "image_only"):
        rows = [r for f in (built / view).glob("*.parquet")
                for r in pq.read_table(f, columns=["record_id", "conversations"]).to_pylist() if r["record_id"] == token_id]
        assert rows and all([c["value"].count("<image>") for c in r["conversations"]] == [int(view != "text_only"), 0]
                            and "&lt;image&gt;" in r["conversations"][1]["value"] for r in rows)
    # nothing read from outside the image root: no published image is a linked-out file's bytes
    outside = {(root.parent / "outside.png").read_bytes(), *(p.read_bytes() for p in (root.parent / "linked").iterdir())}
    published = [r["image"] for f in (built / "multimodal").glob("*.parquet")
                 for r in pq.read_table(f, columns=["image"]).to_pylist()]
    assert published and not any(i["bytes"] in outside for i in published)


def test_vlm_sources_and_score_files_refused_whole_name_the_file(tmp_path):
    from benchwright.vlm_unlearning.routing import read_scores

    refusals = hostile.refusals_vlm_unlearning(tmp_path)
    problems = []
    for case, path, _ in refusals:
        try:
            if case.format == "routing-score file":
                read_scores(str(path))
            else:
                _build("vlm_unlearning", path, tmp_path / "out")
            problems.append(f"{case}: accepted")
        except (SourceError, BuildError, hostile_record_error()) as err:
            if case.locator not in str(err) or case.reason not in str(err):
                problems.append(f"{case}: {err}")
    assert not problems, "\n".join(problems)
    assert not (tmp_path / "out" / "vlm_unlearning").exists()


def hostile_record_error():
    from benchwright.errors import RecordError

    return RecordError


def test_bad_json_lines_are_records_of_their_own(tmp_path):
    """A mapped source's bad JSON Lines line is one quarantined record (the stage function the build runs)."""
    from benchwright.pipelines import vlm_unlearning_sources as sources
    from benchwright.stage import Reject

    root, cases = hostile.mapped_lines_vlm_unlearning(tmp_path / "mapped")
    fmt, records, mapping = sources.list_records(str(root))
    rows = [{"stage": "ParseRecord", **r.__dict__} for element in records
            for r in sources.parse_record(element, str(root), fmt, mapping) if isinstance(r, Reject)]
    assert_every_case(cases, rows)
    assert sum(r["unit"] == "record" for r in rows) == len(cases)  # the good line is the one record kept


def test_vlm_image_bomb_is_refused_from_its_header():
    from benchwright.errors import RecordError
    from benchwright.pipelines.vlm_unlearning import read_image

    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".png") as tmp:
        tmp.write(hostile.png_bomb(12000, 12000))  # 144 M pixels: under PIL's own error bound (2 x 89 M)
        tmp.flush()

        def read():
            with pytest.raises(RecordError, match="decompression bomb"):
                read_image(tmp.name, "train.json#id=x")

        assert peak_rss_growth_mb(read) < BOMB_RSS_LIMIT_MB


# --------------------------------------------------------------------------- Workspace-Bench


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, fixtures_dir):
    root = tmp_path_factory.mktemp("ws-hostile") / "release"
    cases = hostile.write_workspace_bench(root, fixtures_dir)
    built = guarded_build("workspace_bench", root, tmp_path_factory.mktemp("out"), max_bad_fraction=1.0)
    return root, built, cases


def _published(built: Path, config: str) -> list[dict]:
    return [r for f in sorted((built / config).glob("full-*.parquet")) for r in pq.read_table(f).to_pylist()]


def test_every_workspace_case_is_quarantined_with_its_reason(workspace):
    root, built, cases = workspace
    assert len(cases) >= 30
    assert_every_case(cases, quarantine_rows(built))
    units = reconciled_units(built)
    assert units["task"]["quarantined"] == sum(c.unit == "task" and c.outcome == hostile.QUARANTINED for c in cases)
    assert units["file"]["quarantined"] == sum(c.unit == "file" and c.outcome == hostile.QUARANTINED for c in cases)
    assert units["lite_task"] == {"read": 2, "written": 1, "quarantined": 1, "filtered": 0, "bad_fraction": 0.5}
    # kept: the file's row is published (hashed and typed, never executed or expanded); a cyclic graph's task too
    files = {f"{r['workspace']}/{r['path']}" for r in _published(built, "files")}
    tasks = {r["task_id"]: r for r in _published(built, "tasks")}
    for case in cases:
        if case.outcome == hostile.KEPT and case.unit == "file":
            assert case.locator in files, case
    assert tasks["23"]["graph_cycles"] == 1 and tasks["23"]["graph_depth"] == -1
    assert tasks["24"]["graph_cycles"] == 1000 and tasks["24"]["graph_edges"] == 132  # counted up to the bound
    assert "outside the workspace" not in "".join(r["text_excerpt"] for r in _published(built, "files"))


def test_bad_task_list_elements_are_quarantined_not_fatal(tmp_path, fixtures_dir):
    cases = hostile.write_workspace_website(tmp_path / "website", fixtures_dir)
    built = _build("workspace_bench", tmp_path / "website", tmp_path / "out", max_bad_fraction=1.0)
    assert_every_case(cases, quarantine_rows(built))
    units = reconciled_units(built)
    assert units["task"] == {"read": 8, "written": 4, "quarantined": 4, "filtered": 0, "bad_fraction": 0.5}
    # the Lite list: 7 entries, its 2 good ones (tasks 1 and 3) the lite split, the other 5 quarantined
    assert units["lite_task"] == {"read": 7, "written": 2, "quarantined": 5, "filtered": 0,
                                  "bad_fraction": round(5 / 7, 6)}
    lite = [r for f in sorted((built / "tasks").glob("lite-*.parquet")) for r in pq.read_table(f).to_pylist()]
    assert sorted(int(r["task_id"]) for r in lite) == [1, 3]
    # a lone surrogate the file escaped in an instruction is repaired, counted, and the task kept
    tasks = {r["task_id"]: r for f in sorted((built / "tasks").glob("full-*.parquet")) for r in pq.read_table(f).to_pylist()}
    assert tasks["31"]["instruction"].endswith(" \ufffd")
    assert json.loads((built / MANIFEST).read_text())["counters"]["unencodable_strings.ReadTasks"] == 1


def test_workspace_sources_refused_whole_name_the_file(tmp_path):
    problems = []
    for case, path, _ in hostile.refusals_workspace_bench(tmp_path):
        try:
            _build("workspace_bench", path, tmp_path / "out")
            problems.append(f"{case}: accepted")
        except (SourceError, BuildError) as err:
            if case.locator not in str(err) or case.reason not in str(err):
                problems.append(f"{case}: {err}")
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- WordEval


@pytest.fixture(scope="module")
def wordeval_case():
    from benchwright.wordeval.cases import build_case

    return build_case("font_bold", 0, "report")


def test_every_edited_docx_case_is_refused_by_name_in_bounded_memory(wordeval_case):
    from benchwright.evaluation import wordeval as ev

    problems = []
    for case, data in hostile.wordeval_docx_cases(wordeval_case["reference_docx"]):
        reports = []
        grown = peak_rss_growth_mb(lambda: reports.append(ev.evaluate_docx(
            wordeval_case["reference_docx"], data, wordeval_case["oracle"], case_id=case.name)))
        rep = reports[0]
        if rep["passed"] or not (rep["rejected"] or "").startswith(case.reason):
            problems.append(f"{case}: {rep['passed']}, {rep['rejected']!r}")
        if grown > BOMB_RSS_LIMIT_MB:
            problems.append(f"{case}: peak RSS grew {grown:.0f} MB")
    assert not problems, "\n".join(problems)


def test_wordeval_catalogues_refused_whole_name_the_file(tmp_path):
    """Through the source parser the build calls first (``read_catalogue``); the build itself once."""
    from benchwright.pipelines.wordeval_sources import read_catalogue

    problems = []
    refusals = hostile.refusals_wordeval(tmp_path)
    for case, path, _ in refusals:
        try:
            read_catalogue(str(path))
            problems.append(f"{case}: accepted")
        except SourceError as err:
            if case.locator not in str(err) or case.reason not in str(err):
                problems.append(f"{case}: {err}")
    assert not problems, "\n".join(problems)
    case, path, _ = refusals[1]  # the alias bomb, through the build
    with pytest.raises(SourceError, match=re.escape(case.reason)):
        _build("wordeval", path, tmp_path / "out")
    assert not (tmp_path / "out" / "wordeval").exists()


# --------------------------------------------------------------------------- the README's numbers


def test_the_readme_reliability_table_is_the_corpus(wildbox, vlm, workspace, wordeval_case, tmp_path, fixtures_dir):
    corpus = hostile.full_corpus(tmp_path, fixtures_dir, wildbox=wildbox[2], vlm=vlm[2], workspace=workspace[2],
                                 wordeval_case=wordeval_case)
    readme = README.read_text(encoding="utf-8")
    section = readme.split("\n## Reliability\n", 1)[1].split("\n## ", 1)[0]
    assert hostile.reliability_table(corpus) in section, hostile.reliability_table(corpus)
    total = sum(len(cases) for cases in corpus.values())
    assert f"{total} cases" in section
