"""Informer runs: a stopped run's reflector can never deliver into the next run (no HTTP needed)."""

from __future__ import annotations

import threading
from typing import Any

from _objects import obj

from cloudcoil_cache._listwatch import WatchEvent
from cloudcoil_cache.caching import Informer, InformerKey, SyncInformer
from cloudcoil_cache.errors import ProtocolError
from cloudcoil_cache.models.kubernetes.core.v1 import Pod


class BlockingSource:
    """A ListerWatcher double whose LIST blocks until ``interrupt()`` (the reflector's stop)."""

    def __init__(self) -> None:
        self._stopped = threading.Event()

    def interrupt(self) -> None:
        self._stopped.set()

    def list_page(self, **_: Any) -> Any:
        self._stopped.wait(10)
        raise ProtocolError("interrupted")

    def watch(self, **_: Any) -> Any:
        raise AssertionError("never reached")


def test_a_stopped_runs_late_deliveries_are_dropped_and_never_reach_the_next_run():
    informer: Informer[Any] = Informer(InformerKey(Pod, None), lambda key: BlockingSource())
    seen: list[str] = []
    got = threading.Event()

    def record(o: Any) -> None:
        seen.append(o.metadata.name)
        got.set()

    SyncInformer(informer).on_add(record)
    informer.start()
    old_sink = informer._reflector._sink  # what the first run's reflector delivers through
    run = informer.signal_stop()
    # the first run's reflector, still winding down, delivers a list and an event
    old_sink.replace([obj("stale-list")], "5", resync=False)
    old_sink.apply(WatchEvent("ADDED", obj("stale-event"), "6"))
    informer.join(run)
    informer.start()  # the next run
    new_sink = informer._reflector._sink
    new_sink.apply(WatchEvent("ADDED", obj("fresh"), "7"))
    assert got.wait(5)
    assert seen == ["fresh"]
    assert [o.metadata.name for o in informer.store.list()] == ["fresh"]
    assert not informer.has_synced()  # the stale replace did not mark the new run synced
    informer.stop()
