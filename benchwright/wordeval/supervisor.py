"""Runs one agent command under limits and ends its whole process tree (the harness starts it per case).

Run as a script with the standard library only (``python -I -S supervisor.py STATUS_FD MEMORY_MB
TIMEOUT_S CONTAINMENT -- ARGV...``; TIMEOUT_S 0: no time limit, for a shipped agent's long-lived worker,
whose cases the harness times one by one): the harness is threaded, and no Python code may run in a forked
child of a threaded process, so the harness starts this single-threaded process instead, which
forks and sets the agent's limits (``RLIMIT_AS``, no core files) before ``exec``.

An agent may leave processes behind in another session (``setsid``, a daemon's double fork), out
of reach of its process group. So this process

* makes itself the child subreaper (``PR_SET_CHILD_SUBREAPER``): a process orphaned anywhere below
  it is re-parented to it, not to init, so every process the agent started stays its descendant;
* where it may (``unshare(CLONE_NEWPID)``: root, or a kernel allowing it), runs the agent in a new
  PID namespace below a small init: the kernel ends every process of the namespace with the init;
* when the agent has ended (or the time is up, or the harness asks with SIGTERM), lists the
  processes still running below it (``left_running``), kills them all with SIGKILL and reaps them,
  sweeping ``/proc`` again until it has no child left.

It reports on STATUS_FD, one JSON object per line: ``{"event": "started", "pid", "containment"}``
once the agent runs, then ``{"event": "ended", "status" (the agent's raw wait status, or None),
"timed_out", "interrupted", "cpu_s" (CPU time of the processes of the tree that were reaped: not of
those the kernel ends with a namespace), "max_rss_kb", "left_running", "containment"}``.
"""
from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36       # linux/prctl.h
CLONE_NEWPID = 0x20000000         # linux/sched.h
SWEEP_FOR_S = 10.0                # give up on processes that will not die (uninterruptible sleep) after this
LISTED = 20                       # at most this many leftover processes are named in the report
AGENT_NAMESPACE_PID = 2           # the init's first child: the agent, in its namespace


class _Deadline(Exception):
    pass


class _Stop(Exception):
    pass


def _raise(exc):
    def handler(signum, frame):
        raise exc()
    return handler


def _libc():
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _proc_table() -> dict[int, list[int]]:
    """{parent pid: [child pids]} of every process /proc shows (empty without /proc)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return children
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue                      # ended meanwhile
        children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (by parent pid, as /proc shows them: host pids)."""
    table, out, todo = _proc_table(), [], [root]
    while todo:
        for child in table.get(todo.pop(), ()):
            out.append(child)
            todo.append(child)
    return out


def _command(pid: int) -> str | None:
    """The command line of a running process (None for a zombie or a process gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                return None
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip() or None
    except OSError:
        return None


def _namespace_pid(pid: int) -> int | None:
    """A process's pid in its own (innermost) PID namespace."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return None


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _ns_pids(pid: int | str) -> list[int]:
    """A process's pids from the PID namespace /proc was mounted for down to its own (``NSpid``,
    Linux >= 4.1; empty when unknown)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return [int(x) for x in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return []


def end_descendants(for_s: float = SWEEP_FOR_S) -> list[str]:
    """The command lines of the processes running below the calling process (a subreaper: what its
    work left behind comes back to it), each then killed and reaped; sweeps ``/proc`` again until no
    child is left (or ``for_s`` has passed). A shipped agent's worker calls it after every case. The
    caller may run in a PID namespace of its own: ``/proc`` names processes by the pids of the
    namespace it was mounted for, ``kill`` by the caller's, so each pid is translated (``NSpid``)."""
    own = _ns_pids("self") or [os.getpid()]
    root, level = own[0], len(own) - 1

    def local(pid: int) -> int | None:
        if level == 0:
            return pid
        pids = _ns_pids(pid)
        return pids[level] if len(pids) > level else None

    left = [c for c in (_command(p) for p in descendants(root)) if c]
    deadline = time.monotonic() + for_s
    while True:
        for pid in descendants(root):
            mine = local(pid)
            if mine is not None:
                _kill(mine)
        try:
            while os.waitpid(-1, os.WNOHANG)[0] != 0:
                pass
        except ChildProcessError:
            return left
        if time.monotonic() > deadline:
            return left
        time.sleep(0.01)


def _exec_agent(argv: list[str], memory_mb: int, status_fd: int) -> None:
    """In the forked child: limits, then the agent; never returns."""
    try:
        os.close(status_fd)
        mem = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        for sig in (signal.SIGTERM, signal.SIGALRM):
            signal.signal(sig, signal.SIG_DFL)
        os.execvp(argv[0], argv)
    except BaseException as exc:  # noqa: BLE001 - the agent could not start: say why, as a shell would
        os.write(2, f"{argv[0]}: {type(exc).__name__}: {exc}\n".encode())
    os._exit(127)


def _namespace_init(argv: list[str], memory_mb: int, status_fd: int, to_parent: int) -> None:
    """PID 1 of the agent's namespace: starts the agent, reaps what is orphaned to it, tells the
    supervisor how the agent ended, then waits to be killed (the kernel then ends the namespace)."""
    agent = os.fork()
    if agent == 0:
        os.close(to_parent)
        _exec_agent(argv, memory_mb, status_fd)
    os.close(status_fd)
    while True:
        pid, status, usage = os.wait4(-1, 0)
        if pid == agent:
            break
    os.write(to_parent, (json.dumps({"status": status}) + "\n").encode())
    while True:
        signal.pause()


def supervise(argv: list[str], memory_mb: int, timeout_s: float, containment: str, status_fd: int) -> int:
    t0 = time.monotonic()
    signal.signal(signal.SIGTERM, _raise(_Stop))
    signal.signal(signal.SIGALRM, _raise(_Deadline))

    def report(event: dict) -> None:
        os.write(status_fd, (json.dumps(event) + "\n").encode())

    libc = _libc()
    subreaper = libc is not None and libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    mode = "subreaper" if subreaper else "process-group"
    if containment == "auto" and libc is not None and libc.unshare(CLONE_NEWPID) == 0:
        mode = "pid-namespace"        # the next fork is PID 1 of a new namespace
    from_init = None
    if mode == "pid-namespace":
        from_init, to_parent = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(from_init)
            _namespace_init(argv, memory_mb, status_fd, to_parent)
        os.close(to_parent)
    else:
        child = os.fork()
        if child == 0:
            _exec_agent(argv, memory_mb, status_fd)
    report({"event": "started", "pid": child, "containment": mode})

    status = None
    timed_out = interrupted = False
    if timeout_s > 0:                 # 0: no limit of its own (a long-lived worker: the harness times each case)
        signal.setitimer(signal.ITIMER_REAL, max(0.001, timeout_s - (time.monotonic() - t0)))
    try:
        status = _agent_status(child, from_init)
    except _Deadline:
        timed_out = True
    except _Stop:
        interrupted = True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)   # the sweep below must finish

    me = os.getpid()
    # what runs below besides the agent itself (and the namespace's init): what it left behind
    agent = child if mode != "pid-namespace" else None
    inside = [p for p in descendants(me) if p != child]
    if mode == "pid-namespace":
        agent = next((p for p in inside if _namespace_pid(p) == AGENT_NAMESPACE_PID), None)
    left = [c for c in (_command(p) for p in inside if p != agent) if c]
    if mode == "pid-namespace":
        _kill(child)                   # the init: the kernel kills the rest of its namespace
    status = _sweep(me, child if mode != "pid-namespace" else None, status)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    report({"event": "ended", "status": status, "timed_out": timed_out, "interrupted": interrupted,
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 3), "max_rss_kb": usage.ru_maxrss,
            "left_running": left[:LISTED], "left_running_count": len(left), "containment": mode})
    return 0


def _agent_status(child: int, from_init: int | None):
    """The agent's wait status: the namespace's init answers when the agent ends (``from_init``; None
    when the init ended without answering, which only something killing it does); otherwise the agent
    is reaped, and orphans re-parented here are reaped on the way."""
    if from_init is not None:
        buf = b""
        while not buf.endswith(b"\n"):
            select.select([from_init], [], [])
            chunk = os.read(from_init, 4096)
            if not chunk:
                break
            buf += chunk
        return json.loads(buf)["status"] if buf else None
    while True:
        pid, st, _ = os.wait4(-1, 0)
        if pid == child:
            return st


def _sweep(me: int, agent: int | None, status):
    """Kill and reap every process below ``me`` until none is left (or ``SWEEP_FOR_S`` has passed);
    returns ``status``, or the wait status of ``agent`` when it is reaped here before it had one."""
    deadline = time.monotonic() + SWEEP_FOR_S
    while True:
        for pid in descendants(me):
            _kill(pid)
        try:
            while True:
                pid, st, _ = os.wait4(-1, os.WNOHANG)
                if pid == 0:
                    break
                if pid == agent and status is None:
                    status = st
        except ChildProcessError:
            break                      # no child left: as a subreaper, nothing is left below it
        if time.monotonic() > deadline:
            break
        time.sleep(0.01)
    return status


def main(args: list[str]) -> int:
    status_fd, memory_mb, timeout_s, containment, sep, *argv = args
    if sep != "--" or not argv:
        raise SystemExit("usage: supervisor.py STATUS_FD MEMORY_MB TIMEOUT_S CONTAINMENT -- ARGV...")
    return supervise(argv, int(memory_mb), float(timeout_s), containment, int(status_fd))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
