"""Hostile input to every evaluator (issue 25, items 3 and 6): the corpus's evaluator cases
(each dataset's hook in ``tests/hostile/``: predictions, KITTI result folders, judge files, case folders), and property
tests over damaged prediction files per evaluator. Whatever the file holds, an evaluator gives a
metric (with a warning when it says little) or an error of the project's naming the file and the
record or line, in under 1 KB: never a traceback, never a value it guessed."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchwright import fields, strict_json
from benchwright.errors import BenchwrightError, RecordError, SourceError
from tests import hostile

MESSAGE_LIMIT = 1024
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def wordeval_case():
    from tests.hostile.wordeval import good_case

    return good_case()


def outcome_problem(case: hostile.Case, run) -> str | None:
    """What is wrong with how the evaluator met ``case`` (None: as the case says)."""
    try:
        said = run()
    except BenchwrightError as err:
        text = str(err)
        if case.outcome != hostile.REFUSED:
            return f"refused: {text[:300]}"
        if case.locator not in text or case.reason not in text:
            return f"refused with another message: {text[:300]}"
        if len(text) > MESSAGE_LIMIT:
            return f"a message of {len(text):,} characters"
        return None
    if case.outcome == hostile.REFUSED:
        return f"accepted (said {said})"
    # kept: scored, with a warning; quarantined: left out, listed with its file and reason
    matching = [m for m in said if case.reason in m and (case.outcome == hostile.KEPT or case.locator in m)]
    return None if matching else f"{case.outcome} without a message holding the reason: {said}"


def test_every_evaluator_case_meets_its_outcome(tmp_path, fixtures_dir):
    cases = hostile.evaluator_cases(tmp_path, fixtures_dir)
    assert len(cases) >= 50
    problems = [f"{case.dataset} / {case.format} / {case.name}: {why}"
                for case, run in cases if (why := outcome_problem(case, run)) is not None]
    assert not problems, "\n".join(problems)


def test_wildbox_cli_prints_the_warning_and_names_the_refused_entry(tmp_path, kitti_dir, capsys):
    from benchwright.evaluation import wildbox as ev

    empty = tmp_path / "empty"
    empty.mkdir()
    assert ev.run_cli(["--gt", str(kitti_dir), "--pred", str(empty)]) == 0
    assert "warning: no detections for the 6 frame(s) of label_2: every AP is 0" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "000000.txt").write_text("Car 0 0 0 1 1 50 50 1.5 1.6 4 0 1.5 10 0 true\n")
    assert ev.run_cli(["--gt", str(kitti_dir), "--pred", str(bad)]) == 2
    assert capsys.readouterr().err == "error: bad/000000.txt:1: score is not a number: 'true'\n"


# --------------------------------------------------------------------------- the core readers


def test_strict_json_names_where_each_failure_is():
    with pytest.raises(ValueError, match=r"^duplicate key 'c' .* in the object at line 2 column 7$"):
        strict_json.loads('{"a": 1,\n "b": {"c": 2, "c": 3}}')
    with pytest.raises(ValueError, match=r"^nested deeper than the JSON decoder can follow \(depth 256 passed at "
                                         r"line 2 column 262\)$"):  # the brackets in the string do not count
        strict_json.loads('{"a": "[[[",\n "b": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ValueError, match=r"^a number of 5,000 digits at line 1 column 7 \(more than Python converts"):
        strict_json.loads('{"s": ' + "9" * 5000 + "}")
    assert strict_json.loads(b'{"a": [1, 2]}') == {"a": [1, 2]}


def test_strict_json_read_and_utf8_decode_name_the_file_and_line(tmp_path):
    path = tmp_path / "x.json"
    path.write_bytes(b'[1,\n "caf\xe9"]')
    with pytest.raises(RecordError, match=r"^x.json:2: not UTF-8: byte 0xe9 at column 6 \(invalid continuation byte\)$"):
        strict_json.read(path, "x.json")
    path.write_bytes(b"[1,\n 2")
    with pytest.raises(RecordError, match=r"^x.json:2: not valid JSON: Expecting ',' delimiter \(column 3\)$"):
        strict_json.read(path, "x.json")
    with pytest.raises(SourceError, match=r"^missing.json: cannot read: No such file or directory$"):
        strict_json.read(tmp_path / "missing.json", "missing.json")


@pytest.mark.parametrize("value, check, message", [
    ("0.5", lambda v: fields.number(v, "score", "f#1"), "f#1: 'score' must be a number, got '0.5' (a string)"),
    (True, lambda v: fields.number(v, "score", "f#1"), "f#1: 'score' must be a number, got True (a boolean)"),
    (math.nan, lambda v: fields.number(v, "score", "f#1"), "f#1: 'score' must be finite, got nan"),
    (10 ** 400, lambda v: fields.number(v, "s", "f"), "f: 's' an integer of 401 digits is too large for a double"),
    (2 ** 63, lambda v: fields.integer(v, "image_id", "f"), "f: 'image_id' 9223372036854775808 is outside int64"),
    (1.0, lambda v: fields.integer(v, "id", "f"), "f: 'id' must be an integer, got 1.0"),
    ("x" * 10 ** 6, lambda v: fields.integer(v, "id", "f"), "f: 'id' must be an integer, got 'xxxxxxxxxxxxxxxxxxxxxxx"
                                                              "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (1,000,000 "
                                                              "characters) (a string)"),
    ([[1, 2]], lambda v: fields.numbers(v, (2, 2), "R", "f"), "f: 'R' must be a list of shape [2, 2], got 1 items"),
])
def test_typed_fields_refuse_what_numpy_would_take(value, check, message):
    with pytest.raises(RecordError) as err:
        check(value)
    assert str(err.value) == message
    assert len(str(err.value)) < 200


def test_number_column_takes_only_numbers_of_the_shape():
    assert fields.number_column([[1, 2.5], [3, 4]], (2,)).tolist() == [[1.0, 2.5], [3.0, 4.0]]
    for bad in ([[1, "2"], [3, 4]], [[1, True], [3, 4]], [[1, 2], [3]], [[1, 2], [3, math.inf]], [[1, 10 ** 400], [1, 2]],
                [1, 2], [{"a": 1, "b": 2}, [1, 2]]):
        assert fields.number_column(bad, (2,)) is None, bad
    assert fields.integer(1000.0, "id", "f", integral_float=True) == 1000


# --------------------------------------------------------------------------- property tests, per evaluator

HOSTILE_VALUES = st.sampled_from([
    "0.5", "", "x" * 5000, True, False, None, math.nan, math.inf, -math.inf, 2 ** 70, -(2 ** 70), 10 ** 400, 1e308,
    -1, 0, 1.5, [], {}, [1], {"a": 1}, [[[]]], "\udcff", "../x"])
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                      max_size=3), max_leaves=8)


def _hostile_text(doc, data) -> bytes:
    """A JSON document damaged as a hostile file would be: a value, a repeated key, deep nesting, a byte
    that is not UTF-8, cut short."""
    text = json.dumps(hostile.damage_json(doc, data, HOSTILE_VALUES | JSON_VALUES, max_depth=5),
                      ensure_ascii=data.draw(st.booleans()))
    how = data.draw(st.sampled_from(["value", "value", "repeat", "deep", "latin1", "cut"]))
    if how == "repeat" and '": ' in text:
        at = text.index('": ') + 3
        key_start = text.rindex('"', 0, at - 3)
        text = text[:at] + text[at:].split(",", 1)[0].split("}", 1)[0] + ", " + text[key_start:at] + text[at:]
    elif how == "deep":
        depth = data.draw(st.sampled_from([300, 5000, 100_000]))
        text = text.replace("[", "[" + "[" * depth + "]" * depth + ", ", 1) if "[" in text else "[" * depth + "]" * depth
    elif how == "cut":
        text = text[: data.draw(st.integers(0, len(text)))]
    raw = text.encode("utf-8", "surrogatepass")
    if how == "latin1":
        at = data.draw(st.integers(0, len(raw)))
        raw = raw[:at] + b"\xe9" + raw[at:]
    return raw


def _assert_named(err: BenchwrightError, *names: str) -> None:
    text = str(err)
    assert any(n in text for n in names), text[:500]
    assert len(text) <= MESSAGE_LIMIT, f"{len(text):,} characters: {text[:300]}"


@pytest.fixture(scope="module")
def wildbox_gt():
    from benchwright.benchmarks.wildbox_eval import jitter_predictions, synth_ground_truth

    gt = synth_ground_truth(10, seed=2)
    image_ids = gt.pop("image_ids")
    p = jitter_predictions(gt, 0.2, seed=4)
    doc = {}
    for k in range(len(p["score"])):
        x1, y1, x2, y2 = (float(v) for v in p["bbox"][k])
        doc.setdefault(int(p["image_id"][k]), []).append({
            "bbox": [x1, y1, x2 - x1, y2 - y1], "score": float(p["score"][k]), "category_id": int(p["category_id"][k]),
            "center_cam": p["center_cam"][k].tolist(), "dimensions": p["dimensions"][k].tolist(),
            "pose": p["pose"][k].tolist()})
    return gt, image_ids, [{"image_id": i, "instances": v} for i, v in sorted(doc.items())]


@SETTINGS
@given(data=st.data())
def test_wildbox_json_predictions_give_metrics_or_a_named_error(tmp_path_factory, wildbox_gt, data):
    from benchwright.evaluation import wildbox as ev

    gt, image_ids, doc = wildbox_gt
    path = tmp_path_factory.mktemp("wb") / "preds.json"
    path.write_bytes(_hostile_text(doc, data))
    try:
        metrics = ev.evaluate(gt, ev.load_predictions(path), image_ids=image_ids)
    except BenchwrightError as err:
        _assert_named(err, str(path))
        return
    json.dumps(metrics, allow_nan=False)  # every value a number or null
    assert 0.0 <= metrics["ap3d"]["macro"] <= 100.0


LINE = "Pedestrian 0.00 0 -0.20 712.40 143.00 810.73 307.92 1.89 0.48 1.20 1.84 1.47 8.41 0.01 0.9"


@SETTINGS
@given(data=st.data(), tokens=st.lists(st.sampled_from(
    ["Car", "DontCare", "Pedestrian", "0", "-1", "1e999", "nan", "true", "0.5", "9" * 400, "\ufeffCar", "Caf\xe9",
     "\t", "\n", "-10", "1e-300"]), max_size=40))
def test_kitti_result_files_give_metrics_or_a_named_error(tmp_path_factory, kitti_dir, data, tokens):
    from benchwright.evaluation import kitti as kitti_eval

    folder = tmp_path_factory.mktemp("kitti") / "results"
    folder.mkdir()
    lines = [LINE] * data.draw(st.integers(0, 3))
    if tokens:
        row = LINE.split()
        for t in tokens[:5]:
            row[data.draw(st.integers(0, len(row) - 1))] = t
        lines.append(" ".join(row + tokens[5:]))
    name = data.draw(st.sampled_from(["000000", "000005", "000042", "abc"]))
    raw = "\n".join(lines).encode("utf-8")
    if data.draw(st.booleans()):
        raw = raw.replace("é".encode(), b"\xe9")
    (folder / f"{name}.txt").write_bytes(raw)
    try:
        result = kitti_eval.evaluate_kitti(kitti_dir / "label_2", folder, kitti_dir / "calib")
    except BenchwrightError as err:
        _assert_named(err, f"results/{name}.txt")
        return
    json.dumps(result, allow_nan=False)
    if result["n_pred"] == 0:
        assert result["warnings"]


@SETTINGS
@given(data=st.data())
def test_workspace_judge_files_are_scored_or_listed_with_a_named_reason(tmp_path_factory, data):
    from benchwright.evaluation import workspace_bench as ev

    run = tmp_path_factory.mktemp("ws") / "Agent--model--run1"
    good = {"rubrics": [{"index": 0, "passed": True, "evidence": "API Error"}, {"index": 1, "passed": "no"}],
            "outputPathRubricAdjustment": {}}
    (run / "1").mkdir(parents=True)
    (run / "1" / "rubrics_judge--j.json").write_bytes(_hostile_text(good, data))
    report = ev.evaluate(run)["runs"][run.name]
    json.dumps(report, allow_nan=False)
    if report["tasks_scored"]:
        task = report["tasks"][0]
        assert 0 <= task["passed"] <= task["total"] <= 2 and report["score"] == task["rate"]
    else:
        (listed,) = report["unreadable_judge_file"]
        assert listed["error"].startswith("1/rubrics_judge--j.json") and len(listed["error"]) <= MESSAGE_LIMIT


@SETTINGS
@given(data=st.data())
def test_wordeval_case_folders_evaluate_or_give_a_named_error(tmp_path_factory, wordeval_case, data):
    from benchwright.evaluation import wordeval as ev
    from benchwright.wordeval.cases import write_case_dir

    folder = write_case_dir(wordeval_case, tmp_path_factory.mktemp("we") / wordeval_case["case_id"])
    meta = json.loads((folder / "case.json").read_text())
    (folder / "case.json").write_bytes(_hostile_text(meta, data))
    try:
        report = ev.evaluate_case(folder, wordeval_case["reference_docx"], isolate=False)
    except BenchwrightError as err:
        _assert_named(err, str(folder))
        return
    assert isinstance(report["passed"], bool)


@SETTINGS
@given(data=st.data())
def test_vlm_answers_give_metrics_or_a_named_error(tmp_path_factory, data):
    from benchwright.evaluation import vlm_unlearning as ev

    rows = [{"example_id": f"e{k}", "view": view, "subset": subset, "response": text}
            for k, (view, subset, text) in enumerate([("multimodal", "forget", "I cannot help."),
                                                      ("text_only", "retain", "Sure, here it is."),
                                                      ("multimodal", "safe_safes", "I'm sorry")])]
    row = data.draw(st.integers(0, 2))
    lines = [json.dumps(r) for r in rows]
    lines[row] = _hostile_text(rows[row], data).decode("utf-8", "surrogateescape")
    path = tmp_path_factory.mktemp("vlm") / "answers.jsonl"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape"))
    try:
        result = ev.evaluate(ev.read_predictions(str(path)))
    except BenchwrightError as err:
        _assert_named(err, f"{path}:{row + 1}")
        return
    json.dumps(result, allow_nan=False)
    assert sum(g["answered"] for g in result["groups"].values()) == sum(1 for line in lines if line.strip())
