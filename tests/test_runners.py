"""The same pipeline on other runners: PortableRunner with external SDK workers (WildBox: a second build, on the
Beam job service, compared with the tiny build the suite makes once), Dataflow's option check (every
registered dataset's graph, from its tiny source); what FnApiRunner's multi_threading mode shares between two
bundles of one process (LibreOffice's profile)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from benchwright import registry
from benchwright.cli import main as cli_main
from benchwright.formats.ooxml import libreoffice
from tests.quality_builds import tiny_build
from tests.wildbox_helpers import build_wildbox, published_hashes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on port {port}")


@pytest.fixture
def portable_services():
    """A local Beam job service and an external SDK worker pool, as separate processes."""
    job_port, pool_port = free_port(), free_port()
    # The worker pool starts each SDK worker as plain `python` from PATH: put this interpreter's
    # folder first, so the workers run in the same (virtual) environment as the test.
    env = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])}
    procs = [
        subprocess.Popen([sys.executable, "-m", "apache_beam.runners.portability.local_job_service_main",
                          "--port", str(job_port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env),
        subprocess.Popen([sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main",
                          "--service_port", str(pool_port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=env),
    ]
    try:
        wait_for_port(job_port)
        wait_for_port(pool_port)
        yield job_port, pool_port
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=30)


def test_portable_runner_with_external_workers_gives_the_same_bytes(portable_services, tmp_path, tmp_path_factory):
    job_port, pool_port = portable_services
    source, reference = tiny_build("wildbox", tmp_path_factory)
    portable = build_wildbox(source, tmp_path / "portable", runner="PortableRunner", beam_args=[
        f"--job_endpoint=localhost:{job_port}", "--environment_type=EXTERNAL",
        f"--environment_config=localhost:{pool_port}",
        # Beam's stager otherwise runs `pip freeze` in a subprocess (2-3 CPU-s) for a list it stages
        "--experiments=disable_logging_submission_environment"])
    assert published_hashes(portable) == published_hashes(reference)


@pytest.mark.parametrize("name", registry.names())
def test_dataflow_options_are_checked_by_a_dry_run(name, tmp_path, tmp_path_factory, capsys):
    source, _ = tiny_build(name, tmp_path_factory)
    common = ["build", name, "--source", str(source), "--out", str(tmp_path / "out"),
              "--runner", "DataflowRunner", "--dry_run=True", "--region", "europe-west1",
              # Beam's stager otherwise runs `pip freeze` in a subprocess (2-3 CPU-s) for a list it stages
              "--experiments=disable_logging_submission_environment"]
    assert cli_main(common + ["--project", "demo-project", "--temp_location", "gs://demo-bucket/tmp"]) == 0
    assert "dry run" in capsys.readouterr().out
    assert not (tmp_path / "out" / name).exists()
    with pytest.raises(Exception, match="project"):
        cli_main(common)


@pytest.mark.skipif(not libreoffice.available(), reason="LibreOffice (soffice) not installed")
def test_two_threads_of_one_process_convert_with_libreoffice_at_the_same_time():
    # multi_threading runs two bundles in one process: with one LibreOffice profile per process, the second
    # soffice finds the profile in use, hands its files to the first and exits 1 without converting them.
    # A default-scale WordEval build quarantined 5 cases this way ("LibreOffice produced no pdf (exit 1)").
    # four documents a thread: with one profile for both threads, every one of them fails (as often as tried)
    fixtures = sorted((Path(__file__).parent / "fixtures" / "docx" / "python-docx").glob("*.docx"))[:4]
    docs = {p.stem: p.read_bytes() for p in fixtures}
    started = threading.Barrier(2)
    results = {}

    def convert(worker):
        started.wait()
        results[worker] = libreoffice.convert_many(docs, retry_singly=False)

    threads = [threading.Thread(target=convert, args=(w,)) for w in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = {(w, name): message for w, res in results.items() for name, (pdf, message) in res.items() if pdf is None}
    assert len(results) == 2 and all(len(res) == len(docs) for res in results.values())
    assert failed == {}
