"""Every watch's timeoutSeconds and grace fit inside max_staleness (issue 32): silence is never progress for longer."""

from __future__ import annotations

import pytest

from cloudcoil_cache.caching import Tuning
from cloudcoil_cache.caching._reflector import watch_window


def test_the_default_bound_asks_for_watches_of_22_to_45_seconds_with_a_15_second_grace() -> None:
    window = watch_window(Tuning(), 60.0)
    assert (window.low, window.high, window.grace) == (22.5, 45.0, 15.0)
    assert window.draw(0.0) == 22 and window.draw(0.999) == 44
    assert window.silence_bound <= 60.0


def test_without_a_bound_the_window_is_client_gos() -> None:
    window = watch_window(Tuning(), None)
    assert (window.low, window.high, window.grace) == (300.0, 600.0, 90.0)


def test_a_bound_that_leaves_room_keeps_the_tunings_window() -> None:
    window = watch_window(Tuning(watch_timeout=300.0, read_timeout=90.0), 3600.0)
    assert (window.low, window.high, window.grace) == (300.0, 600.0, 90.0)


def test_zero_max_staleness_still_catches_silence_within_the_default_bound() -> None:
    assert watch_window(Tuning(), 0) == watch_window(Tuning(), 60.0)


@pytest.mark.parametrize("bound", [1.0, 2.0, 5.0, 7.5, 30.0, 60.0, 119.0, 600.0, 1000.0])
@pytest.mark.parametrize("r", [0.0, 0.5, 0.999])
def test_every_draw_ends_with_its_grace_inside_the_bound(bound: float, r: float) -> None:
    window = watch_window(Tuning(read_timeout=90.0), bound)
    seconds = window.draw(r)
    assert seconds >= 1 and isinstance(seconds, int)
    if bound >= 2.0:  # timeoutSeconds is at least 1 s: below that no window fits
        assert seconds + window.grace <= bound
    assert window.grace <= bound / 4
