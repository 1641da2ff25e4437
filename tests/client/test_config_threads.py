"""A thread with no Config of its own while a scope is open elsewhere: one warning per thread (issue 19)."""

from __future__ import annotations

import contextvars
import logging
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from cloudcoil_cache.client import Config, _config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod

LOGGER = "cloudcoil_cache"


@pytest.fixture
def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPIServer]:
    """A second cluster, the one ``KUBECONFIG`` names: where a thread without a Config reads."""
    with FakeAPIServer() as other:
        other.create("pods", make_pod("from-env"), "default")
        monkeypatch.setenv("KUBECONFIG", str(other.write_kubeconfig(tmp_path / "env-kubeconfig")))
        monkeypatch.setattr(_config, "_implicit", None)  # forget a Config discovered by another test
        try:
            yield other
        finally:
            if _config._implicit is not None:
                _config._implicit.close()


@pytest.fixture
def scoped(server: FakeAPIServer, config: Config) -> Config:
    """``config`` (for ``server``, which holds one pod, "scoped")."""
    server.create("pods", make_pod("scoped"), "default")
    return config


@pytest.fixture
def warnings_seen(caplog: pytest.LogCaptureFixture) -> Callable[[], list[str]]:
    caplog.set_level(logging.WARNING, logger=LOGGER)

    def seen() -> list[str]:
        return [
            r.getMessage()
            for r in caplog.records
            if r.name.startswith(LOGGER) and "has no Config of its own" in r.getMessage()
        ]

    return seen


def in_thread(name: str, func: Callable[[], Any]) -> Any:
    """``func()`` run in a new thread called ``name``; its result, or its exception re-raised here."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = func()
        except BaseException as exc:  # handed to the caller
            outcome["error"] = exc

    thread = threading.Thread(target=run, name=name)
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), f"{name} did not finish"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def names() -> list[str]:
    return sorted(p.metadata.name for p in Pod.list())


def test_a_thread_without_a_config_warns_once_and_reads_through_the_environments_config(
    environment: FakeAPIServer, scoped: Config, warnings_seen: Callable[[], list[str]]
) -> None:
    with scoped:
        assert names() == ["scoped"]
        first, second = in_thread("report-worker", lambda: (names(), names()))
        assert names() == ["scoped"]
    assert first == second == ["from-env"]  # as before: the Config from the environment
    (message,) = warnings_seen()
    assert "'report-worker'" in message
    assert "config.set_default()" in message and "contextvars.copy_context()" in message


def test_every_thread_without_a_config_is_warned_once(
    environment: FakeAPIServer, scoped: Config, warnings_seen: Callable[[], list[str]]
) -> None:
    with scoped:
        for name in ("worker-1", "worker-2"):
            assert in_thread(name, lambda: [names(), Pod.get("from-env").metadata.name]) == [["from-env"], "from-env"]
    warned = warnings_seen()
    assert len(warned) == 2
    assert "'worker-1'" in warned[0] and "'worker-2'" in warned[1]


def test_a_thread_run_in_a_context_copied_inside_the_scope_uses_that_config_silently(
    environment: FakeAPIServer, scoped: Config, warnings_seen: Callable[[], list[str]]
) -> None:
    with scoped:
        context = contextvars.copy_context()
        assert in_thread("copied", lambda: context.run(names)) == ["scoped"]
    assert warnings_seen() == []


def test_a_thread_under_the_process_default_uses_it_silently(
    environment: FakeAPIServer,
    scoped: Config,
    kubeconfig: str,
    make_config: Callable[..., Config],
    warnings_seen: Callable[[], list[str]],
) -> None:
    default = make_config(kubeconfig=kubeconfig)
    default.set_default()
    try:
        with scoped:
            assert in_thread("request-handler", names) == ["scoped"]
    finally:
        default.close()
    assert warnings_seen() == []


def test_no_warning_while_no_scope_is_open_anywhere(
    environment: FakeAPIServer, scoped: Config, warnings_seen: Callable[[], list[str]]
) -> None:
    with scoped:
        assert names() == ["scoped"]
    assert in_thread("after-the-scope", names) == ["from-env"]
    assert names() == ["from-env"]  # the main thread has no scope now either
    assert warnings_seen() == []


def test_the_thread_that_holds_the_scope_is_not_warned(
    environment: FakeAPIServer, scoped: Config, warnings_seen: Callable[[], list[str]]
) -> None:
    def scoped_reads() -> list[str]:
        with scoped:
            return names() + names()

    assert in_thread("scope-holder", scoped_reads) == ["scoped", "scoped"]
    assert warnings_seen() == []


@pytest.mark.parametrize(
    "registered", ["before the scope", "on the running informer", "from a thread of its own", "inside cache.pause()"]
)
def test_a_handlers_own_resource_calls_read_through_its_scopes_config(
    environment: FakeAPIServer,
    server: FakeAPIServer,
    kubeconfig: str,
    make_config: Callable[..., Config],
    warnings_seen: Callable[[], list[str]],
    registered: str,
) -> None:
    from cloudcoil_cache.caching import Cache

    server.create("pods", make_pod("scoped"), "default")
    cached = make_config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod]))
    seen: list[list[str]] = []
    paused: list[bool] = []
    done = threading.Event()

    def on_add(pod: Pod) -> None:
        seen.append(names())  # a handler thread: no `with config:` of its own
        paused.append(cached.cache.paused)  # type: ignore[union-attr]
        done.set()

    informer = cached.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
    if registered == "before the scope":
        informer.on_add(on_add)
    with cached:
        if registered == "on the running informer":
            informer.on_add(on_add)
        elif registered == "from a thread of its own":  # no Config in that thread: nothing to lend
            in_thread("registrar", lambda: informer.on_add(on_add))
        elif registered == "inside cache.pause()":  # the registering thread's policy is not lent
            with cached.cache.pause():  # type: ignore[union-attr]
                informer.on_add(on_add)
        assert done.wait(10)
    assert seen[0] == ["scoped"] and paused[0] is False
    assert warnings_seen() == []
