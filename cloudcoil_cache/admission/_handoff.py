"""Handoff: work handed to the most recently idle worker thread (a LIFO of waiters, a FIFO of work).

A plain queue wakes its waiters in turn, so every one of a server's 64 workers ends up serving
requests: each then touches memory of its own (its stack, the allocator's per-thread arena, TLS
buffers). Handing work to the worker that went idle last keeps the same few busy under a light load
(the rest stay parked and cold), and still uses all of them under a heavy one.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Generic, TypeVar

__all__ = ["Handoff", "Turn"]

T = TypeVar("T")


class Turn(Generic[T]):
    """A worker's place among the idle ones: ``take()`` blocks until an item is handed to it."""

    __slots__ = ("_item", "_ready")
    _item: T  # set by whoever releases ``_ready``

    def __init__(self) -> None:
        self._ready = threading.Lock()
        self._ready.acquire()  # released once the item is set

    def _give(self, item: T) -> None:
        self._item = item
        self._ready.release()

    def take(self) -> T:
        self._ready.acquire()
        return self._item


class Handoff(Generic[T]):
    """``put`` never blocks; ``get`` blocks until an item comes. Items are handed out in the order put
    (a worker handed one may wake after another handed a later one); an item put while workers wait
    goes to the one that began waiting last."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: deque[T] = deque()
        self._idle: list[Turn[T]] = []  # a stack: the last one to wait is woken first

    def put(self, item: T) -> None:
        with self._lock:
            if not self._idle:
                self._items.append(item)
                return
            turn = self._idle.pop()
        turn._give(item)

    def turn(self) -> Turn[T]:
        """Join the idle workers (or, with an item waiting, take it at once): ``get()`` in two steps."""
        turn: Turn[T] = Turn()
        with self._lock:
            if not self._items:
                self._idle.append(turn)
                return turn
            item = self._items.popleft()
        turn._give(item)
        return turn

    def get(self) -> T:
        return self.turn().take()

    def take_all(self) -> list[T]:
        """The items no worker has taken yet (removed)."""
        with self._lock:
            items = list(self._items)
            self._items.clear()
        return items

    def empty(self) -> bool:
        """Whether no item waits for a worker."""
        with self._lock:
            return not self._items
