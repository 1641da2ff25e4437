"""Helpers shared by the cluster tests (informer, cache, aio): fast timing, seeding, request-log queries, a recorder."""

from __future__ import annotations

import threading
from typing import Any, Callable

from cloudcoil_cache.caching import Backoff, Tuning
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, RecordedRequest, make_pod

#: Reflector timing for tests: quick backoff, short read timeout; the semantics are unchanged.
FAST = Tuning(backoff=Backoff(initial=0.05, cap=0.4), watch_timeout=30.0, read_timeout=5.0, min_watch_duration=0.0)


def seed(
    server: FakeAPIServer, n: int, namespace: str = "default", prefix: str = "pod", **labels: str
) -> list[dict[str, Any]]:
    """Create ``prefix-0`` .. ``prefix-{n-1}`` pods through the server's direct object API."""
    return [
        server.create("pods", make_pod(f"{prefix}-{i}", namespace, index=i, labels=dict(labels) or None), namespace)
        for i in range(n)
    ]


def reads(server: FakeAPIServer) -> list[RecordedRequest]:
    """Every get/list request the server received (watches excluded)."""
    return [r for r in server.requests if r.verb in ("get", "list")]


def requests_to(server: FakeAPIServer, verb: str, path: str) -> list[RecordedRequest]:
    return [r for r in server.requests if r.verb == verb and r.path == path]


def names(objs: Any) -> set[str]:
    return {o.metadata.name for o in objs}


def fail_relists_with_403(server: FakeAPIServer, config: Any) -> None:
    """After the sync, force a relist (stale RV + compaction + dropped watch) that gets 403 for good."""
    informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
    assert informer.wait_for_sync(5)
    server.wait_for_watches(1)
    server.clear_faults()  # before the stall: clear_faults() also lifts stalls
    server.stall_watches()  # so the watch never delivers the event below (a rewatch would not be too old)
    server.create("pods", make_pod("after-compaction"))
    server.compact()
    server.fail_next(10_000, 403, verb="list", path="re:^/api/v1/pods$")
    server.clear_requests()
    server.drop_watches()
    # Two failed relists: the reflector records the first failure before it backs off and retries.
    server.wait_for_request(lambda r: r.verb == "list" and r.path == "/api/v1/pods")
    first = len(requests_to(server, "list", "/api/v1/pods"))
    server.wait_for_request(
        lambda r: (
            r.verb == "list" and r.path == "/api/v1/pods" and len(requests_to(server, "list", "/api/v1/pods")) > first
        )
    )
    server.resume_watches()
    assert informer.status().last_error is not None and "Forbidden" in informer.status().last_error


class Recorder:
    """Collects handler calls; ``wait(pred)`` blocks on a Condition until ``pred(events)`` holds."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self._cond = threading.Condition()

    def add(self, kind: str, value: Any) -> None:
        with self._cond:
            self.events.append((kind, value))
            self._cond.notify_all()

    def wait(self, pred: Callable[[list[tuple[str, Any]]], bool], timeout: float = 10.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: pred(self.events), timeout):
                raise AssertionError(
                    f"condition not met within {timeout}s; events: {[(k, name_of(v)) for k, v in self.events][-20:]}"
                )

    def names(self, kind: str) -> list[str]:
        with self._cond:
            return [name_of(v) for k, v in self.events if k == kind]

    def count(self, kind: str) -> int:
        with self._cond:
            return sum(1 for k, _ in self.events if k == kind)

    def hook(self, informer: Any) -> list[Any]:
        """Register add/update/delete recorders; returns their handles."""
        return [
            informer.on_add(lambda o: self.add("add", o)),
            informer.on_update(lambda old, new: self.add("update", (old, new))),
            informer.on_delete(lambda o: self.add("delete", o)),
        ]


def name_of(value: Any) -> str:
    obj = value[1] if isinstance(value, tuple) else value
    return str(obj.metadata.name)


def wait_until(cond: threading.Condition, pred: Callable[[], bool], timeout: float = 10.0) -> None:
    with cond:
        if not cond.wait_for(pred, timeout):
            raise AssertionError(f"condition not met within {timeout}s")


def relist_after_410_deleting(server: FakeAPIServer, rec: Recorder, name: str) -> None:
    """Delete ``name`` while the watches are stalled, compact past it and drop the watches: the
    informer's resumed watch gets a 410 and relists; returns once ``rec`` saw the delete the relist
    found (the server's request log and faults cleared before the relist)."""
    server.stall_watches()
    server.delete("pods", name, "default")
    server.compact()
    server.clear_requests()
    server.clear_faults()
    server.drop_watches()
    rec.wait(lambda ev: name in [o.metadata.name for k, o in ev if k == "delete"])
