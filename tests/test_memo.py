"""The bounded memo the WordEval code keeps its parsed parts, deflate streams and snapshots in."""
import pytest

from benchwright.memo import Memo


def test_the_least_recently_used_go_first_by_count_and_by_weight():
    made = []

    def make(value):
        return lambda: made.append(value) or value

    memo = Memo(3)
    for key in "abc":
        memo.get(key, make(key.upper()))
    assert memo.get("a", make("other")) == "A"        # remembered, and now the most recent
    memo.get("d", make("D"))                          # b, the least recent, goes
    assert memo.get("b", make("B2")) == "B2" and made == ["A", "B", "C", "D", "B2"] and len(memo) == 3
    assert memo.values() == ["A", "D", "B2"]          # c went when b came back; the least recent first
    weighed = Memo(None, 10, lambda key, value: len(value))
    for key, value in (("x", "12345"), ("y", "1234"), ("z", "12")):   # 11 > 10: x goes
        weighed.get(key, lambda v=value: v)
    assert len(weighed) == 2 and weighed.get("x", lambda: "again") == "again"


def test_a_value_that_fails_to_be_made_is_not_kept():
    memo = Memo(2)

    def fail():
        raise ValueError("unreadable")

    with pytest.raises(ValueError):
        memo.get("k", fail)
    assert len(memo) == 0 and memo.get("k", lambda: 1) == 1
    memo.clear()
    assert len(memo) == 0


def test_threads_reading_and_evicting_one_memo_never_fail():
    # what the WordEval memos now rely on: docmodel's document memo was an OrderedDict moved to its end after the
    # read, so a thread whose key another thread had just evicted raised KeyError (Beam's multi_threading mode
    # builds cases on several threads); four threads reading and evicting one small memo must never fail
    import threading

    memo, errors = Memo(2), []

    def hammer(offset):
        try:
            for i in range(20_000):
                key = (i + offset) % 5
                assert memo.get(key, lambda k=key: k * 10) == key * 10
        except Exception as error:      # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(memo) == 2
