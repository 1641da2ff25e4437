"""The reflector's "what next" after a list or a watch ends: one table for ``what_next``."""

from __future__ import annotations

import pytest

from cloudcoil_cache.caching._reflector import (
    EmptyWatchError,
    Ended,
    Next,
    StalledWatchError,
    VeryShortWatchError,
    what_next,
)
from cloudcoil_cache.errors import (
    APIError,
    ConnectError,
    Forbidden,
    LineTooLong,
    ReadTimeout,
    TooManyRequests,
    WatchExpired,
)

EXPIRED = WatchExpired("too old resource version")
GONE = APIError("gone", code=410, reason="Gone")
TOO_LARGE = APIError("Too large resource version: 12, current: 10", code=504, reason="Timeout")
REFUSED = ConnectError("connection refused")
BUSY = TooManyRequests("slow down", retry_after=2)
EMPTY = EmptyWatchError("empty watch", since=1.0)
STALLED = StalledWatchError("stalled", since=1.0)
VERY_SHORT = VeryShortWatchError("very short watch")
FORBIDDEN = Forbidden("no RBAC")
LONG_LINE = LineTooLong("line too long", limit=10)
TIMEOUT = ReadTimeout("read timed out")

W, RS, RL, BW, BR = Next.WATCH, Next.RESYNC, Next.RELIST, Next.BACKOFF_WATCH, Next.BACKOFF_RELIST


@pytest.mark.parametrize(
    "ended, expired_before, expected",
    [
        # clean ends: watch again, or the resync that ended the watch
        (Ended(), 0, (W, 0)),
        (Ended(), 1, (W, 1)),  # a clean end does not reset the count (progress on a later 410 does)
        (Ended(resync_due=True), 0, (RS, 0)),
        # 410 and "too large": relist at once, a second in a row after a backoff
        (Ended(EXPIRED), 0, (RL, 1)),
        (Ended(GONE), 0, (RL, 1)),
        (Ended(TOO_LARGE), 0, (RL, 1)),
        (Ended(EXPIRED, in_list=True), 0, (RL, 1)),
        (Ended(EXPIRED), 1, (BR, 2)),
        (Ended(EXPIRED, in_list=True), 2, (BR, 3)),
        (Ended(EXPIRED, progressed=True), 1, (RL, 1)),  # the watch moved on before it expired
        (Ended(TOO_LARGE, progressed=True), 5, (RL, 1)),
        # a watch that could not connect, was throttled, delivered nothing or stalled: back off, watch
        (Ended(REFUSED), 0, (BW, 0)),
        (Ended(BUSY), 1, (BW, 1)),
        (Ended(EMPTY), 0, (BW, 0)),
        (Ended(STALLED, progressed=True), 0, (BW, 0)),
        # the same failures of a list, and every other failure: back off, relist
        (Ended(REFUSED, in_list=True), 0, (BR, 0)),
        (Ended(BUSY, in_list=True), 0, (BR, 0)),
        (Ended(VERY_SHORT), 0, (BR, 0)),
        (Ended(FORBIDDEN), 0, (BR, 0)),
        (Ended(LONG_LINE), 1, (BR, 1)),
        (Ended(TIMEOUT), 0, (BR, 0)),
        (Ended(ValueError("a bug")), 0, (BR, 0)),
    ],
    ids=repr,
)
def test_what_next(ended, expired_before, expected):
    assert what_next(ended, expired_before) == expected


def test_which_steps_list_and_which_back_off():
    assert [n for n in Next if n.lists] == [Next.RESYNC, Next.RELIST, Next.BACKOFF_RELIST]
    assert [n for n in Next if n.backs_off] == [Next.BACKOFF_WATCH, Next.BACKOFF_RELIST]
