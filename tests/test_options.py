"""Build options: the runner we build, and the guard against FnApiRunner's buffer-creation race."""
from __future__ import annotations

import threading
import time

from benchwright.options import BuildOptions, locked


class RacyBuffers:
    """The shape of Beam's BundleContextManager.get_buffer: an unguarded check-then-set."""

    def __init__(self):
        self.buffers = {}

    def get_buffer(self, key):
        if key not in self.buffers:
            time.sleep(0.05)  # widen the window the way a slow coder lookup does
            self.buffers[key] = []
        return self.buffers[key]


def append_from_threads(get_buffer, n=8):
    def work(i):
        get_buffer("frames").append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_the_unguarded_pattern_loses_writes_and_the_lock_keeps_them():
    racy = RacyBuffers()
    append_from_threads(racy.get_buffer)
    assert len(racy.buffers["frames"]) < 8  # the race this guard exists for: writes vanish

    guarded = RacyBuffers()
    get_buffer = locked(RacyBuffers.get_buffer)
    append_from_threads(lambda key: get_buffer(guarded, key))
    assert sorted(guarded.buffers["frames"]) == list(range(8))


def test_the_default_runner_is_fnapirunner_with_the_guard_installed():
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner, execution

    runner = BuildOptions().make_runner()
    assert isinstance(runner, FnApiRunner)
    assert execution.BundleContextManager.get_buffer._benchwright_locked is True
    opts = BuildOptions(running_mode="multi_processing", num_workers=2).pipeline_options().get_all_options()
    assert opts["direct_running_mode"] == "multi_processing" and opts["direct_num_workers"] == 2
