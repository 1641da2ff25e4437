"""WorkQueue with an add_after delay years away (a new-user pass found it raised OverflowError)."""

from __future__ import annotations

import threading

from cloudcoil_cache.controller import WorkQueue


def test_a_blocked_get_survives_a_timer_due_in_a_very_long_time():
    """add_after(key, 1e10) (or inf): a get() with no timeout waits Condition.wait(1e10) and raises
    OverflowError ("timestamp out of range for platform time_t") instead of blocking."""
    queue = WorkQueue("probe")
    queue.add_after("later", 1e10)
    outcome: list[object] = []

    def worker() -> None:
        try:
            outcome.append(queue.get())
        except Exception as exc:  # noqa: BLE001 - recorded for the assertion
            outcome.append(exc)

    thread = threading.Thread(target=worker, name="probe-get")
    thread.start()
    thread.join(0.3)  # a correct get() is still blocked: nothing is due
    blocked = thread.is_alive()
    queue.shut_down()
    thread.join(5)
    assert blocked and outcome == [None], outcome
