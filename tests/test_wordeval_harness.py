"""The WordEval agent harness: the four shipped agents bound the oracle from both sides on a sample of
a tiny build; command agents that time out, run out of memory, exit non-zero or write nothing, an
empty, non-zip, hostile or non-Word file are failed cases with their reason; an interrupted run
resumes without running scored cases again."""
from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from benchwright.baselines.wordeval import read_cases, run_harness
from benchwright.cli import main as cli_main
from benchwright.formats.ooxml import libreoffice
from tests.wordeval_helpers import TEXT_UNITS

TEXT_PAIRS = {"Range.Text"}   # what range_insert_after edits


@pytest.fixture(scope="module")
def built(wordeval_text_build) -> Path:
    return wordeval_text_build


@pytest.fixture(scope="module")
def cases(built) -> list[dict]:
    return read_cases(built)


def _per_unit(cases) -> list[str]:
    """The first atomic case of each unit (the text unit's included)."""
    first = {}
    for c in cases:
        if c["config"] == "atomic":
            first.setdefault(c["unit_id"], c["case_id"])
    return sorted(first.values())


def _linked(cases) -> list[str]:
    """A compositional case and the atomic cases it links to."""
    comp = next(c for c in cases if c["config"] == "compositional")
    return sorted([comp["case_id"], *comp["atomic_case_ids"]])


def _agent(tmp_path: Path, name: str, body: str) -> str:
    script = tmp_path / f"{name}.py"
    script.write_text("import shutil, sys, time, os\n" + body)
    return f"{sys.executable} {script}"


def test_null_and_replay_bound_the_oracle_and_the_summary_says_where(built, cases, tmp_path):
    ids = _linked(cases)
    null = run_harness(built, "null", tmp_path / "null", only=ids, workers=2, progress=False)
    replay = run_harness(built, "replay", tmp_path / "replay", only=ids, workers=2, progress=False)
    assert null["cases"] == replay["cases"] == len(ids) >= 3
    assert (null["passed"], null["pass_rate"]) == (0, 0.0)
    assert (replay["passed"], replay["pass_rate"]) == (len(ids), 1.0)
    assert set(null["per_config"]) == {"atomic", "compositional"}
    assert null["agent_status"] == replay["agent_status"] == {"ok": len(ids)}
    # every agent's process tree was held (a PID namespace where one can be made) and left nothing
    assert sum(null["containment"].values()) == len(ids) and set(null["containment"]) <= {"pid-namespace", "subreaper"}
    assert null["left_running"] == {} and null["seconds"]["agent_cpu_mean"] > 0
    # a failed compositional case names its linked atomic cases that also failed
    comp = [c for c in cases if c["case_id"] in ids and c["config"] == "compositional"]
    assert comp and all(null["compositional_failures"][c["case_id"]]["also_failed"] == c["atomic_case_ids"]
                        for c in comp)
    assert replay["compositional_failures"] == {}
    on_disk = json.loads((tmp_path / "null" / "summary.json").read_text())
    assert {k: on_disk[k] for k in ("cases", "passed", "pass_rate")} == {"cases": len(ids), "passed": 0,
                                                                         "pass_rate": 0.0}
    report = (tmp_path / "null" / "report.md").read_text()
    assert "report.png" in report and (tmp_path / "null" / "report.png").read_bytes()[:4] == b"\x89PNG"
    assert "| Font.Bold | 0 |" in report and "atomic also failed" in report
    record = json.loads((tmp_path / "replay" / "cases" / f"{ids[0]}.json").read_text())
    assert record["agent"]["exit_code"] == 0 and record["agent"]["seconds"] > 0
    assert (tmp_path / "replay" / "outputs" / f"{ids[0]}.docx").read_bytes()[:2] == b"PK"


def test_text_only_fails_exactly_where_formatting_or_structure_is_the_point(built, cases, tmp_path):
    ids = _per_unit(cases) + [next(c["case_id"] for c in cases if c["config"] == "compositional")]
    s = run_harness(built, "text-only", tmp_path / "text", only=ids, workers=2, progress=False)
    by_id = {c["case_id"]: c for c in cases}
    textual = {c for c in ids if set(by_id[c]["properties"]) <= TEXT_PAIRS}
    assert {by_id[c]["unit_id"] for c in textual} == set(TEXT_UNITS.values())
    passed = {c for c in ids if c not in s["failed_cases"]}
    # it passes only cases whose edit is text alone, and passes those
    assert passed and passed <= textual
    kinds = s["failure_kinds_by_object_property"]
    for cid in set(ids) - textual:
        assert cid in s["failed_cases"]
        for pair in by_id[cid]["properties"]:
            assert s["per_object_property"][pair]["passed"] == 0
            assert {"formatting", "structure"} & set(kinds[pair]), pair   # the report names why
    for cid in textual - passed:   # a text case it failed lost formatting or structure
        assert {"formatting", "structure"} & {k for p in by_id[cid]["properties"] for k in kinds.get(p, {})}
    report = (tmp_path / "text" / "report.md").read_text()
    assert "| Font.Bold | 0 |" in report and "| Tables.Add | 0 |" in report and "formatting" in report


@pytest.mark.skipif(not libreoffice.available(), reason="LibreOffice (soffice) is not installed")
def test_libreoffice_resave_fails_without_crashing_and_its_tripped_checks_are_listed(built, cases, tmp_path):
    ids = [c["case_id"] for c in cases if c["config"] == "atomic"][:2]
    s = run_harness(built, "libreoffice", tmp_path / "lo", only=ids, workers=2, progress=False)
    assert s["cases"] == 2 and s["passed"] == 0 and s["agent_status"] == {"ok": 2} and s["rejected"] == {}
    for cid in ids:
        record = json.loads((tmp_path / "lo" / "cases" / f"{cid}.json").read_text())
        checks = {c["name"]: c for c in record["report"]["checks"]}
        assert checks["readable"]["passed"] and record["agent"]["output_bytes"] > 0
        assert not checks["preservation"]["passed"] and checks["preservation"]["n_differences"] > 0
    # the card of the build lists the preservation keys LibreOffice's re-save trips, over every case
    card = (built / "README.md").read_text()
    section = card.split("Preservation checks LibreOffice's re-save trips")[1].split("## ")[0]
    assert f"(of {len(cases)} cases" in section and "`settings/autoHyphenation`" in section


def test_the_card_shows_the_four_baselines_on_every_case(built, cases):
    card = (built / "README.md").read_text()
    n = len(cases)
    assert f"| null | {n} | 0 | 0.0% |" in card
    assert f"| replay | {n} | {n} | 100.0% |" in card
    assert "| text-only |" in card and "`Range.Text`" in card.split("passes at least once:")[1].splitlines()[0]
    assert (built / "_build" / "figures" / "baselines.png").is_file()


def test_limits_and_failures_of_command_agents_are_failed_cases_with_their_reason(built, cases, tmp_path):
    one = [cases[0]["case_id"]]
    agents = {
        "sleeps": (_agent(tmp_path, "sleeps", "time.sleep(60)\n"), "timeout", "timed out after 2 s"),
        "hogs": (_agent(tmp_path, "hogs", "x = bytearray(900 * 2**20)\n"), "memory", "exceeded the memory limit"),
        "exits": (_agent(tmp_path, "exits", "sys.stderr.write('cannot do it\\n'); sys.exit(3)\n"), "exit",
                  "exited with status 3: cannot do it"),
        "writes nothing": (_agent(tmp_path, "silent", "pass\n"), "ok", "missing: no output file"),
    }
    for name, (command, status, reason) in agents.items():
        s = run_harness(built, command, tmp_path / name, only=one, timeout_s=2, memory_mb=400, progress=False)
        record = json.loads((tmp_path / name / "cases" / f"{one[0]}.json").read_text())
        assert s["passed"] == 0 and record["agent"]["status"] == status, (name, record["agent"])
        assert reason in record["reason"], (name, record["reason"])
    # the timed-out agent was killed by the harness, well before its own 60 s
    record = json.loads((tmp_path / "sleeps" / "cases" / f"{one[0]}.json").read_text())
    assert record["agent"]["signal"] == "SIGKILL" and record["agent"]["seconds"] < 30


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_empty_non_zip_hostile_and_non_word_outputs_are_failed_cases_never_a_crash(built, cases, tmp_path):
    import openpyxl

    good = (built / "exports" / "cases" / cases[0]["case_id"] / "input.docx").read_bytes()
    members = {i.filename: zipfile.ZipFile(io.BytesIO(good)).read(i) for i in zipfile.ZipFile(io.BytesIO(good)).infolist()}
    laughs = (b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">'
              b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">]><w:document xmlns:w="http://schemas.openxmlformats.org/'
              b'wordprocessingml/2006/main">&c;</w:document>')
    workbook = io.BytesIO()
    openpyxl.Workbook().save(workbook)
    outputs = {
        "empty": (b"", "empty"),
        "not a zip": (b"%PDF-1.4 not a document", "not_a_zip"),
        "zip bomb": (_zip({"[Content_Types].xml": members["[Content_Types].xml"],
                           "word/document.xml": b"<a>" + b" " * (200 * 2**20) + b"</a>"}), "zip_bomb"),
        "entity expansion": (_zip({**members, "word/document.xml": laughs}), "doctype"),
        "spreadsheet": (workbook.getvalue(), "not_a_docx"),
    }
    chosen = {c["instruction"]: (c["case_id"], name) for c, name in zip(cases, outputs)}
    for instruction, (_, name) in chosen.items():
        (tmp_path / f"{name}.bin").write_bytes(outputs[name][0])
    (tmp_path / "by_instruction.json").write_text(json.dumps({k: str(tmp_path / f"{n}.bin")
                                                              for k, (_, n) in chosen.items()}))
    # one command agent writing the file named for its case's instruction; {output} etc. are where they go
    agent = _agent(tmp_path, "hostile", "import json\nby = json.load(open(sys.argv[3]))\n"
                                        "shutil.copyfile(by[open(sys.argv[1]).read()], sys.argv[2])\n")
    s = run_harness(built, f"{agent} {{instruction}} {{output}} {tmp_path / 'by_instruction.json'}", tmp_path / "run",
                    only=[cid for cid, _ in chosen.values()], progress=False)
    assert s["cases"] == len(outputs) and s["passed"] == 0 and s["agent_status"] == {"ok": len(outputs)}
    for cid, name in chosen.values():
        record = json.loads((tmp_path / "run" / "cases" / f"{cid}.json").read_text())
        assert record["report"]["rejected"].startswith(outputs[name][1]), (name, record["report"]["rejected"])


def test_an_interrupted_run_resumes_without_running_scored_cases_again(built, cases, tmp_path):
    ids = [c["case_id"] for c in cases][:5]
    log = tmp_path / "calls.log"
    agent = _agent(tmp_path, "slow", f"open({str(log)!r}, 'a').write(sys.argv[1] + '\\n')\n"
                                     "time.sleep(1.0)\nshutil.copyfile(sys.argv[1], sys.argv[3])\n")
    run = tmp_path / "run"
    argv = [sys.executable, "-m", "benchwright.cli", "run", "wordeval", "--agent", agent, "--cases", str(built),
            "--out", str(run), "--workers", "1"] + [a for c in ids for a in ("--case-id", c)]
    # a test run started in the background of a non-interactive shell inherits SIGINT ignored, and
    # Python then installs no KeyboardInterrupt handler: give the child the default disposition
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "BENCHWRIGHT_PROGRESS_INTERVAL": "0.2"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 120
    # interrupt as soon as one case is scored: at least three seconds of agent work remain
    while time.time() < deadline and len(list((run / "cases").glob("*.json"))) < 1:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()[-2000:]
    scored = {p.stem for p in (run / "cases").glob("*.json")}
    assert 1 <= len(scored) < len(ids)
    # its progress on stderr (a pipe: plain lines), the last one saying it stopped, not that it was done
    shown = [line for line in err.decode().splitlines() if line.startswith("[wordeval] run ")]
    assert shown and re.fullmatch(rf"\[wordeval\] run stopped after \d+s: .+ \d/{len(ids)} cases scored.*",
                                  shown[-1]), shown
    assert not list((run / "cases").glob(".*"))            # no half-written record left behind
    calls_before = log.read_text().count("\n")
    # the same command again: only the cases without a record run
    assert cli_main(argv[3:]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["cases"] == len(ids) and summary["run"] == {"ran": len(ids) - len(scored), "skipped": len(scored)}
    assert log.read_text().count("\n") == calls_before + len(ids) - len(scored)
    # a folder holding another agent's run is refused, not mixed
    from benchwright.errors import BenchwrightError
    with pytest.raises(BenchwrightError, match="holds a run with other settings"):
        run_harness(built, "null", run, only=ids, progress=False)


def _running(tag: str) -> list[str]:
    """Command lines of the processes running now that carry ``tag``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if tag in cmd:
                found.append(cmd.strip())
    return found


def _pid_namespace_available() -> bool:
    return subprocess.run(["unshare", "--pid", "--fork", "true"], capture_output=True).returncode == 0


@pytest.mark.parametrize("containment", ["auto", "subreaper"])
def test_processes_an_agent_leaves_in_another_session_are_ended_and_named(tmp_path, containment):
    """An agent that starts `setsid sleep` and a double-forked daemon in a session of its own: both
    outlived the run (issue 22, item 18: the process group kill does not reach another session).
    The supervisor ends them, in a PID namespace where one can be made and as the subreaper of the
    agent's tree otherwise, and the record names them. Also on a timeout."""
    from benchwright.wordeval.harness import Agent, run_agent

    tag = f"{os.getpid()}{len(containment)}"
    agent = _agent(tmp_path, "leaves", "import subprocess\n"
                   f"subprocess.Popen(['setsid', 'sleep', '777.{tag}1'])\n"
                   "pid = os.fork()\n"
                   "if pid == 0:\n"
                   "    os.setsid()\n"
                   f"    if os.fork() == 0:\n        os.execvp('sleep', ['sleep', '778.{tag}2'])\n"
                   "    os._exit(0)\n"
                   "os.waitpid(pid, 0)\n"
                   "time.sleep(float(open(sys.argv[2]).read()))\n"
                   "shutil.copyfile(sys.argv[1], sys.argv[3])\n")
    for wait, status in (("0.2", "ok"), ("60", "timeout")):
        work = tmp_path / f"case-{wait}"
        work.mkdir()
        record = run_agent(Agent(agent), b"PK input", wait, work, timeout_s=3, containment=containment)
        assert record["status"] == status, record
        assert _running(f".{tag}") == []                       # nothing outlives the case
        assert sorted(record["left_running"]) == [f"sleep 777.{tag}1", f"sleep 778.{tag}2"]
        want = "pid-namespace" if containment == "auto" and _pid_namespace_available() else "subreaper"
        assert record["containment"] == want
        assert record["cpu_s"] is not None and record["max_rss_mb"] > 0
        if status == "ok":
            assert (work / "output.docx").read_bytes() == b"PK input"
        else:
            assert record["signal"] == "SIGKILL" and record["seconds"] < 30
