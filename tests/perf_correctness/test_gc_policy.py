"""The library's garbage-collector policy never undoes what the application did to the collector."""

from __future__ import annotations

import gc
from typing import Iterator

import pytest

from cloudcoil_cache import _gc


@pytest.fixture(autouse=True)
def restore_collector() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.enable() if enabled else gc.disable()


def test_freezing_never_unfreezes_what_the_application_froze() -> None:
    keep = [[i] for i in range(100)]
    gc.freeze()
    frozen = gc.get_freeze_count()
    assert frozen >= len(keep)
    _gc.freeze()
    for _ in range(_gc.FREEZE_EVERY * 2):
        _gc.note_events()
    assert gc.get_freeze_count() >= frozen


def test_freeze_frees_dead_cycles_instead_of_freezing_them() -> None:
    gc.enable()

    class Node:
        def __init__(self) -> None:
            self.me = self

    collected: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            collected.append(info["collected"])

    Node()  # a dead cycle: only the cyclic collector frees it
    gc.callbacks.append(count)
    try:
        _gc.freeze()
    finally:
        gc.callbacks.remove(count)
    assert sum(collected) >= 1


def test_nothing_is_frozen_when_the_application_disabled_the_collector() -> None:
    gc.disable()
    before = gc.get_freeze_count()
    _ = [[i] for i in range(100)]
    _gc.freeze()
    assert gc.get_freeze_count() == before
    assert not gc.isenabled()


def test_paused_restores_the_state_it_found() -> None:
    gc.enable()
    with _gc.paused():
        assert not gc.isenabled()
        with _gc.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    with _gc.paused():
        pass
    assert not gc.isenabled()
