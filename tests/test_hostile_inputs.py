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
from tests.wildbox_helpers import build_wildbox, tiny_source, wildbox_stage_rows

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


def guarded_build(dataset: str, *args, label: str | None = None, **kw) -> Path:
    """``_build`` under a hang guard (SIGALRM), its peak RSS growth recorded in BUILD_PEAK_MB[label or dataset]."""
    import signal

    def hang(signum, frame):
        raise TimeoutError(f"{dataset}: the build of the hostile corpus ran over {BUILD_TIMEOUT_S} s")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(BUILD_TIMEOUT_S)
    try:
        out = []
        BUILD_PEAK_MB[label or dataset] = peak_rss_growth_mb(lambda: out.append(_build(dataset, *args, **kw)))
        return out[0]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _build(name: str, source: Path, out: Path, settings: dict | None = None, **kw) -> Path:
    from benchwright import registry
    from benchwright.build import build
    from benchwright.options import BuildOptions

    dataset = registry.get(name).configured(**settings or {})
    return Path(build(dataset, str(source), BuildOptions(out=str(out), progress=False, **kw)))


# Measured on 2 shared cores: WildBox 194 MB, VLM 382 MB, Workspace-Bench 552 MB. The WildBox build decoded
# its 20000 x 20000 mask before the fix (+765 MB: over its bound); the others' bombs are parser-level below.
BUILD_PEAK_LIMIT_MB = {"wildbox": 600, "vlm_unlearning": 1000, "workspace_bench": 1200, "wildbox (Omni3D)": 600}


def test_no_corpus_build_grows_memory_like_a_bomb(wildbox, vlm, workspace, omni3d):
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


def test_wildbox_hostile_names_read_back_through_its_exports_and_evaluator(wildbox, tmp_path):
    """Whatever the build publishes, its own exports and evaluator read back: the video folders named with a
    space, a tab and a newline, quotes and a leading dash, non-ASCII and 255 bytes are in frame_map.txt (one
    line, four fields each), the Omni3D export's file paths name its images, and the export's own KITTI rows
    given as predictions score 100 (every file mapped to its frame; before, a name with a space split the
    frame_map line and valid predictions were refused)."""
    from benchwright.evaluation.wildbox import evaluate_paths
    from benchwright.loaders.wildbox import KITTI_IMAGE_SETS, parse_frame_map_line

    _, built, _ = wildbox
    kitti = built / "exports" / "kitti"
    lines = (kitti / "frame_map.txt").read_text(encoding="utf-8").split("\n")
    fmap = {f["frame_id"]: f for f in map(parse_frame_map_line, lines) if f}
    published = {r["frame_id"] for f in (built / "frames").glob("*.parquet")
                 for r in pq.read_table(f, columns=["frame_id"]).to_pylist()}
    assert set(fmap) == published
    for video in hostile.HOSTILE_FOLDER_NAMES:
        assert any(fid.startswith(f"{video}/seg1/") for fid in fmap), video
        assert any(f["image"].startswith(f"exports/images/{video}/") and (built / f["image"]).is_file()
                   for f in fmap.values())
    for export in sorted((built / "exports" / "omni3d").glob("*.json")):
        assert all((built / image["file_path"]).is_file() for image in json.loads(export.read_text())["images"])
    for split, listed in KITTI_IMAGE_SETS.items():
        preds = tmp_path / split
        preds.mkdir()
        names = (kitti / "ImageSets" / f"{listed}.txt").read_text().split()
        for name in names:
            rows = (kitti / "training" / "label_2" / f"{name}.txt").read_text().splitlines()
            (preds / f"{name}.txt").write_text("".join(f"{row} 0.9000\n" for row in rows))
        metrics = evaluate_paths(built, preds, split)
        assert metrics["ap2d_agnostic@0.50"]["micro"] == 100.0, split
        assert metrics["meta"]["n_pred"] == sum(1 for f in preds.iterdir() for _ in f.read_text().splitlines()) > 0
        assert metrics["meta"]["n_pred_outside_split"] == 0


def test_every_kitti_and_omni3d_path_case_is_met(tmp_path, fixtures_dir):
    """KITTI object and tracking folders and Omni3D JSON: every name that becomes a path resolved through the
    source's ``files.Root`` (nothing read from outside it: before, ``../x.jpg`` and an absolute path were read
    and embedded); BOMs, bytes that are not UTF-8 and misspelt calibration keys refused naming file and line;
    names with spaces kept."""
    cases = hostile.write_wildbox_kitti(tmp_path / "kitti", fixtures_dir)
    omni3d = hostile.write_wildbox_omni3d_paths(tmp_path / "omni3d", fixtures_dir)
    rows, published = [], {"segment_id": set(), "image_path": set()}
    for source in (tmp_path / "kitti" / "object", tmp_path / "kitti" / "tracking", tmp_path / "omni3d"):
        more, made = wildbox_stage_rows(source)
        rows += more
        for key in published:
            published[key] |= made[key]
    assert len(cases) + len(omni3d) >= 15
    assert_every_case(cases + omni3d, rows)
    assert "kitti/frame 08 é" in published["segment_id"] and "images/my frame 01 é.png" in published["image_path"]
    assert not any("omni3d_outside" in path for path in published["image_path"])  # nothing from outside was read


def test_wildbox_auxiliary_files_that_cannot_be_read_change_no_label(wildbox):
    """A point cloud that cannot be read leaves its segment's boxes unmeasured (support_points -1, as without a
    cloud), never 0 points in every box; a 16-bit mask of 0 and 1 gives the box its SAM3 extent (read as grey
    at 8 bits it was empty, and the box fell back to VGGT's). Both fail before the fix."""
    root, built, cases = wildbox
    boxes = [r for f in (built / "boxes").glob("*.parquet")
             for r in pq.read_table(f, columns=["segment_id", "track_id", "frame_index", "support_points",
                                                "bbox_source"]).to_pylist()]
    clouds = {c.locator.split("/vggt_results/")[0] for c in cases if c.format == "point cloud PLY"}
    assert len(clouds) == 3  # truncated, not a PLY, symlinked out of the source (never read)
    for seg in clouds:
        assert {b["support_points"] for b in boxes if b["segment_id"] == seg} == {-1}, seg
    assert any(b["support_points"] >= 0 for b in boxes if b["segment_id"] not in clouds)
    deep = next(c for c in cases if c.name.startswith("16-bit greyscale"))
    seg, rest = deep.locator.split("/vggt_results/tracking_summary.json#track=")
    track, frame = rest.split(",frame_index=")
    (box,) = [b for b in boxes if (b["segment_id"], b["track_id"], b["frame_index"]) == (seg, int(track), int(frame))]
    assert box["bbox_source"] == 0  # sam3


@pytest.fixture(scope="module")
def omni3d(wildbox, tmp_path_factory):
    root = tmp_path_factory.mktemp("omni3d-hostile") / "omni3d"
    cases = hostile.write_omni3d(root, wildbox[1])
    built = guarded_build("wildbox", root, tmp_path_factory.mktemp("out"), label="wildbox (Omni3D)",
                          max_bad_fraction=1.0, running_mode="in_memory", num_workers=1)
    return root, built, cases


def test_every_omni3d_case_is_quarantined_with_its_reason(omni3d):
    """Documents that list one folder's images between them (or the same images twice), and damaged
    documents and records: each refused alone, the rest published; before the fix the duplicate frame and
    segment ids stopped the whole build, and the rest crashed their document."""
    root, built, cases = omni3d
    assert len(cases) >= 9
    assert_every_case(cases, quarantine_rows(built))
    reconciled_units(built)
    frames = [r for f in (built / "frames").glob("*.parquet")
              for r in pq.read_table(f, columns=["frame_id", "segment_id"]).to_pylist()]
    assert len({r["frame_id"] for r in frames}) == len(frames)
    split = next(c.locator for c in cases if c.outcome == hostile.KEPT)
    listed = [json.loads((root / "exports" / "omni3d" / f"split_{x}.json").read_text())["images"] for x in "ab"]
    assert sum(r["segment_id"] == split for r in frames) == sum(map(len, listed)) >= 4
    segments = [r["segment_id"] for f in (built / "segments").glob("*.parquet")
                for r in pq.read_table(f, columns=["segment_id"]).to_pylist()]
    assert segments.count(split) == 1


def test_wildbox_mask_bomb_is_refused_before_decoding():
    """A 20000 x 20000 PNG of zeros (400 MB decoded) against its 518 x 294 frame: refused from its header."""
    from benchwright.wildbox.images import LocalFiles, mask_extent

    bomb = hostile.png_bomb(20000, 20000)
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".png") as tmp:
        tmp.write(bomb)
        tmp.flush()
        grown = peak_rss_growth_mb(lambda: mask_extent(LocalFiles, tmp.name, 518 * 294))
        assert mask_extent(LocalFiles, tmp.name, 518 * 294) is None
    assert grown < BOMB_RSS_LIMIT_MB


def test_frame_truncation_check_walks_real_images_to_their_end(fixtures_dir):
    """The frame check on real JPEGs (EXIF thumbnails, 300 dpi, 4:2:0; and each re-encoded progressive)
    and real PNGs (KITTI frames): bytes after the end marker (padding, a trailer, a second picture) are
    not a truncation; a cut anywhere is, even right after an EXIF thumbnail's own end-of-image marker or
    when the cut file is then padded (the old check, an end marker in the last KiB, got both wrong)."""
    import io

    from PIL import Image

    from benchwright.wildbox.images import truncation_problem

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
                          settings={"format": "vlguard", "routing_scores": str(scores)})
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
    # a lone surrogate escaped in an instruction: repaired before Beam's coder (beam.Create), counted, kept
    repaired = next(c.locator.split("#id=", 1)[1] for c in cases if "lone surrogate" in c.name)
    instructions = [r["instruction"] for f in (built / "multimodal").glob("*.parquet")
                    for r in pq.read_table(f, columns=["record_id", "instruction"]).to_pylist() if r["record_id"] == repaired]
    assert instructions and all(i.endswith(" \ufffd") for i in instructions[:1])
    assert json.loads((built / MANIFEST).read_text())["counters"]["unencodable_strings.ListRecords"] >= 1
    # the leak: the training copy is quarantined, the test copy published
    leaked = next(c.locator.split("#id=", 1)[1] for c in cases if "leak" in c.name)
    keys = {r["record_key"] for f in (built / "records").glob("*.parquet")
            for r in pq.read_table(f, columns=["record_key"]).to_pylist()}
    assert f"test/{leaked}" in keys and f"train/{leaked}" not in keys
    # nothing read from outside the image root: no published image is a linked-out file's bytes
    outside = {(root.parent / "outside.png").read_bytes(), *(p.read_bytes() for p in (root.parent / "linked").iterdir())}
    published = [r["image"] for f in (built / "multimodal").glob("*.parquet")
                 for r in pq.read_table(f, columns=["image"]).to_pylist()]
    assert published and not any(i["bytes"] in outside for i in published)


def test_vlm_hostile_ids_read_back_through_the_llava_export_and_the_evaluator(vlm, tmp_path):
    """Ids with whitespace, quotes, a leading dash, '/' and '#', non-ASCII and 300 characters are published,
    exported for LLaVA (its images named by their sha256: no id becomes a path) and scored by the evaluator
    from answers keyed by the export's ids: every answer is joined to its example, none is unknown."""
    from benchwright.evaluation.vlm_unlearning import evaluate, index_from_build, read_predictions
    from benchwright.loaders.vlm_unlearning import export_llava

    _, built, _ = vlm
    export_llava(built, tmp_path / "llava")
    samples = json.loads((tmp_path / "llava" / "multimodal" / "forget.json").read_text(encoding="ascii"))
    samples += json.loads((tmp_path / "llava" / "multimodal" / "retain.json").read_text(encoding="ascii"))
    ids = {s["id"] for s in samples}
    for hostile_id in hostile.HOSTILE_IDS:
        assert f"train/{hostile_id}#0" in ids, hostile_id
    assert all((tmp_path / "llava" / "images" / s["image"]).is_file() for s in samples if "image" in s)
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"example_id": i, "view": "multimodal", "response": "I cannot help with that."})
                               + "\n" for i in sorted(ids)), encoding="utf-8")
    result = evaluate(read_predictions(str(answers)), index_from_build(str(built)), missing="exclude")
    sets = result["groups"]["multimodal"]["sets"]
    assert sets["forget"]["answered"] + sets["retain"]["answered"] == len(ids)
    assert sets["forget"]["missing"] == sets["retain"]["missing"] == 0


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
    from benchwright.vlm_unlearning import sources
    from benchwright.stage import Reject, reject_row

    root, cases = hostile.mapped_lines_vlm_unlearning(tmp_path / "mapped")
    fmt, records, mapping = sources.list_records(str(root))
    rows = [reject_row("ParseRecord", r) for element in records
            for r in sources.parse_record(element, str(root), fmt, mapping) if isinstance(r, Reject)]
    assert_every_case(cases, rows)
    # the good lines are the records kept: the first, and the one whose strings hold line separators, intact
    assert sum(r["unit"] == "record" for r in rows) == sum(c.outcome == hostile.QUARANTINED for c in cases)
    kept = [r for element in records for r in sources.parse_record(element, str(root), fmt, mapping)
            if hasattr(r, "examples")]
    assert [(e.instruction, e.response) for r in kept for e in r.examples][-1] == hostile.LINE_SEPARATED


def test_vlm_image_bomb_is_refused_from_its_header():
    from benchwright.errors import RecordError
    from benchwright.vlm_unlearning.stages import read_image

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


def test_workspace_hostile_file_names_read_back_through_the_loader(workspace):
    """Data files named with a space, a tab and a newline, quotes and a leading dash, dots, non-ASCII and 255
    bytes, named by a task's manifest and dependency graph: each published once under its name, the manifest
    resolved to them (no "no data file" row), the graph's edges kept, and the loader's
    ``task_dependency_files`` and ``readable_files`` give the names back as they are."""
    from benchwright.loaders.workspace_bench import readable_files, task_dependency_files

    _, built, _ = workspace
    names = set(hostile.WS_HOSTILE_FILE_NAMES)
    assert not [r for r in quarantine_rows(built) if r["locator"].startswith("tasks/29/")]
    task = next(r for r in _published(built, "tasks") if r["task_id"] == "29")
    assert task["file_count"] == len(names) and {m["filename"] for m in task["data_manifest"]} == names
    assert task["manifest_bytes"] == sum(len(f"{n}\n".encode()) for n in names)
    edges = [r for r in _published(built, "task_edges") if r["task_id"] == "29"]
    assert len(edges) == len(names) - 1 and {e["src_kind"] for e in edges} == {"manifest"}
    assert task_dependency_files(built)["29"] == names
    paths = [f["path"] for f in readable_files(built) if f["task_id"] == "29"]
    assert all(paths.count(f"data/{n}") == 1 for n in names), paths


def test_bad_task_list_elements_are_quarantined_not_fatal(tmp_path, fixtures_dir):
    cases = hostile.write_workspace_website(tmp_path / "website", fixtures_dir)
    built = _build("workspace_bench", tmp_path / "website", tmp_path / "out", max_bad_fraction=1.0)
    assert_every_case(cases, quarantine_rows(built))
    units = reconciled_units(built)
    assert units["task"] == {"read": 11, "written": 5, "quarantined": 6, "filtered": 0, "bad_fraction": round(6 / 11, 6)}
    # the Lite list: 7 entries, its 2 good ones (tasks 1 and 3) the lite split, the other 5 quarantined
    assert units["lite_task"] == {"read": 7, "written": 2, "quarantined": 5, "filtered": 0,
                                  "bad_fraction": round(5 / 7, 6)}
    lite = [r for f in sorted((built / "tasks").glob("lite-*.parquet")) for r in pq.read_table(f).to_pylist()]
    assert sorted(int(r["task_id"]) for r in lite) == [1, 3]
    # a lone surrogate the file escaped in an instruction (or a rubric) is repaired, counted, and the task kept
    tasks = {r["task_id"]: r for f in sorted((built / "tasks").glob("full-*.parquet")) for r in pq.read_table(f).to_pylist()}
    assert tasks["31"]["instruction"].endswith(" \ufffd")
    rubrics = [r["rubric"] for f in sorted((built / "rubrics").glob("full-*.parquet"))
               for r in pq.read_table(f).to_pylist() if r["task_id"] == "32"]
    assert rubrics and all(r.endswith(" \ufffd") for r in rubrics)
    assert json.loads((built / MANIFEST).read_text())["counters"]["unencodable_strings.ReadTasks"] == 1 + len(rubrics)


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
    from benchwright.wordeval.sources import read_catalogue

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


def test_the_readme_reliability_table_is_the_corpus(wildbox, omni3d, vlm, workspace, wordeval_case, tmp_path,
                                                    fixtures_dir):
    corpus = hostile.full_corpus(tmp_path, fixtures_dir, omni3d[2], wildbox=wildbox[2], vlm=vlm[2],
                                 workspace=workspace[2], wordeval_case=wordeval_case)
    readme = README.read_text(encoding="utf-8")
    section = readme.split("\n## Reliability\n", 1)[1].split("\n## ", 1)[0]
    assert hostile.reliability_table(corpus) in section, hostile.reliability_table(corpus)
    total = sum(len(cases) for cases in corpus.values())
    assert f"{total} cases" in section


def test_wordeval_ids_that_name_no_case_folder_are_quarantined_and_the_rest_read_back(tmp_path):
    """A catalogue whose unit and template ids become case folder names: the ones that would leave
    exports/cases (``../``, ``/``), not fit a file name with the harness's suffixes, or that no file name can
    hold (300 characters, a NUL byte, a lone surrogate: before, ``File name too long`` stopped the build) are
    quarantined case by case naming the catalogue file, the other units build, nothing is written outside the build, and the kept ones (spaces, quotes, a
    leading dash, dots, non-ASCII) publish folders that the batch evaluator finds by case id and passes."""
    from benchwright.build import build
    from benchwright.evaluation.wordeval import evaluate_outputs
    from benchwright.options import BuildOptions
    from benchwright.pipelines.wordeval import WordEval

    from benchwright.wordeval.sources import read_catalogue

    root, cases = hostile.write_wordeval_ids(tmp_path / "work" / "catalogue")
    # the units of the file the ids were added to and the composition's steps, one seed: a third of the
    # catalogue's cases to build; the LibreOffice gate is not under test: the names are
    cat = read_catalogue(str(root))
    steps = {step["unit"] for template in cat.templates.values() for step in template["steps"]}
    dataset = WordEval().configured(
        libreoffice_gate="none", seeds=(0,),
        unit_ids=tuple(sorted(u for u, unit in cat.units.items()
                              if unit["source"] == "units/01_character_formatting.yaml" or u in steps)))
    built = Path(build(dataset, str(root), BuildOptions(out=str(tmp_path / "work" / "out"), progress=False,
                                                        max_bad_fraction=1.0)))
    rows = quarantine_rows(built)
    assert_every_case(cases, rows)
    refused = [r for r in rows if "exports/cases/" in r["reason"]]
    assert refused and all("units/01_character_formatting.yaml" in r["reason"] or "compositions.yaml" in r["reason"]
                           for r in refused)
    reconciled_units(built)
    # nothing outside the build: the work folder holds the catalogue and the output only
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["catalogue", "out"]
    assert not list(tmp_path.glob("**/escape*")) and not Path("/tmp/absolute--report--s0").exists()
    folders = {p.name: p for p in (built / "exports" / "cases").iterdir()}
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    for uid in hostile.HOSTILE_UNIT_IDS:
        mine = [name for name in folders if name.startswith(f"{uid}--")]
        assert mine, uid
        for name in mine:
            shutil.copy(folders[name] / "reference.docx", outputs / f"{name}.docx")
    result = evaluate_outputs(outputs, built / "exports" / "cases", isolate=False)
    summary = result["summary"]
    assert summary["n_cases"] == len(list(outputs.iterdir())) and summary["passed"] == summary["n_cases"], summary
    assert set(summary["per_case"]) == {p.stem for p in outputs.iterdir()}
