"""Suite-wide fixtures: every test must stop every thread it started."""

from __future__ import annotations

import threading

import pytest

# How long a test's threads get to finish after its fixtures are torn down. Threads are
# joined (waited on), never slept for: a thread that ends earlier ends the wait earlier.
_THREAD_GRACE_SECONDS = 5.0


@pytest.fixture(autouse=True)
def no_leaked_threads():
    """Fail the test if it leaves running any thread that it started."""
    before = set(threading.enumerate())
    yield
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    for t in leaked:
        t.join(_THREAD_GRACE_SECONDS)
    still = [t.name for t in leaked if t.is_alive()]
    assert not still, f"test leaked running threads: {still}"
