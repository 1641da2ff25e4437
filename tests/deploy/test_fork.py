"""Fork children (issue 33): an informer inherited across ``fork()`` resumes its watch in the child from
the objects it inherited (no LIST), never claims ``current`` before that watch made progress, never
touches the parent's threads, locks or sockets, and the parent's watch goes on undisturbed.

Each test forks the test process with ``os.fork()`` (as gunicorn, Celery's prefork pool and
multiprocessing's fork do); the child reports through a pipe and ends with ``os._exit``. The fake
API server runs in the parent; it tells the processes' requests apart by their client port.
"""

from __future__ import annotations

import json
import os
import select
import threading
import time
import traceback
from typing import Any, Callable

import pytest
from cluster_support import FAST, seed

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork() is POSIX only")


def in_child(body: Callable[[], dict[str, Any]], timeout: float = 30.0) -> dict[str, Any]:
    """Run ``body()`` in a fork child; its JSON-able result (or its traceback, raised here)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read_end)
        try:
            out = {"ok": body()}
        except BaseException:  # noqa: BLE001 - everything goes back to the parent
            out = {"error": traceback.format_exc()}
        try:
            os.write(write_end, json.dumps(out).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_end], [], [], left)[0]:
                os.kill(pid, 9)
                raise AssertionError(f"the fork child did not answer within {timeout} s (killed)")
            data = os.read(read_end, 65536)
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    result = json.loads(b"".join(chunks))
    if "error" in result:
        raise AssertionError("in the fork child:\n" + result["error"])
    return result["ok"]  # type: ignore[no-any-return]


def added_event(config: Config) -> tuple[threading.Event, list[str]]:
    """An Event set when the informer of Pods delivers an add (names collected), via a handler lane."""
    assert config.cache is not None
    view = config.cache.get_informer(Pod, sync=True)
    assert view is not None
    seen: list[str] = []
    event = threading.Event()

    @view.on_add
    def added(pod: Any) -> None:
        seen.append(pod.name)
        if pod.name.startswith("late-"):
            event.set()

    return event, seen


@pytest.fixture
def preloaded(server: FakeAPIServer, kubeconfig: str) -> Any:
    """A cached Config made the process default, synced over 20 pods (a web app's module at import)."""
    seed(server, 20)
    config = Config(kubeconfig=kubeconfig, namespace="default", cache=Cache(resources=[Pod], tuning=FAST))
    config.set_default()
    yield config
    config.close()


def test_a_fork_child_resumes_the_watch_from_the_inherited_objects_without_a_list(server, kubeconfig, preloaded):
    assert preloaded.cache is not None
    parent_informer = preloaded.cache.informers()[0]
    inherited_rv = parent_informer.resource_version
    lists_before = sum(1 for r in server.requests if r.verb == "list")
    parent_seen, parent_names = added_event(preloaded)

    def child() -> dict[str, Any]:
        assert preloaded.cache is not None
        (informer,) = preloaded.cache.informers()
        before = informer.state()  # read without the cache's resume (status() would resume it)
        inherited = informer.inherited
        served = sorted(p.name for p in Pod.list(namespace="default").items)  # the default: from the cache
        late_seen, _ = added_event(preloaded)
        with Config(kubeconfig=kubeconfig, namespace="default"):  # a plain client: a live create
            Pod.from_dict(make_pod("late-child", "default")).create()
        delivered = late_seen.wait(10)
        resumed_rv_ok = informer.resource_version != inherited_rv
        status = preloaded.cache.status().informers[0]
        t0 = time.monotonic()
        preloaded.close()  # what a worker's exit runs: must not block on anything inherited
        closed_in = time.monotonic() - t0
        return {
            "before": before[0],
            "inherited": inherited,
            "served": len(served),
            "delivered": delivered,
            "state": status.state,
            "moved": resumed_rv_ok,
            "closed_in": closed_in,
            "pid": os.getpid(),
        }

    out = in_child(child)
    assert out["inherited"] and out["before"] == "degraded"  # never "current" before it resumed here
    assert out["served"] == 20  # the inherited copy, served
    assert out["delivered"] and out["moved"] and out["state"] == "current"  # the resumed watch delivers
    assert out["closed_in"] < 1.0
    # No LIST from anyone since the fork: the child watched from the inherited resourceVersion.
    assert sum(1 for r in server.requests if r.verb == "list") == lists_before
    assert any(r.verb == "watch" and r.query.get("resourceVersion") == inherited_rv for r in server.requests)
    # The parent's watch was never touched: it delivers the child's create, and the next one.
    assert parent_seen.wait(10), parent_names
    server.create("pods", make_pod("late-parent", "default"), "default")
    st = preloaded.cache.status().informers[0]
    assert st.relist_count == 1 and st.last_error is None and st.state == "current"


def test_close_then_set_default_and_a_new_default_in_a_fork_child_work(server, kubeconfig, preloaded):
    """What users try in gunicorn's post_fork: close(); set_default() raised "this Config was closed",
    and a new Config(...).set_default() deadlocked releasing the inherited default."""

    def child() -> dict[str, Any]:
        t0 = time.monotonic()
        preloaded.close()
        preloaded.set_default()  # reopened in the child: lists again (its objects were dropped)
        names = len(Pod.list(namespace="default").items)
        other = Config(kubeconfig=kubeconfig, namespace="default", cache=Cache(resources=[Pod], tuning=FAST))
        other.set_default()  # replaces the (re-opened) default: releases it without blocking
        names_other = len(Pod.list(namespace="default").items)
        other.close()
        return {"seconds": time.monotonic() - t0, "names": names, "names_other": names_other}

    out = in_child(child)
    assert out["names"] == 20 and out["names_other"] == 20
    assert out["seconds"] < 10


def test_a_child_that_never_uses_the_cache_exits_without_touching_the_parents_watch(server, preloaded):
    """A worker that exits at once (gunicorn --max-requests, a failed boot): its exit runs close() at
    interpreter exit; the parent's watch must stay open (the child once shut it down: a 'very short
    watch' in the parent and a relist)."""
    watches = server.active_watches

    def child() -> dict[str, Any]:
        t0 = time.monotonic()
        preloaded.close()
        return {"seconds": time.monotonic() - t0}

    out = in_child(child)
    assert out["seconds"] < 1.0
    assert preloaded.cache is not None
    event, _ = added_event(preloaded)
    server.create("pods", make_pod("late-after-exit", "default"), "default")
    assert event.wait(10)
    st = preloaded.cache.status().informers[0]
    assert st.state == "current" and st.relist_count == 1 and server.active_watches >= watches


def test_a_fork_while_a_write_holds_the_store_lock_lists_again_in_the_child(server, kubeconfig, preloaded):
    """A fork in the middle of an apply (another thread holds the store's lock): the copy may be
    half written, so the child does not serve it: it lists afresh (the lock is a new one: no hang)."""
    assert preloaded.cache is not None
    (informer,) = preloaded.cache.informers()
    lock = informer.store._d.lock  # the store's one lock, held as the reflector holds it mid-apply
    held, release = threading.Event(), threading.Event()

    def writer() -> None:
        with lock:
            held.set()
            release.wait(30)

    thread = threading.Thread(target=writer, name="test-holds-store-lock")
    thread.start()
    held.wait(10)
    lists_before = sum(1 for r in server.requests if r.verb == "list")
    try:

        def child() -> dict[str, Any]:
            assert preloaded.cache is not None
            (inherited,) = preloaded.cache.informers()
            synced_before = inherited.has_synced()
            served = len(Pod.list(namespace="default").items)  # not from the torn copy: read live
            inherited.wait_for_sync(10)  # the read resumed the informer: it lists afresh
            return {"synced_before": synced_before, "served": served, "state": inherited.state()[0]}

        out = in_child(child)
    finally:
        release.set()
        thread.join()
    assert out["synced_before"] is False and out["served"] == 20
    # The child's informer listed again (it did not resume from the torn copy), and the read, made while
    # it was not synced, was a live LIST.
    lists = [r.path for r in server.requests if r.verb == "list"][lists_before:]
    assert sorted(lists) == ["/api/v1/namespaces/default/pods", "/api/v1/pods"], lists


def test_set_default_again_in_a_post_fork_hook_resumes_the_inherited_cache_at_once(server, preloaded):
    """gunicorn's post_fork with `config.set_default()`: a silent no-op before (the worker served the
    frozen copy); now it resumes the inherited cache there and then."""

    def child() -> dict[str, Any]:
        assert preloaded.cache is not None
        (informer,) = preloaded.cache.informers()
        before = informer.inherited
        preloaded.set_default()
        return {"before": before, "after": informer.inherited, "threads": [t.name for t in threading.enumerate()]}

    out = in_child(child)
    assert out["before"] and not out["after"]
    assert "cloudcoil-reflector-pods@*" in out["threads"]


def test_a_list_alone_in_a_fork_child_resumes_the_inherited_cache(server, preloaded):
    """A worker whose requests only list (``Pod.list``, the examples' pages): the list resumes the
    watch, as a get does (before, only gets, scopes, ``status()`` and informers resumed it: the
    worker served the frozen copy for good)."""

    def child() -> dict[str, Any]:
        assert preloaded.cache is not None
        (informer,) = preloaded.cache.informers()
        before = informer.inherited
        served = len(Pod.list(namespace="default").items)
        return {"before": before, "after": informer.inherited, "served": served}

    out = in_child(child)
    assert out["before"] and not out["after"]
    assert out["served"] == 20
