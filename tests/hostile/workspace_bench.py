"""Workspace-Bench's hostile corpus (``tests/hostile/__init__.py`` says what a hook declares): the runner's
layout with hostile task records and workspace files, the website's task lists, task lists refused whole,
and the evaluator's judge files."""
from __future__ import annotations

import functools
import io
import json
import os
import shutil
from pathlib import Path

from tests.hostile import (BILLION_LAUGHS, DEEP, EXTERNAL_ENTITY, KEPT, QUARANTINED, REFUSED, TOO_DEEP, YAML_BOMB,
                           Case, Corpus, CorpusBuild, assert_every_case, huge_integer, png_bomb, quarantine_rows,
                           reconciled_units, strict_ooxml, undecodable_name, with_members, write_file, zip_bomb,
                           zip_bytes)

# A build's own growth is below it (docs/RELIABILITY.md lists the measured peaks); an expanded zip bomb passes it
PEAK_LIMIT_MB = 1200

NOT_APPLICABLE = {
    "truncated and corrupt images (decoded)": "images are hashed and typed by magika, never decoded "
                                              "(a PNG bomb and a truncated PNG are kept as files, covered)",
}


def corpus(work: Path, fixtures: Path) -> Corpus:
    root = work / "release"
    return Corpus(root, write_workspace_bench(root, fixtures))


def refusals(root: Path) -> list[tuple[Case, object]]:
    from tests.builds import build_dataset

    def run(path: Path):
        return lambda out: build_dataset("workspace_bench", path, out)

    return [(case, run(path)) for case, path, _ in refusals_workspace_bench(root)]


def other_cases(root: Path, fixtures: Path, build: CorpusBuild) -> list[Case]:
    return write_workspace_website(root / "website", fixtures)


def evaluator_cases(root: Path, fixtures: Path) -> list[tuple[Case, object]]:
    return workspace_judge_cases(root)


def _office_file(kind: str) -> bytes:
    """A small real .docx / .xlsx written by the library made for it."""
    buf = io.BytesIO()
    if kind == "docx":
        import docx

        d = docx.Document()
        d.add_paragraph("Quarterly numbers: see data.csv")
        d.save(buf)
    else:
        import openpyxl

        wb = openpyxl.Workbook()
        wb.active["A1"] = "region"
        wb.save(buf)
    return buf.getvalue()


def write_workspace_bench(root: Path, fixtures: Path) -> list[Case]:
    """The runner's layout: the real release's first tasks as ``tasks/<id>/metadata.json`` (their
    manifests and graphs cut to files written here), hostile task records beside them, and hostile
    workspace files in one task's folder."""
    real = json.loads((fixtures / "workspace_bench" / "tasks_head.json").read_text())["full"]
    cases: list[Case] = []

    def add(fmt, name, locator, reason, unit, outcome=QUARANTINED):
        cases.append(Case("workspace_bench", fmt, name, locator, reason, unit, outcome))

    def task(aid: int, change=None, text: str | None = None) -> str:
        record = dict(real[(aid - 1) % len(real)], absolute_id=aid, id=str(aid), file_system=None)
        record.pop("file_system")
        record.update(data_manifest=[{"filename": n, "stored_relpath": f"data/{n}"} for n in ("a.csv", "b.md", "c.txt")],
                      file_count=3, file_dep_graph=[{"from": "a.csv", "to": "b.md"}, {"from": "b.md", "to": "c.txt"}])
        record["file_system"] = "kaifa"
        if change:
            change(record)
        folder = root / "tasks" / str(aid)
        (folder / "data").mkdir(parents=True, exist_ok=True)
        for n, data in (("a.csv", "x,y\n1,2\n"), ("b.md", "see [a](a.csv)\n"), ("c.txt", "plain\n")):
            (folder / "data" / n).write_text(data)
        (folder / "metadata.json").write_text(text if text is not None else json.dumps(record, indent=1))
        return f"tasks/{aid}/metadata.json"

    for aid in range(1, 6):
        task(aid)
    meta = "task record (metadata.json)"
    add(meta, "truncated JSON", task(11, text='{"id": "11", "persona": '), "not JSON", "task")
    add(meta, "wrong JSON type: a list", task(12, text="[1, 2]"), "expected a JSON object", "task")
    add(meta, "wrong JSON type: persona is a number", task(13, lambda r: r.update(persona=5)), "unknown persona", "task")
    add(meta, "wrong JSON type: rubrics is a string", task(14, lambda r: r.update(rubrics="all of them")),
        "expected a list of strings", "task")
    add(meta, "NaN file_count", task(15, lambda r: r.update(file_count=float("nan"))), "file_count nan", "task")
    add(meta, "huge value: a 5000-digit file_count", task(16, text=json.dumps(dict(
        real[0], id="16", absolute_id=16, file_system="kaifa", file_count="HUGE")).replace('"HUGE"', huge_integer())),
        "not JSON", "task")
    add(meta, "duplicate key", task(17, text='{"id": "17", "id": "18"}'), "duplicate key 'id'", "task")
    add(meta, "id differs from its folder", task(18, lambda r: r.update(id="19", absolute_id=19)),
        "is not the folder's name", "task")
    add(meta, "a manifest listing one file twice", task(26, lambda r: r["data_manifest"].append(
        dict(r["data_manifest"][0])) or r.update(file_count=4)), "a manifest lists a file once", "task")
    add(meta, "100,000-deep nesting", task(27, text=DEEP), TOO_DEEP, "task")
    add(meta, "huge value: an absolute_id of 10^19 (past the declared int64)", task(10 ** 19),
        "does not fit the column's int64", "task")
    add(meta, "a lone surrogate (\\ud800) escaped in a rubric (repaired to U+FFFD, counted)",
        task(28, lambda r: r["rubrics"].__setitem__(0, r["rubrics"][0] + " \ud800")), "", "task", KEPT)
    task(21, lambda r: r["data_manifest"].append({"filename": "passwd", "stored_relpath": "../../../../etc/passwd"})
         or r.update(file_count=4))
    add(meta, "path traversal in the manifest", "tasks/21/metadata.json#data_manifest[3]", "no data file", "data_file")
    task(22, lambda r: r["data_manifest"].append({"filename": "hostname", "stored_relpath": "/etc/hostname"})
         or r.update(file_count=4))
    add(meta, "absolute path in the manifest", "tasks/22/metadata.json#data_manifest[3]", "no data file", "data_file")
    graph = "dependency graph (file_dep_graph)"
    task(23, lambda r: r["file_dep_graph"].append({"from": "c.txt", "to": "a.csv"}))
    add(graph, "a cycle", "tasks/23/metadata.json", "", "task", KEPT)
    names = [f"n{i:02d}.txt" for i in range(12)]   # every ordered pair: cycles beyond counting
    task(24, lambda r: r.update(data_manifest=[{"filename": n, "stored_relpath": f"data/{n}"} for n in names],
                                file_count=len(names),
                                file_dep_graph=[{"from": a, "to": b} for a in names for b in names if a != b]))
    for n in names:
        (root / "tasks" / "24" / "data" / n).write_text(n)
    add(graph, "a complete graph on 12 files (simple cycles beyond counting)", "tasks/24/metadata.json", "", "task", KEPT)
    task(25, lambda r: r["file_dep_graph"].extend([{"from": "a.csv", "to": "../../etc/passwd"}, {"from": 3, "to": None}]))
    add(graph, "an edge to a path outside the task", "tasks/25/metadata.json#file_dep_graph[2]",
        "neither a manifest file nor a declared output", "task_edge")
    add(graph, "wrong JSON type: an edge of numbers", "tasks/25/metadata.json#file_dep_graph[3]",
        "an edge must be {from, to}", "task_edge")

    # data file names that break naive tools (whitespace splitting, quoting, option parsing, byte counts), named by
    # a task's manifest and graph: published, the task's manifest resolved to them and its graph read back through
    # the loader (test_hostile_inputs)
    task(29, lambda r: r.update(data_manifest=[{"filename": n, "stored_relpath": f"data/{n}"} for n in WS_HOSTILE_FILE_NAMES],
                                file_count=len(WS_HOSTILE_FILE_NAMES),
                                file_dep_graph=[{"from": a, "to": b} for a, b in zip(WS_HOSTILE_FILE_NAMES,
                                                                                      WS_HOSTILE_FILE_NAMES[1:])]))
    for n in WS_HOSTILE_FILE_NAMES:
        (root / "tasks" / "29" / "data" / n).write_text(f"{n}\n")
        add("folder entry", f"file name {n[:40]!r}{'...' if len(n) > 40 else ''} named by the manifest",
            f"tasks/29/data/{n}", "", "file", KEPT)

    # workspace files of each format, in task 5's folder
    ws = root / "tasks" / "5" / "data"
    docx_bytes, xlsx_bytes = _office_file("docx"), _office_file("xlsx")

    def wfile(name, data, fmt, what, reason, unit="file", outcome=QUARANTINED):
        (ws / name).write_bytes(data)
        add(fmt, what, f"tasks/5/data/{name}", reason, unit, outcome)

    wfile("bomb.zip", zip_bomb(), "zip archive", "zip bomb (320 MiB of zeros)", "zip bomb")
    wfile("many.zip", zip_bytes({f"m{i:05d}.txt": b"" for i in range(10_001)}), "zip archive", "10001 members",
          "10001 members")
    wfile("traversal.zip", zip_bytes({"../../evil.txt": b"x"}), "zip archive", "a member path leaving the archive",
          "", "file", KEPT)
    wfile("bomb.docx", zip_bomb(), "Office file (.docx, .xlsx)", "zip bomb named .docx", "zip bomb")
    wfile("not_a_zip.docx", b"%PDF-1.4 definitely not a docx", "Office file (.docx, .xlsx)", "not-a-zip .docx",
          "docx does not parse: unreadable zip archive", "file_references")
    wfile("encrypted.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 4000, "Office file (.docx, .xlsx)",
          "encrypted (an OLE container)", "", "file", KEPT)
    wfile("macro.docm", with_members(docx_bytes, {"word/vbaProject.bin": b'Attribute VB_Name = "evil"'}),
          "Office file (.docx, .xlsx)", "macro-enabled", "", "file", KEPT)
    wfile("strict.docx", strict_ooxml(docx_bytes), "Office file (.docx, .xlsx)", "Strict OOXML namespaces", "",
          "file", KEPT)
    wfile("entities.docx", with_members(docx_bytes, {"word/document.xml": BILLION_LAUGHS}), "Office file (.docx, .xlsx)",
          "billion laughs in document.xml", "", "file", KEPT)  # references come from the .rels parts
    wfile("truncated.xlsx", xlsx_bytes[: len(xlsx_bytes) // 2], "Office file (.docx, .xlsx)", "truncated .xlsx",
          "unreadable zip archive", "file")
    wfile("laughs.xml", BILLION_LAUGHS, "XML / SVG", "billion laughs", "", "file", KEPT)
    wfile("xxe.svg", EXTERNAL_ENTITY.replace(b"<d>&x;</d>", b'<svg xmlns="http://www.w3.org/2000/svg">&x;</svg>')
          .replace(b"DOCTYPE d", b"DOCTYPE svg"), "XML / SVG", "external entity (file:///etc/passwd)",
          "svg does not parse: doctype", "file_references")
    wfile("bomb.yaml", YAML_BOMB.encode(), "YAML / JSON", "YAML alias bomb", "", "file", KEPT)
    wfile("nan.json", b'{"value": NaN, "big": ' + huge_integer().encode() + b"}", "YAML / JSON",
          "NaN and a 5000-digit integer", "json does not parse", "file_references")
    wfile("deep.json", b'{"input": "a.csv", "rows": [{"name": "alpha", "value": 1}, {"name": "beta", "value": 2}],\n'
          b' "deep": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n", "YAML / JSON", "100,000-deep nesting (JSON)",
          "nested too deeply", "file_references")
    wfile("repeated.json", b'{"input": "a.csv", "input": "b.md"}', "YAML / JSON",
          "a repeated key (every value read for references, none lost)", "", "file", KEPT)
    wfile("corrupt.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n%%EOF", "PDF", "corrupt",
          "pdf does not parse", "file_references")
    wfile("bomb.png", png_bomb(20000, 20000), "image", "decompression bomb PNG", "", "file", KEPT)
    wfile("truncated.png", png_bomb(20, 20)[:30], "image", "truncated PNG", "", "file", KEPT)
    outside = root.parent / "secret.txt"
    outside.write_text("outside the workspace\n")
    (ws / "escape.txt").symlink_to(outside)
    add("folder entry", "symlink escape", "tasks/5/data/escape.txt", "outside the workspace", "file")
    (ws / "loop").symlink_to(ws / "loop")
    add("folder entry", "symlink loop", "tasks/5/data/loop", "symlink loop", "file")
    os.mkfifo(ws / "pipe")
    add("folder entry", "unreadable (a fifo)", "tasks/5/data/pipe", "fifo", "file")
    undecodable_name(ws, b"bad\xffname.txt")
    add("folder entry", "undecodable file name", "tasks/5/data/bad\\xffname.txt", "UTF-8", "file")
    # strings a file escapes as a lone surrogate: the file is kept, the string repaired (U+FFFD)
    wfile("surrogate.json", b'{"input": "\\udcff.csv", "data": "a.csv"}', "YAML / JSON",
          "a lone surrogate (\\udcff) escaped in a string", "", "file", KEPT)
    wfile("surrogate.py", b'import pathlib\n\npath = pathlib.Path("\\udcff")  # click\'s own test\n',
          "Python / notebook", "a lone surrogate in a string literal", "", "file", KEPT)
    cell = {"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
            "source": 'name = "\udcff"\nopen("a.csv")\n'}
    wfile("surrogate.ipynb", json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode(),
          "Python / notebook", "a lone surrogate escaped in a notebook cell", "", "file", KEPT)
    # a tasks/ folder that is not a task (named by no id): quarantined, never read as one
    (root / "tasks" / "build").mkdir(parents=True)
    (root / "tasks" / "build" / "log.txt").write_text("not a task\n")
    add("source layout", "a tasks/ folder whose name is not a task id", "tasks/build", "not a task folder", "task")
    # a task folder, or its metadata.json, symlinked out of the source: not read (nor its workspace scanned)
    task(41)
    shutil.move(root / "tasks" / "41", root.parent / "outside_task_41")
    (root / "tasks" / "41").symlink_to(root.parent / "outside_task_41", target_is_directory=True)
    add("source layout", "a task folder symlinked out of the source", "tasks/41",
        "the task folder is reached through a symlink to a place outside the source", "task")
    task(42)
    shutil.move(root / "tasks" / "42" / "metadata.json", root.parent / "outside_metadata_42.json")
    (root / "tasks" / "42" / "metadata.json").symlink_to(root.parent / "outside_metadata_42.json")
    add("task record (metadata.json)", "symlinked out of the source", "tasks/42",
        "its metadata.json is reached through a symlink to a place outside the source", "task")
    # the runner's Lite list is its tasks_lite/<id>/ folders (copies of the full tasks' folders)
    for aid in (1, 11):
        shutil.copytree(root / "tasks" / str(aid), root / "tasks_lite" / str(aid))
    add("Lite folders (tasks_lite/)", "the Lite copy of a quarantined task", "tasks_lite/11",
        "Lite task 11 is quarantined", "lite_task")
    return cases


# Data file names a file system takes that tools trip on (see HOSTILE_FOLDER_NAMES), the last 255 bytes of UTF-8
WS_HOSTILE_FILE_NAMES = ("data with spaces.csv", "tab\tand\nnewline.md", "-leading 'single' \"double\".txt",
                         "..dots...txt", "ünïcødé 名前 %20.csv", "long_" + "é" * 123 + ".txt")


def write_workspace_website(root: Path, fixtures: Path) -> list[Case]:
    """The website release (``tasks.json``): three real tasks and bad elements of its ``full`` list; its
    Lite list (``tasks-lite.js``, the real file's shape) with two real tasks and bad entries."""
    real = json.loads((fixtures / "workspace_bench" / "tasks_head.json").read_text())["full"][:3]
    bad = [[1, 2], dict(real[0], absolute_id="seven"), dict(real[1]), dict(real[2], absolute_id=30, persona=None),
           dict(real[2], absolute_id=31, task=real[2]["task"] + " \udcff"),  # json.dumps escapes it: "\\udcff"
           dict(real[2], absolute_id=10 ** 19), dict(real[2], absolute_id=33, deep=functools.reduce(
               lambda inner, _: [inner], range(150), 0)),
           dict(real[2], absolute_id=32, rubrics=[r + " \ud800" for r in real[2]["rubrics"]])]
    root.mkdir(parents=True)
    (root / "tasks.json").write_text(json.dumps({"full": real + bad}))
    lite = [real[0], "3", dict(real[1], absolute_id="two"), real[0], dict(real[2], absolute_id=999),
            dict(real[2], absolute_id=30), real[2]]
    (root / "tasks-lite.js").write_text("window.WORKSPACE_BENCH_LITE_TASKS = " + json.dumps(lite, indent=2) + ";\n")
    fmt, lite_fmt = "task list (tasks.json)", "Lite list (tasks-lite.js)"
    return [Case("workspace_bench", lite_fmt, "wrong JSON type: an entry is a string", "tasks-lite.js#[1]",
                 "must be a JSON object", "lite_task"),
            Case("workspace_bench", lite_fmt, "wrong JSON type: absolute_id is a word", "tasks-lite.js#[2]",
                 "not an integer", "lite_task"),
            Case("workspace_bench", lite_fmt, "duplicate entry", f"tasks-lite.js#absolute_id={real[0]['absolute_id']}",
                 "duplicate absolute_id", "lite_task"),
            Case("workspace_bench", lite_fmt, "an entry naming a task the source does not have",
                 "tasks-lite.js#absolute_id=999", "which the source does not have", "lite_task"),
            Case("workspace_bench", lite_fmt, "an entry naming a quarantined task", "tasks-lite.js#absolute_id=30",
                 "Lite task 30 is quarantined", "lite_task"),
            Case("workspace_bench", fmt, "wrong JSON type: a task is a list", "tasks.json#[3]", "must be a JSON object",
                 "task"),
            Case("workspace_bench", fmt, "wrong JSON type: absolute_id is a word", "tasks.json#[4]",
                 "not an integer", "task"),
            Case("workspace_bench", fmt, "duplicate absolute_id", f"tasks.json#absolute_id={real[1]['absolute_id']}",
                 "duplicate absolute_id", "task"),
            Case("workspace_bench", fmt, "null persona", "tasks.json#absolute_id=30", "unknown persona None", "task"),
            Case("workspace_bench", fmt, "a lone surrogate (\\udcff) escaped in the instruction",
                 "tasks.json#absolute_id=31", "", "task", KEPT),
            Case("workspace_bench", fmt, "huge value: an absolute_id of 10^19 (past the declared int64)",
                 f"tasks.json#absolute_id={10 ** 19}", "does not fit the column's int64", "task"),
            Case("workspace_bench", fmt, "a task nested 150 levels deep (past what json.dumps follows)",
                 f"tasks.json#[{len(real) + 6}]", "nested more than 100 levels deep", "task"),
            Case("workspace_bench", fmt, "lone surrogates (\\ud800) escaped in the rubrics",
                 "tasks.json#absolute_id=32", "", "task", KEPT)]


def refusals_workspace_bench(root: Path) -> list[tuple[Case, Path, list]]:
    out = []
    fmt = "task list (tasks.json)"
    for name, files, reason, locator in (
            ("truncated JSON", {"tasks.json": '{"full": [{"absolute_id": 1, '}, "not JSON", "tasks.json"),
            ("wrong JSON type: full is an object", {"tasks.json": '{"full": {}}'}, "'full' list", "tasks.json"),
            ("huge value: a 5000-digit id", {"tasks.json": '{"full": [{"absolute_id": %s}]}' % huge_integer()},
             "not JSON", "tasks.json"),
            ("duplicate key", {"tasks.json": '{"full": [], "full": []}'}, "duplicate key 'full'", "tasks.json"),
            ("100,000-deep nesting", {"tasks.json": '{"full": ' + "[" * 100_000 + "]" * 100_000 + "}"},
             TOO_DEEP, "tasks.json"),
            ("Lite list: 100,000-deep nesting", {
                "tasks.json": '{"full": []}',
                "tasks-lite.js": "window.WORKSPACE_BENCH_LITE_TASKS = " + "[" * 100_000 + "]" * 100_000 + ";"},
             TOO_DEEP, "tasks-lite.js"),
            ("not UTF-8", {"tasks.json": b'{"full": ["\xff"]}'}, "unreadable", "tasks.json"),
            ("Lite list: code after the array", {"tasks.json": '{"full": []}',
                                                 "tasks-lite.js": "window.WORKSPACE_BENCH_LITE_TASKS = [];alert(1)"},
             "unexpected code after the task array", "tasks-lite.js"),
            ("Lite list: huge value (a 5000-digit id)", {
                "tasks.json": '{"full": []}',
                "tasks-lite.js": "window.WORKSPACE_BENCH_LITE_TASKS = [{\"absolute_id\": %s}];" % huge_integer()},
             "Exceeds the limit", "tasks-lite.js"),
            ("Lite list: duplicate key", {
                "tasks.json": '{"full": []}',
                "tasks-lite.js": 'window.WORKSPACE_BENCH_LITE_TASKS = [{"absolute_id": 1, "absolute_id": 2}];'},
             "duplicate key 'absolute_id'", "tasks-lite.js")):
        folder = root / f"refused_{len(out):02d}"
        folder.mkdir(parents=True)
        for rel, data in files.items():
            (folder / rel).write_bytes(data if isinstance(data, bytes) else data.encode())
        out.append((Case("workspace_bench", fmt if "Lite" not in name else "Lite list (tasks-lite.js)", name, locator,
                         reason, outcome=REFUSED), folder, []))
    folder = root / f"refused_{len(out):02d}"  # the task list itself symlinked in from outside the source
    folder.mkdir(parents=True)
    (root / "outside_tasks.json").write_text('{"full": []}')
    (folder / "tasks.json").symlink_to(root / "outside_tasks.json")
    out.append((Case("workspace_bench", fmt, "symlinked out of the source", "tasks.json",
                     "is reached through a symlink to a place outside the source", outcome=REFUSED), folder, []))
    return out



def workspace_judge_cases(root: Path) -> list[tuple[Case, object]]:
    """Judge files of one run; each bad one beside a good case, so the run is scored without it."""
    from benchwright.evaluation import workspace_bench as ev

    good = {"rubrics": [{"index": 0, "passed": True}, {"index": 1, "passed": "no"}]}
    out = []

    def case(name, reason, text, locator_tail=""):
        run = root / f"{len(out):02d}" / "Agent--model--run1"
        write_file(run / "1" / "rubrics_judge--j.json", json.dumps(good))
        write_file(run / "2" / "rubrics_judge--j.json", text)

        def run_it():
            report = ev.evaluate(run.parent)["runs"][run.name]
            assert (report["rubrics_total"], report["tasks_scored"]) == (2, 1), report  # the good case alone
            return [u["error"] for u in report["unreadable_judge_file"]]

        out.append((Case("workspace_bench", "judge file (evaluator input)", name,
                         f"2/rubrics_judge--j.json{locator_tail}", reason), run_it))

    def items(*values, key="passed"):
        return json.dumps({"rubrics": [{"index": i, key: v} for i, v in enumerate(values)]}).replace('"NAN"', "NaN")

    case("passed: NaN (bool(nan) is a pass)", "'passed' must be a boolean, a string, null, 0 or 1, got nan",
         items(True, "NAN"), "#rubrics[1]")
    case("passed: 2", "'passed' must be a boolean, a string, null, 0 or 1, got 2", items(2), "#rubrics[0]")
    case("passed: a list", "'passed' must be a boolean, a string, null, 0 or 1, got [True]", items([True]),
         "#rubrics[0]")
    case("originalPassed: NaN", "'originalPassed' must be", items("NAN", key="originalPassed"), "#rubrics[0]")
    case("a rubric index given twice", "rubric index 0 given twice (first at rubrics[0])",
         json.dumps({"rubrics": [{"index": 0, "passed": False}, {"index": "0", "passed": True}]}), "#rubrics[1]")
    case("a repeated key", "duplicate key 'passed'", '{"rubrics": [{"index": 0, "passed": false, "passed": true}]}',
         ":1")
    case("a rubric item that is not an object", "a rubric item must be an object, got 'x' (a string)",
         json.dumps({"rubrics": [{"index": 0, "passed": True}, "x"]}), "#rubrics[1]")
    case("100,000-deep nesting", "nested deeper than the JSON decoder can follow",
         '{"rubrics": ' + "[" * 100_000 + "]" * 100_000 + "}", ":1")
    case("a Latin-1 byte", "not UTF-8: byte 0xe9", b'{"rubrics": [{"index": 0, "evidence": "caf\xe9"}]}', ":1")
    case("a number of 5,000 digits", "a number of 5,000 digits",
         '{"rubrics": [{"index": ' + huge_integer() + ', "passed": true}]}', ":1")
    case("no rubric list", "no rubric list", '{"summary": {"total": 3}}')
    case("cut JSON", "not valid JSON", '{"rubrics": [{"index": 0, "pass', ":1")
    return out




# --------------------------------------------------------------------------- checks


def _published(built: Path, config: str) -> list[dict]:
    import pyarrow.parquet as pq

    return [r for f in sorted((built / config).glob("full-*.parquet")) for r in pq.read_table(f).to_pylist()]


def check_counts_and_what_is_published(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    built, cases = build.built, build.cases
    assert len(cases) >= 30
    units = reconciled_units(built)
    assert units["task"]["quarantined"] == sum(c.unit == "task" and c.outcome == QUARANTINED for c in cases)
    assert units["file"]["quarantined"] == sum(c.unit == "file" and c.outcome == QUARANTINED for c in cases)
    assert units["lite_task"] == {"read": 2, "written": 1, "quarantined": 1, "filtered": 0, "bad_fraction": 0.5}
    # kept: the file's row is published (hashed and typed, never executed or expanded); a cyclic graph's task too
    files = {f"{r['workspace']}/{r['path']}" for r in _published(built, "files")}
    tasks = {r["task_id"]: r for r in _published(built, "tasks")}
    for case in cases:
        if case.outcome == KEPT and case.unit == "file":
            assert case.locator in files, case
    assert tasks["23"]["graph_cycles"] == 1 and tasks["23"]["graph_depth"] == -1
    assert tasks["24"]["graph_cycles"] == 1000 and tasks["24"]["graph_edges"] == 132  # counted up to the bound
    assert "outside the workspace" not in "".join(r["text_excerpt"] for r in _published(built, "files"))


def check_hostile_file_names_read_back_through_the_loader(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    """Data files named with a space, a tab and a newline, quotes and a leading dash, dots, non-ASCII and 255
    bytes, named by a task's manifest and dependency graph: each published once under its name, the manifest
    resolved to them (no "no data file" row), the graph's edges kept, and the loader's
    ``task_dependency_files`` and ``readable_files`` give the names back as they are."""
    from benchwright.loaders.workspace_bench import readable_files, task_dependency_files

    built = build.built
    names = set(WS_HOSTILE_FILE_NAMES)
    assert not [r for r in quarantine_rows(built) if r["locator"].startswith("tasks/29/")]
    task = next(r for r in _published(built, "tasks") if r["task_id"] == "29")
    assert task["file_count"] == len(names) and {m["filename"] for m in task["data_manifest"]} == names
    assert task["manifest_bytes"] == sum(len(f"{n}\n".encode()) for n in names)
    edges = [r for r in _published(built, "task_edges") if r["task_id"] == "29"]
    assert len(edges) == len(names) - 1 and {e["src_kind"] for e in edges} == {"manifest"}
    assert task_dependency_files(built)["29"] == names
    paths = [f["path"] for f in readable_files(built) if f["task_id"] == "29"]
    assert all(paths.count(f"data/{n}") == 1 for n in names), paths


def check_bad_task_list_elements_are_quarantined_not_fatal(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    """A second build: the website release's task lists."""
    import pyarrow.parquet as pq

    from benchwright.layout import MANIFEST
    from tests.builds import build_dataset

    cases = write_workspace_website(tmp_path / "website", fixtures)
    built = build_dataset("workspace_bench", tmp_path / "website", tmp_path / "out", max_bad_fraction=1.0)
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
