"""Build options: the runner we build, and the guard against FnApiRunner's buffer-creation race."""
from __future__ import annotations

import struct
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


def write_records(limit_ms: int, n: int = 20_000) -> list[int]:
    """Writes n 4-byte records into one of Beam's data-plane output streams built for ``limit_ms``, the
    way a bundle's thread encodes elements, and reads back what the stream sent (flushes and close)."""
    from apache_beam.runners.worker import data_plane

    sent = []

    def slow_send(data):  # a flush that waits on a full send queue, as a big element's does
        time.sleep(0.002)
        sent.append(data)

    stream = data_plane.ClosableOutputStream.create(sent.append, slow_send, limit_ms)
    for i in range(n):
        stream.write(struct.pack(">I", i))
        if i % 100 == 0:
            time.sleep(0.0005)  # the encoding thread yields now and then (a pickle, a numpy call)
    stream.close()
    data = b"".join(sent)
    return [v for (v,) in struct.iter_unpack(">I", data[: len(data) // 4 * 4])]


def test_timed_flushes_lose_what_is_written_during_a_flush_and_the_runner_turns_them_off(monkeypatch):
    import apache_beam as beam
    from apache_beam.runners.portability.fn_api_runner import worker_handlers
    from apache_beam.runners.worker import data_plane
    from apache_beam.testing.util import assert_that, equal_to

    # Beam's timed flush (a timer thread: read the buffer, send it, clear it) drops what the bundle's
    # thread writes while the send is under way: this is how two full-scale multi_threading builds lost data.
    assert write_records(limit_ms=1) != list(range(20_000))
    assert write_records(limit_ms=0) == list(range(20_000))  # a size-based stream keeps everything

    # every data-plane stream of a real multi_threading run (runner side and in-process workers) is size-based
    made = []
    original = data_plane.ClosableOutputStream.create

    def spy(close_callback, flush_callback, data_buffer_time_limit_ms):
        made.append(data_buffer_time_limit_ms)
        return original(close_callback, flush_callback, data_buffer_time_limit_ms)

    monkeypatch.setattr(data_plane.ClosableOutputStream, "create", staticmethod(spy))
    options = BuildOptions(running_mode="multi_threading", num_workers=2)
    with beam.Pipeline(runner=options.make_runner(), options=options.pipeline_options()) as p:
        counted = p | beam.Create(range(100)) | beam.Map(lambda x: (x % 3, x)) | beam.GroupByKey() | beam.MapTuple(
            lambda k, xs: (k, len(xs)))
        assert_that(counted, equal_to([(0, 34), (1, 33), (2, 33)]))
    assert made and all(limit <= 0 for limit in made), made
    assert worker_handlers.DATA_BUFFER_TIME_LIMIT_MS == 0


def test_decode_images_is_off_by_default_an_option_of_build_and_recorded():
    """Images are read from their headers unless ``build --decode-images``; the choice shapes the statistics,
    so the manifest's options record it (and a build that changes it does not carry its drift over)."""
    from benchwright.cli import parser

    args, rest = parser().parse_known_args(["build", "wildbox", "--decode-images", "--experiments=x"])
    assert args.decode_images is True and rest == ["--experiments=x"]
    assert parser().parse_known_args(["build", "wildbox"])[0].decode_images is False
    assert BuildOptions().describe()["decode_images"] is False
    assert BuildOptions(decode_images=True).describe()["decode_images"] is True
