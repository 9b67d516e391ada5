"""Property-based tests (hypothesis) on the parsers of every dataset (WildBox's segment, KITTI and Omni3D
readers, WordEval's catalogue, Workspace-Bench, the VLM unlearning sets and their score files): on
any input a parser returns its result or raises the project's record / source error naming where the
input came from; it never crashes with anything else. Inputs are random values, and real records and
real files damaged at random (cut, bytes flipped, keys dropped, values retyped)."""
from __future__ import annotations

import copy
import io
import json

import docx
import nbformat
import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchwright.errors import RecordError, SourceError
from benchwright.vlm_unlearning import records as vlm
from benchwright.workspace_bench import deps, release
from benchwright.workspace_bench.scan import scan_file
from tests import hostile

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                               max_size=5), max_leaves=20)


def _real_tasks(fixtures_dir) -> list[dict]:
    return json.loads((fixtures_dir / "workspace_bench" / "tasks_head.json").read_text())["full"]


def _damage(record: dict, data) -> dict:
    """A real record with a few keys dropped or given values of another type."""
    out = copy.deepcopy(record)
    for key in data.draw(st.lists(st.sampled_from(sorted(out)), max_size=3, unique=True)):
        if data.draw(st.booleans()):
            del out[key]
        else:
            out[key] = data.draw(JSON)
    return out


@SETTINGS
@given(data=st.data())
def test_task_rows_on_damaged_real_tasks_returns_rows_or_a_record_error(fixtures_dir, data):
    task = _damage(data.draw(st.sampled_from(_real_tasks(fixtures_dir))), data)
    try:
        row, rubrics, edges, problems = release.task_rows(task, release.WEBSITE)
    except RecordError as err:
        assert err.locator.startswith("tasks.json")
        return
    assert row["rubric_count"] == len(rubrics)
    # every graph edge is either a row or a problem naming it
    assert len(edges) + sum(p["unit"] == "task_edge" for p in problems) == len(task["file_dep_graph"])


@SETTINGS
@given(value=JSON)
def test_task_rows_on_any_json_value(value):
    try:
        release.task_rows(value, release.WEBSITE)
    except RecordError:
        pass


@SETTINGS
@given(text=st.text(max_size=300), prefix=st.booleans())
def test_the_lite_list_parser_never_executes_and_never_crashes(tmp_path_factory, text, prefix):
    path = tmp_path_factory.mktemp("lite") / "tasks-lite.js"
    path.write_text(("window.WORKSPACE_BENCH_LITE_TASKS = " if prefix else "") + text, encoding="utf-8")
    try:
        tasks = release.read_lite_js(str(path))
    except (SourceError, RecordError):
        return
    assert isinstance(tasks, list)


def _real_files() -> dict[str, bytes]:
    """Small files of the types the extractors parse, written by the libraries made for them."""
    d = docx.Document()
    p = d.add_paragraph("See ")
    p.add_run("the report")
    buf = io.BytesIO()
    d.save(buf)
    wb = openpyxl.Workbook()
    wb.active["A1"] = "='[other.xlsx]Sheet1'!A1"
    xbuf = io.BytesIO()
    wb.save(xbuf)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import helpers\nopen('data.csv')"),
                                         nbformat.v4.new_markdown_cell("[notes](notes.md)")])
    return {
        "report.docx": buf.getvalue(), "book.xlsx": xbuf.getvalue(),
        "analysis.ipynb": nbformat.writes(nb).encode(),
        "main.py": b"import os\nfrom pkg import mod\nopen('data/in.csv').read()\n",
        "index.html": b"<html><a href='a.html'>a</a><img src='i.png'><script src='s.js'></script></html>",
        "paper.tex": b"\\input{intro}\\includegraphics{fig.png}\\bibliography{refs}",
        "README.md": b"# T\n[link](docs/x.md) ![img](a.png)\n",
        "config.yaml": b"input: data/in.csv\nout: [a.json, b.json]\n",
        "settings.toml": b"[paths]\ndata = 'data/in.csv'\n",
        "app.js": b"import x from './x.js'; const y = require('../y');\n",
        "run.sh": b"source ./env.sh\n. lib.sh\n",
    }


FILES = _real_files()


@SETTINGS
@given(name=st.sampled_from(sorted(FILES)), data=st.data())
def test_scan_and_extraction_on_cut_and_flipped_real_files(name, data):
    raw = bytearray(FILES[name])
    cut = data.draw(st.integers(0, len(raw)))
    raw = raw[:cut] if data.draw(st.booleans()) else raw
    for i in data.draw(st.lists(st.integers(0, max(0, len(raw) - 1)), max_size=8)):
        if raw:
            raw[i] ^= 0xFF
    blob = bytes(raw)
    try:
        described = scan_file(blob, name)
        refs = deps.extract_references(name, blob, described["file_type"])
    except RecordError as err:
        assert err.locator.startswith(name) or name in err.locator
        return
    assert all({"reference", "edge_type", "evidence", "confidence"} <= set(r) for r in refs)


@SETTINGS
@given(name=st.sampled_from(["a.py", "b.json", "c.yaml", "d.docx", "e.pdf", "f.ipynb", "g.xlsx", "h.md", "i"]),
       blob=st.binary(max_size=600))
def test_scan_and_extraction_on_random_bytes(name, blob):
    try:
        described = scan_file(blob, name)
        deps.extract_references(name, blob, described["file_type"])
    except RecordError:
        pass


def _real_vlguard(fixtures_dir) -> list[dict]:
    return json.loads((fixtures_dir / "vlguard" / "train.json").read_text())[:40]


@SETTINGS
@given(data=st.data())
def test_vlguard_records_damaged_at_random(fixtures_dir, data):
    raw = _damage(data.draw(st.sampled_from(_real_vlguard(fixtures_dir))), data)
    try:
        record, problems = vlm.vlguard_record(raw, "train.json", 0, "images")
    except RecordError as err:
        assert err.locator.startswith("train.json")
        return
    pairs = raw["instr-resp"]
    # every pair of the record is either an example or a problem naming it
    assert len(record.examples) + len(problems) == len(pairs)


@SETTINGS
@given(doc=JSON)
def test_a_mapping_of_any_shape_is_refused_with_a_named_error_or_accepted(doc):
    try:
        vlm.parse_mapping(doc, "mapping.yaml")
    except (SourceError, RecordError) as err:
        assert "mapping.yaml" in str(err)



# --------------------------------------------------------------------------- WildBox, KITTI, Omni3D


@pytest.fixture(scope="module")
def wildbox_segment(tmp_path_factory):
    """One real segment of the tiny synthetic source: its JSON files are damaged at random below."""
    from benchwright.wildbox.synth import write_source

    root = tmp_path_factory.mktemp("wb") / "raw"
    write_source(root, scale="tiny", seed=0)
    seg = sorted(p.parent.parent for p in root.glob("*/*/vggt_results/cameras.json"))[0]
    files = {name: json.loads((seg / "vggt_results" / name).read_text())
             for name in ("cameras.json", "tracking_summary.json")}
    return root, seg.relative_to(root).as_posix(), files


def _damage_deep(value, data):
    """A JSON value with one nested value retyped, dropped or made non-finite."""
    return hostile.damage_json(value, data, JSON | st.sampled_from([float("nan"), float("inf"), 10 ** 30, "../../x.jpg",
                                                                    "/etc/hostname"]))


@SETTINGS
@given(data=st.data())
def test_wildbox_segment_parser_on_damaged_real_json(wildbox_segment, data):
    from benchwright.wildbox.sources import parse_wildbox_segment

    root, seg_rel, files = wildbox_segment
    name = data.draw(st.sampled_from(sorted(files)))
    path = root / seg_rel / "vggt_results" / name
    text = json.dumps(_damage_deep(files[name], data))
    if data.draw(st.booleans()):
        text = text[: data.draw(st.integers(0, len(text)))]
    path.write_text(text)
    try:
        seg = parse_wildbox_segment(str(root), seg_rel)
    except RecordError as err:
        assert err.locator.startswith(seg_rel)
    else:
        assert len(seg.track_id) == len(seg.frame_index) == len(seg.center) == len(seg.track_locator)
    finally:
        path.write_text(json.dumps(files[name]))


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from(list("0123456789 .-eE\nCarPedestrianDontCare:nan")), max_size=400))
def test_kitti_label_and_calib_parsers_on_random_text(text):
    from benchwright.formats import kitti

    objects, errors = kitti.parse_label_lines(text, "label_2/000001.txt")
    assert all(e.locator.startswith("label_2/000001.txt:") for e in errors)
    assert len(objects) + len(errors) <= len([line for line in text.splitlines() if line.strip()])
    try:
        kitti.parse_calib(text, "calib/000001.txt")
    except (RecordError, SourceError) as err:
        assert "calib/000001.txt" in str(err)


def _real_omni3d() -> dict:
    return {"info": {}, "categories": [{"id": 1000, "name": "giraffe"}],
            "images": [{"id": 1, "file_path": "v/s/frame_000001.jpg", "width": 518, "height": 294,
                        "K": [[356.1, 0, 260.6], [0, 358.8, 149.6], [0, 0, 1]]}],
            "annotations": [{"id": 7, "image_id": 1, "category_id": 1000, "category_name": "giraffe",
                             "center_cam": [0.1, 0.2, 5.0], "dimensions": [0.5, 1.8, 1.2],
                             "R_cam": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "bbox2D_tight": [10, 10, 50, 90]}]}


@SETTINGS
@given(data=st.data())
def test_omni3d_reader_on_damaged_documents(data):
    from benchwright.formats.omni3d import read_omni3d

    doc = _damage_deep(_real_omni3d(), data)
    errors = []
    try:
        records = list(read_omni3d(doc, on_error=errors.append, locator="val.json"))
    except SourceError as err:
        assert "val.json" in str(err)
        return
    assert all(e.locator.startswith("val.json") for e in errors)
    assert len(records) <= 1


# --------------------------------------------------------------------------- WordEval, VLM score files and lines


@pytest.fixture(scope="module")
def tiny_catalogue(tmp_path_factory):
    from benchwright.wordeval.synth import write_source

    root = tmp_path_factory.mktemp("cat") / "catalogue"
    write_source(root, scale="tiny")
    return root


@SETTINGS
@given(name=st.sampled_from(["properties.yaml", "instructions.yaml", "basedocs.yaml", "compositions.yaml"]),
       cut=st.floats(0, 1), noise=st.text(max_size=40))
def test_the_wordeval_catalogue_reader_on_cut_and_noisy_yaml(tiny_catalogue, name, cut, noise):
    from benchwright.wordeval.sources import read_catalogue

    path = tiny_catalogue / name
    original = path.read_bytes()
    path.write_bytes(original[: int(len(original) * cut)] + noise.encode())
    try:
        read_catalogue(str(tiny_catalogue))
    except SourceError as err:
        assert str(tiny_catalogue) in str(err)
    finally:
        path.write_bytes(original)


@SETTINGS
@given(text=st.text(max_size=200), ext=st.sampled_from([".json", ".jsonl", ".csv"]))
def test_score_files_of_any_text(tmp_path_factory, text, ext):
    from benchwright.vlm_unlearning.routing import read_scores

    path = tmp_path_factory.mktemp("scores") / f"scores{ext}"
    path.write_text(text, encoding="utf-8")
    try:
        scores = read_scores(str(path))
    except (RecordError, SourceError) as err:
        assert path.name in str(err)
        return
    assert all(0.0 <= v <= 1.0 for v in scores.values())


@SETTINGS
@given(lines=st.lists(st.text(max_size=60) | JSON.map(json.dumps), max_size=6))
def test_mapped_json_lines_of_any_text_become_records_or_quarantine_rows(tmp_path_factory, lines):
    from benchwright.vlm_unlearning import sources
    from benchwright.stage import Read, Reject

    root = tmp_path_factory.mktemp("mapped")
    (root / "mapping.yaml").write_text("files: [{path: f.jsonl, role: forget}]\n"
                                       "fields: {id: id, image: img, instruction: q, response: a}\n")
    (root / "f.jsonl").write_text("\n".join(line.replace("\n", " ") for line in lines) + "\n", encoding="utf-8")
    try:
        fmt, records, mapping = sources.list_records(str(root))
    except SourceError as err:
        if all(not line.strip() for line in lines):  # a file with no JSON line is refused, naming it
            assert str(err).startswith("f.jsonl: holds no records")
        else:  # a field the mapping names that no record has
            assert "mapping.yaml" in str(err)
        return
    for element in records:
        out = list(sources.parse_record(element, str(root), fmt, mapping))
        assert all(isinstance(o, (Read, Reject)) or hasattr(o, "examples") for o in out)
