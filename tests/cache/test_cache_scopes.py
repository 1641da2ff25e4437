"""Config scopes around a cache: reference counting, exit order, sync/async exclusivity, sync waits, stop."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import pytest
from cluster_support import names, reads, seed

from cloudcoil_cache.errors import CacheSyncTimeout, Forbidden
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod, Service
from cloudcoil_cache.testing import make_configmap, make_pod


def cloudcoil_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("cloudcoil-") and t.is_alive()]


def reflector_threads() -> list[threading.Thread]:
    return [t for t in cloudcoil_threads() if t.name.startswith("cloudcoil-reflector-")]


def test_nested_scopes_share_one_cache_and_the_inner_exit_keeps_it_running(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod])
    with config:
        started = reflector_threads()
        assert len(started) == 1
        with config:
            assert reflector_threads() == started  # no second start
            assert names(Pod.list()) == {"pod-0", "pod-1"}
        assert config.cache.status().started  # type: ignore[union-attr]
        assert started[0].is_alive()
        server.clear_requests()
        server.create("pods", make_pod("late"))
        _wait_for_name(config.cache.get_informer(Pod), "late")  # type: ignore[union-attr]
        assert "late" in names(Pod.list())
        assert reads(server) == []
    assert [r for r in server.requests if r.verb == "list" and r.path == "/api/v1/pods"] == []
    assert cloudcoil_threads() == []


def _wait_for_name(informer, name: str) -> None:
    seen = threading.Event()
    handle = informer.on_add(lambda pod: seen.set() if pod.metadata.name == name else None)
    try:
        assert seen.wait(5), f"{name} never reached the cache"
    finally:
        handle.remove()


def test_the_first_scope_lists_once_and_every_nested_scope_reuses_that_list(server, make_config):
    seed(server, 1)
    config = make_config(resources=[Pod])
    with config:
        with config:
            with config:
                pass
    lists = [r for r in server.requests if r.verb == "list"]
    assert len(lists) == 1


def test_exiting_scopes_out_of_order_raises_runtime_error(server, make_config):
    outer, inner = make_config(resources=[Pod]), make_config(resources=[ConfigMap])
    outer.activate()
    try:
        inner.activate()
        try:
            with pytest.raises(RuntimeError, match="out of order"):
                outer.deactivate()
        finally:
            inner.deactivate()
    finally:
        outer.deactivate()
    assert cloudcoil_threads() == []


def test_activate_and_deactivate_are_a_scope_without_with(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod], mode="strict")
    assert config.activate() is config
    try:
        assert config.cache.status().ready  # type: ignore[union-attr]
        server.clear_requests()
        assert names(Pod.list()) == {"pod-0", "pod-1"}
        assert reads(server) == []
        with config:  # shares the activated scope's cache
            assert len(reflector_threads()) == 1
    finally:
        config.deactivate()
    assert not config.cache.status().started  # type: ignore[union-attr]
    assert cloudcoil_threads() == []


def test_an_async_scope_on_a_config_held_by_a_sync_scope_raises_mentioning_two_configs(server, make_config):
    config = make_config(resources=[Pod])

    async def enter_async() -> None:
        async with config:
            pass

    with config:
        with pytest.raises(RuntimeError, match="two Configs"):
            asyncio.run(enter_async())
        assert config.cache.status().started  # type: ignore[union-attr]
    assert cloudcoil_threads() == []


def test_a_sync_scope_on_a_config_held_by_an_async_scope_raises_mentioning_two_configs(server, make_config):
    config = make_config(resources=[Pod])

    async def main() -> None:
        async with config:
            with pytest.raises(RuntimeError, match="two Configs"):
                with config:
                    pass
            assert config.cache.status().started  # type: ignore[union-attr]

    asyncio.run(main())
    assert cloudcoil_threads() == []


def test_strict_wait_for_sync_raises_forbidden_at_once_instead_of_waiting_out_the_timeout(server, make_config):
    server.fail_next(10_000, 403, verb="list")
    config = make_config(resources=[Pod], mode="strict", sync_timeout=30)
    start = time.monotonic()
    with pytest.raises(Forbidden):
        with config:
            pytest.fail("the scope must not be entered")  # pragma: no cover
    assert time.monotonic() - start < 2
    assert not config.cache.status().started  # type: ignore[union-attr]
    assert cloudcoil_threads() == []


def test_fallback_wait_for_sync_logs_a_warning_on_403_and_enters_the_scope(server, make_config, caplog):
    seed(server, 1)
    server.fail_next(10_000, 403, verb="list", path="re:^/api/v1/pods$")
    config = make_config(resources=[Pod], mode="fallback", sync_timeout=30)
    start = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="cloudcoil_cache"):
        with config:
            assert time.monotonic() - start < 2
            assert names(Pod.list()) == {"pod-0"}  # from the API server
            assert config.cache.status().errors  # type: ignore[union-attr]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "fallback" in r.getMessage()]
    assert warnings, [r.getMessage() for r in caplog.records]
    assert "Forbidden" in warnings[0].getMessage() or "403" in warnings[0].getMessage()


def test_strict_mode_raises_cache_sync_timeout_when_the_server_does_not_answer(server, make_config):
    server.set_delay(1.0)
    config = make_config(resources=[Pod], mode="strict", sync_timeout=0.3)
    start = time.monotonic()
    with pytest.raises(CacheSyncTimeout, match="Pod in all namespaces"):
        with config:
            pytest.fail("the scope must not be entered")  # pragma: no cover
    assert time.monotonic() - start < 0.9
    assert not config.cache.status().started  # type: ignore[union-attr]
    assert cloudcoil_threads() == []


def test_after_the_last_exit_no_thread_is_left_and_exit_is_quick_with_three_kinds(server, make_config):
    seed(server, 3)
    server.create("configmaps", make_configmap("settings"))
    config = make_config(resources=[Pod, ConfigMap, Service])
    for kind in (Pod, ConfigMap, Service):
        config.cache.get_informer(kind).on_add(lambda obj: None)  # type: ignore[union-attr]
    config.activate()
    try:
        server.wait_for_watches(3)
        assert len(reflector_threads()) == 3
        assert len(cloudcoil_threads()) == 6  # a reflector and one handler thread per kind
    finally:
        start = time.monotonic()
        config.deactivate()
        elapsed = time.monotonic() - start
    assert cloudcoil_threads() == []
    assert elapsed < 0.5  # a stop that waited for a watch or read to time out would take seconds


def test_set_default_serves_threads_without_a_scope_and_close_stops_its_threads(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod], mode="strict")
    config.set_default()
    try:
        server.clear_requests()
        results: list[object] = []

        def request_handler() -> None:  # a web-app worker thread: no scope, no inherited context
            try:
                results.append(names(Pod.list()))
            except Exception as exc:  # pragma: no cover - reported below
                results.append(exc)

        worker = threading.Thread(target=request_handler, name="test-wsgi-worker")
        worker.start()
        worker.join(5)
        assert results == [{"pod-0", "pod-1"}]
        assert reads(server) == []
        assert len(reflector_threads()) == 1
    finally:
        config.close()
    assert cloudcoil_threads() == []
    assert not config.cache.status().started  # type: ignore[union-attr]


def test_exit_right_after_entering_does_not_wait_for_a_slow_first_list(server, make_config):
    # The window is racy (the LIST may not be on the wire yet), so the exit is timed several times.
    server.set_delay(0.25)
    slow_exits = []
    for _ in range(6):
        config = make_config(resources=[Pod], wait_for_sync=False)
        config.activate()
        start = time.monotonic()
        config.deactivate()
        elapsed = time.monotonic() - start
        if elapsed >= 0.15:
            slow_exits.append(round(elapsed, 3))
    assert slow_exits == []


def test_a_config_can_be_entered_again_after_its_last_scope_exited(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod], mode="strict")
    with config:
        assert names(Pod.list()) == {"pod-0", "pod-1"}
    server.delete("pods", "pod-0")
    server.create("pods", make_pod("pod-2"))
    with config:
        assert names(Pod.list()) == {"pod-1", "pod-2"}
        assert len(reflector_threads()) == 1
    assert cloudcoil_threads() == []


def test_set_default_on_a_second_config_stops_the_first_ones_cache(server, make_config):
    seed(server, 1)
    first, second = make_config(resources=[Pod]), make_config(resources=[ConfigMap])
    first.set_default()
    try:
        assert first.cache.status().started  # type: ignore[union-attr]
        second.set_default()
        assert not first.cache.status().started  # type: ignore[union-attr]
        assert second.cache.status().started  # type: ignore[union-attr]
        assert [t.name for t in reflector_threads()] == ["cloudcoil-reflector-configmaps@*"]
    finally:
        second.close()
        first.close()
    assert cloudcoil_threads() == []


def test_the_last_exit_lets_a_handlers_current_call_finish_and_drops_its_queued_events(server, make_config):
    config = make_config(resources=[Pod])
    informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
    entered, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def slow(pod) -> None:
        calls.append(pod.metadata.name)
        entered.set()
        release.wait(10)

    canary_threads: list[threading.Thread] = []
    canary_called = threading.Event()

    def canary(pod) -> None:
        canary_threads.append(threading.current_thread())
        canary_called.set()

    handle = informer.on_add(slow)
    # another view, registered after `slow`'s: its lane is stopped after slow's
    config.cache.get_informer(Pod).on_add(canary)  # type: ignore[union-attr]
    config.activate()
    try:
        for i in range(5):
            server.create("pods", make_pod(f"pod-{i}"))
        assert entered.wait(5)
        assert canary_called.wait(5)
        canary_thread = canary_threads[0]

        def release_once_the_listeners_are_stopped() -> None:
            canary_thread.join(10)  # the canary's thread ends once the exit stopped the listeners
            release.set()

        releaser = threading.Thread(target=release_once_the_listeners_are_stopped, name="test-releaser")
        releaser.start()
    finally:
        config.deactivate()
    releaser.join(10)
    assert calls == ["pod-0"]
    assert handle.backlog == 0
    assert cloudcoil_threads() == []


def test_a_strict_set_default_that_fails_to_sync_raises_and_can_be_retried(server, make_config):
    server.fail_next(3, 403, verb="list")
    config = make_config(resources=[Pod], mode="strict")
    with pytest.raises(Forbidden):
        config.set_default()
    assert not config.cache.status().started  # type: ignore[union-attr]
    assert cloudcoil_threads() == []
    server.clear_faults()
    seed(server, 1)
    config.set_default()  # not a no-op: the failed attempt did not stay installed as the default
    try:
        assert config.cache.status().ready  # type: ignore[union-attr]
        assert names(Pod.list()) == {"pod-0"}
    finally:
        config.close()
    assert cloudcoil_threads() == []


def test_a_cache_given_to_two_configs_is_refused_by_the_second(server, kubeconfig):
    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config
    from cloudcoil_cache.errors import CloudcoilError

    cache = Cache(resources=[Pod])
    first, second = Config(kubeconfig=kubeconfig, cache=cache), Config(kubeconfig=kubeconfig, cache=cache)
    try:
        first.initialize()
        with pytest.raises(CloudcoilError, match="another Config"):
            second.initialize()
    finally:
        first.close()
        second.close()


def test_a_scope_entered_while_another_thread_waits_for_the_sync_also_waits_for_it(server, make_config):
    seed(server, 2)
    server.set_delay(0.5)  # the first LIST takes a while
    config = make_config(resources=[Pod], mode="strict")
    first_in, leave = threading.Event(), threading.Event()

    def first_scope() -> None:
        with config:
            first_in.set()
            leave.wait(10)

    first = threading.Thread(target=first_scope, name="test-first-scope")
    first.start()
    try:
        server.wait_for_request(lambda r: r.verb == "list")  # the first scope is waiting for its sync
        assert not first_in.is_set()
        with config:
            listed = names(Pod.list())  # strict: raises "not synced yet" if this scope did not wait
    finally:
        leave.set()
        first.join(10)
    assert listed == {"pod-0", "pod-1"}


def test_fallback_mode_enters_after_the_sync_timeout_with_a_warning(server, make_config, caplog):
    server.set_delay(0.6)
    config = make_config(resources=[Pod], mode="fallback", sync_timeout=0.2)
    start = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="cloudcoil_cache"):
        with config:
            entered_after = time.monotonic() - start
            assert not config.cache.status().ready  # type: ignore[union-attr]
    assert 0.2 <= entered_after < 0.55
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("did not sync within 0.2s" in w and "Pod" in w for w in warnings), warnings


def test_leaving_a_scope_that_was_never_entered_raises_and_changes_nothing(server, make_config):
    config = make_config(resources=[Pod])
    with config:
        other = make_config(resources=[ConfigMap])
        with pytest.raises(RuntimeError, match="out of order"):
            other.deactivate()
        assert config.cache.status().started  # type: ignore[union-attr]
    assert cloudcoil_threads() == []


def test_a_with_scope_on_the_default_config_nests_inside_it_and_close_stops_the_cache(server, make_config):
    seed(server, 1)
    config = make_config(resources=[Pod], mode="strict")
    config.set_default()
    try:
        with config:
            assert len(reflector_threads()) == 1
            assert names(Pod.list()) == {"pod-0"}
        assert config.cache.status().started  # type: ignore[union-attr]
        assert names(Pod.list()) == {"pod-0"}  # served through the default, no scope open
    finally:
        config.close()
    assert cloudcoil_threads() == []


_AT_EXIT_SCRIPT = """
import atexit, tempfile, threading
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod

def report():  # registered first, so it runs after the library's own exit hook
    alive = [t.name for t in threading.enumerate() if t.name.startswith("cloudcoil-")]
    print("alive at exit:", alive, flush=True)

atexit.register(report)
server = FakeAPIServer().start()
server.create("pods", make_pod("web-0"))
config = Config(kubeconfig=server.write_kubeconfig(tempfile.mktemp()), cache=Cache(resources=[Pod]))
config.set_default()
print("listed:", [p.metadata.name for p in Pod.list()], flush=True)
"""


def test_interpreter_exit_closes_the_default_config_and_joins_its_threads(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _AT_EXIT_SCRIPT], capture_output=True, text=True, timeout=30, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "listed: ['web-0']" in done.stdout
    assert "alive at exit: []" in done.stdout, done.stdout
    assert "Traceback" not in done.stderr
