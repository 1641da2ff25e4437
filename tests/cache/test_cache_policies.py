"""pause(), strict_mode() and fallback_mode() change the read policy of the current thread or task only."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable

import pytest
from cluster_support import names, reads, requests_to, seed

from cloudcoil_cache.errors import CacheUnavailableError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.testing import make_configmap

TIMEOUT = 5


def _run_threads(*targets: Callable[[], None]) -> list[BaseException]:
    """Run each target on its own named thread, join them all, and return what they raised."""
    errors: list[BaseException] = []

    def wrap(target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                target()
            except BaseException as exc:  # re-raised by the test
                errors.append(exc)

        return run

    threads = [threading.Thread(target=wrap(t), name=f"test-policy-{i}") for i, t in enumerate(targets)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT * 2)
    assert not [t.name for t in threads if t.is_alive()]
    return errors


def test_pause_sends_reads_in_the_block_to_the_server_and_restores_the_cache_after(server, make_config):
    seed(server, 2)
    config = make_config(resources=[Pod], mode="strict")
    with config:
        server.clear_requests()
        with config.cache.pause():  # type: ignore[union-attr]
            assert config.cache.paused  # type: ignore[union-attr]
            assert names(Pod.list()) == {"pod-0", "pod-1"}
            assert Pod.get("pod-0").metadata.name == "pod-0"
        assert len(reads(server)) == 2
        server.clear_requests()
        assert names(Pod.list()) == {"pod-0", "pod-1"}
        assert reads(server) == []


def test_pause_in_one_thread_leaves_another_threads_reads_on_the_cache(server, make_config):
    seed(server, 2)
    seed(server, 2, namespace="other", prefix="theirs")
    config = make_config(resources=[Pod], mode="strict")
    paused, other_done = threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    def pausing() -> None:
        with config, config.cache.pause():  # type: ignore[union-attr]
            paused.set()
            assert other_done.wait(TIMEOUT)
            seen["paused"] = names(Pod.list(namespace="default"))

    def other() -> None:
        with config:
            assert paused.wait(TIMEOUT)
            seen["other"] = names(Pod.list(namespace="other"))
            seen["other-paused"] = config.cache.paused  # type: ignore[union-attr]
            other_done.set()

    with config:
        server.clear_requests()
        errors = _run_threads(pausing, other)
    assert errors == []
    assert seen == {"paused": {"pod-0", "pod-1"}, "other": {"theirs-0", "theirs-1"}, "other-paused": False}
    assert requests_to(server, "list", "/api/v1/namespaces/default/pods")
    assert requests_to(server, "list", "/api/v1/namespaces/other/pods") == []


@pytest.mark.parametrize(
    ("default", "block", "inside_raises", "outside_raises"),
    [
        pytest.param("fallback", "strict_mode", True, False, id="strict-mode-in-a-fallback-cache"),
        pytest.param("strict", "fallback_mode", False, True, id="fallback-mode-in-a-strict-cache"),
    ],
)
def test_a_temporary_mode_affects_only_the_thread_that_entered_it(
    server, make_config, default, block, inside_raises, outside_raises
):
    server.create("configmaps", make_configmap("settings"))  # ConfigMap is not cached: never servable
    config = make_config(resources=[Pod], mode=default)
    entered, other_read = threading.Event(), threading.Event()
    outcome: dict[str, Any] = {}

    def read_configmap() -> str:
        try:
            return ConfigMap.get("settings").metadata.name
        except CacheUnavailableError as exc:
            return f"raised: {exc.reason}"

    def inside() -> None:
        with config, getattr(config.cache, block)():
            outcome["inside-mode"] = config.cache.mode  # type: ignore[union-attr]
            entered.set()
            assert other_read.wait(TIMEOUT)
            outcome["inside"] = read_configmap()
        with config:
            outcome["inside-after-the-block"] = read_configmap()

    def outside() -> None:
        with config:
            assert entered.wait(TIMEOUT)
            outcome["outside-mode"] = config.cache.mode  # type: ignore[union-attr]
            outcome["outside"] = read_configmap()
            other_read.set()

    with config:
        errors = _run_threads(inside, outside)
    assert errors == []
    other = "strict" if default == "fallback" else "fallback"
    assert (outcome["inside-mode"], outcome["outside-mode"]) == (other, default)
    assert outcome["inside"].startswith("raised: kind not cached") is inside_raises
    assert outcome["outside"].startswith("raised: kind not cached") is outside_raises
    assert outcome["inside-after-the-block"] == outcome["outside"]


def test_a_temporary_mode_in_one_asyncio_task_does_not_leak_into_another(server, make_config):
    server.create("configmaps", make_configmap("settings"))
    config = make_config(resources=[Pod], mode="fallback")

    async def main() -> tuple[Any, Any]:
        async with config:
            entered, other_read = asyncio.Event(), asyncio.Event()

            async def strict_task() -> Any:
                with config.cache.strict_mode():  # type: ignore[union-attr]
                    entered.set()
                    await other_read.wait()
                    try:
                        return await ConfigMap.async_get("settings")
                    except CacheUnavailableError as exc:
                        return exc

            async def other_task() -> Any:
                await entered.wait()
                try:
                    return await ConfigMap.async_get("settings")
                finally:
                    other_read.set()

            return tuple(await asyncio.wait_for(asyncio.gather(strict_task(), other_task()), TIMEOUT))

    strict_result, other_result = asyncio.run(main())
    assert isinstance(strict_result, CacheUnavailableError)
    assert other_result.metadata.name == "settings"
