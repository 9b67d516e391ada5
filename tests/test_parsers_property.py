"""Property-based tests (hypothesis) on the parsers of Workspace-Bench and the VLM unlearning sets: on
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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchwright.errors import RecordError, SourceError
from benchwright.vlm_unlearning import records as vlm
from benchwright.workspace_bench import deps, release
from benchwright.workspace_bench.scan import scan_file

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
