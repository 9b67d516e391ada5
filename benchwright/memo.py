"""A bounded memo of values by key, the last used kept: what the WordEval code remembers by content (parsed parts,
deflate streams, snapshots, the catalogue) so that the cases built on one base document do not redo the same work.

``functools.lru_cache`` keys by the arguments and bounds by count only; these memos key by content the caller
derives, some bound by bytes too, and are shared by the threads of one process (Beam's multi_threading mode)."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

V = TypeVar("V")


class Memo(Generic[V]):
    """At most ``items`` values (None: any number), and at most ``max_weight`` in all where ``weight(key, value)``
    is given; the
    least recently used go first. ``make`` runs outside the lock: two threads may make one value twice, and the
    first kept is the one both get."""

    def __init__(self, items: int | None, max_weight: int | None = None, weight: Callable[[Hashable, V], int] | None = None):
        self.items, self.max_weight, self.weight = items, max_weight, weight
        self._values: OrderedDict[Hashable, V] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        value = make()
        with self._lock:
            if key not in self._values:
                self._values[key] = value
                self._weight += self.weight(key, value) if self.weight else 0
            value = self._values[key]
            while ((self.items is not None and len(self._values) > self.items)
                   or (self.max_weight is not None and self._weight > self.max_weight)):
                old, dropped = self._values.popitem(last=False)
                self._weight -= self.weight(old, dropped) if self.weight else 0
        return value

    def values(self) -> list[V]:
        """The values kept now, the least recently used first."""
        with self._lock:
            return list(self._values.values())

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._weight = 0

    def __len__(self) -> int:
        return len(self._values)


__all__ = ["Memo"]
