"""A shipped agent's long-lived worker: one process runs the agent on case after case.

    python -m benchwright.wordeval.agent_worker MODULE JOBS_FD REPLIES_FD

The harness starts it below the supervisor (``supervisor.py``, with no time limit of its own: its
address-space limit, its containment and its sweep when the worker ends stay as for an agent run per
case) and sends it one JSON job per line on ``JOBS_FD``: ``{"argv": [...], "workdir": "..."}``, the
agent's command line without the program (``INPUT INSTRUCTION OUTPUT [--plan PLAN]``) and the case's
own folder. ``MODULE`` is the shipped agent's (``agents.SHIPPED``). For each job the worker runs the
agent's ``cli(argv)`` in that folder, with the case's ``stdout.log`` and ``stderr.log`` as its
standard output and error, then names, kills and reaps whatever the case left running (it is the
subreaper of its own tree) and answers one JSON line on ``REPLIES_FD``: ``{"exit_code", "cpu_s", "max_rss_kb", "left_running", "left_running_count"}``. The
exit code is what the agent's process would have exited with (``SystemExit`` included). Python's
start-up and the agent's imports are paid once per worker instead of once per case.

A case that crashes the worker (a signal, ``os._exit``) or hangs it ends it: the harness sees no
answer, records the case from the supervisor's report (or as timed out) and starts another worker
for the next case. The worker ends when ``JOBS_FD`` is closed.
"""
from __future__ import annotations

import importlib
import json
import os
import resource
import sys
import traceback

from benchwright.wordeval import supervisor


def _cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _reset_peak_rss() -> bool:
    """Reset this process's peak resident set size (VmHWM: Linux >= 4.0), so each case reports its own."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss_kb(reset: bool, children_before: int) -> int:
    """This case's peak resident set size: the worker's since the reset (else its lifetime peak), or a
    child's when a child it reaped during the case peaked higher."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if reset:
        try:
            with open("/proc/self/status", encoding="ascii", errors="replace") as f:
                own = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
        except (OSError, StopIteration, ValueError):
            pass
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children if children > children_before else 0)


def run_job(cli, job: dict) -> dict:
    """One case: the agent's ``cli(argv)`` in the case's folder, its output and error to the case's logs."""
    workdir = job["workdir"]
    os.chdir(workdir)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    out = os.open(os.path.join(workdir, "stdout.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(os.path.join(workdir, "stderr.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.close(out)
    os.close(err)
    reset = _reset_peak_rss()
    children_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    cpu0 = _cpu_s()
    try:
        code = cli(list(job["argv"]))
    except SystemExit as exc:          # as the interpreter would exit with it
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:              # noqa: BLE001 - an uncaught error ends a process with status 1
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    left = supervisor.end_descendants()
    reply = {"exit_code": int(code) & 0xFF if isinstance(code, int) else 1, "cpu_s": round(_cpu_s() - cpu0, 3),
             "max_rss_kb": _peak_rss_kb(reset, children_rss), "left_running": left[:supervisor.LISTED],
             "left_running_count": len(left)}
    os.dup2(saved[0], 1)
    os.dup2(saved[1], 2)
    os.close(saved[0])
    os.close(saved[1])
    return reply


def main(args: list[str]) -> int:
    module, jobs_fd, replies_fd = args
    cli = importlib.import_module(module).cli
    libc = supervisor._libc()
    if libc is not None:               # orphans of a case come back here, to be named and ended
        libc.prctl(supervisor.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    with os.fdopen(int(jobs_fd), "r", encoding="utf-8") as jobs, \
            os.fdopen(int(replies_fd), "w", encoding="utf-8") as replies:
        for line in jobs:
            if line.strip():
                replies.write(json.dumps(run_job(cli, json.loads(line))) + "\n")
                replies.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
