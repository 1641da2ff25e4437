"""Issue 5: `await Pod.async_list/async_get` route, fail and fall back exactly like the sync reads."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest
from _aio_support import Lateness

from cloudcoil_cache.errors import CacheUnavailableError, ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod


@attrs.frozen
class Read:
    """One read: the Cache options, the method and its arguments, and the outcome per mode."""

    options: dict[str, Any]
    method: str
    kwargs: dict[str, Any]
    strict: tuple[Any, ...]
    fallback: tuple[Any, ...]


DEFAULT_ONLY = {"resources": [Pod], "namespaces": ["default"]}
WEB = ["web-0", "web-1", "web-2"]

# Outcomes: ("cache", result) served from memory; ("api", result) read from the API server;
# ("error", ErrorType, text in the message).
READS = {
    "list-in-the-cached-namespace": Read(
        DEFAULT_ONLY, "list", {"namespace": "default"}, ("cache", WEB), ("cache", WEB)
    ),
    "list-with-a-label-selector-filters-in-memory": Read(
        DEFAULT_ONLY,
        "list",
        {"namespace": "default", "label_selector": "app in (web),app!=db"},
        ("cache", WEB),
        ("cache", WEB),
    ),
    "list-outside-the-cached-namespace": Read(
        DEFAULT_ONLY,
        "list",
        {"namespace": "other"},
        ("error", CacheUnavailableError, "namespace outside the cache"),
        ("api", ["db-0"]),
    ),
    "list-all-namespaces-from-a-one-namespace-cache": Read(
        DEFAULT_ONLY,
        "list",
        {"all_namespaces": True},
        ("error", CacheUnavailableError, "namespace outside the cache"),
        ("api", ["db-0", *WEB]),
    ),
    "list-of-a-kind-not-cached": Read(
        {"resources": [ConfigMap]},
        "list",
        {"namespace": "default"},
        ("error", CacheUnavailableError, "kind not cached"),
        ("api", WEB),
    ),
    "list-with-a-selector-the-informer-cannot-serve": Read(
        {**DEFAULT_ONLY, "label_selector": "app=web"},
        "list",
        {"namespace": "default", "label_selector": "tier=db"},
        ("error", CacheUnavailableError, "selector not servable"),
        ("api", []),
    ),
    "get-in-the-cache": Read(
        DEFAULT_ONLY, "get", {"name": "web-1", "namespace": "default"}, ("cache", "web-1"), ("cache", "web-1")
    ),
    "get-defaults-to-the-config-namespace": Read(
        DEFAULT_ONLY, "get", {"name": "web-2"}, ("cache", "web-2"), ("cache", "web-2")
    ),
    "get-missing-from-a-healthy-informer": Read(
        DEFAULT_ONLY,
        "get",
        {"name": "nope", "namespace": "default"},
        ("error", ResourceNotFound, "not found"),
        ("error", ResourceNotFound, "not found"),
    ),
    "get-outside-the-cached-namespace": Read(
        DEFAULT_ONLY,
        "get",
        {"name": "db-0", "namespace": "other"},
        ("error", CacheUnavailableError, "namespace outside the cache"),
        ("api", "db-0"),
    ),
    "get-of-a-kind-not-cached": Read(
        {"resources": [ConfigMap]},
        "get",
        {"name": "web-0"},
        ("error", CacheUnavailableError, "kind not cached"),
        ("api", "web-0"),
    ),
}


def _result(value: Any) -> Any:
    if isinstance(value, Pod):
        return value.name
    return sorted(p.name for p in value)


def api_reads(server: FakeAPIServer) -> list[str]:
    """The GET/LIST requests (not watches) the server received since the last clear."""
    return [r.verb for r in server.requests if r.verb in ("get", "list")]


def _outcome(server: FakeAPIServer, call: Any) -> tuple[Any, ...]:
    server.clear_requests()
    try:
        value = call()
    except (CacheUnavailableError, ResourceNotFound) as exc:
        return ("error", type(exc), str(exc))
    return ("api" if api_reads(server) else "cache", _result(value))


@pytest.mark.parametrize("mode", ["strict", "fallback"])
@pytest.mark.parametrize("read", list(READS.values()), ids=list(READS))
def test_async_reads_route_and_fail_exactly_like_sync_reads(server, seeded, make_config, read: Read, mode: str):
    sync_cfg = make_config(namespace="default", mode=mode, **read.options)
    async_cfg = make_config(namespace="default", mode=mode, **read.options)
    with sync_cfg:
        sync_outcome = _outcome(server, lambda: getattr(Pod, read.method)(**read.kwargs))

    async def async_read() -> tuple[Any, ...]:
        async with async_cfg:
            server.clear_requests()
            try:
                value = await getattr(Pod, f"async_{read.method}")(**read.kwargs)
            except (CacheUnavailableError, ResourceNotFound) as exc:
                return ("error", type(exc), str(exc))
            return ("api" if api_reads(server) else "cache", _result(value))

    async_outcome = asyncio.run(async_read())
    assert async_outcome == sync_outcome
    expected = read.strict if mode == "strict" else read.fallback
    if expected[0] == "error":
        assert async_outcome[:2] == expected[:2]
        assert expected[2] in async_outcome[2]
    else:
        assert async_outcome == expected


@pytest.mark.asyncio
async def test_paused_async_reads_go_to_the_api_server_in_this_task_only(server, seeded, make_config):
    cfg = make_config(resources=[Pod], namespaces=["default"], mode="strict")
    async with cfg:
        other_task_done = asyncio.Event()

        async def unpaused_read() -> bool:
            await other_task_done.wait()
            server.clear_requests()
            await Pod.async_list()
            return not api_reads(server)

        unpaused = asyncio.ensure_future(unpaused_read())
        with cfg.cache.pause():
            server.clear_requests()
            assert sorted(p.name for p in await Pod.async_list()) == WEB
            assert api_reads(server) == ["list"]
            other_task_done.set()
            assert await unpaused  # the task created before pause() still reads from memory


@pytest.mark.asyncio
async def test_async_client_with_cached_false_reads_live_inside_a_cached_scope(server, seeded, make_config):
    cfg = make_config(resources=[Pod], namespaces=["default"], mode="strict")
    async with cfg:
        server.stall_watches()  # the cache will not hear about the next pod
        server.create("pods", make_pod("late", "default"), "default")
        with pytest.raises(ResourceNotFound):
            await Pod.async_get("late")
        live = await Pod.async_client(cfg, cached=False)
        server.clear_requests()
        assert (await live.get("late")).name == "late"
        assert sorted(p.name for p in await live.list(namespace="default")) == ["late", *WEB]
        assert api_reads(server) == ["get", "list"]
        with pytest.raises(ResourceNotFound, match="nope"):
            await live.get("nope", namespace="default")
        server.resume_watches()


@pytest.mark.asyncio
async def test_async_list_pages_from_memory_with_limit_and_continue(server, seeded, make_config):
    cfg = make_config(resources=[Pod], namespaces=["default"], mode="strict")
    async with cfg:
        server.clear_requests()
        first = await Pod.async_list(limit=2)
        assert [p.name for p in first.items] == ["web-0", "web-1"]
        assert first.continue_
        rest = await Pod.async_list(limit=2, continue_=first.continue_)
        assert [p.name for p in rest.items] == ["web-2"]
        assert not rest.continue_
        assert api_reads(server) == []


@pytest.mark.asyncio
async def test_the_first_async_read_of_a_lazy_kind_syncs_its_informer_off_the_loop(server, seeded, make_config):
    cfg = make_config(resources=None, namespaces=["default"], mode="strict")
    async with cfg:
        server.set_delay(1.0)  # the informer's LIST is slow: a sync on the loop would block it 1 s
        async with Lateness() as probe:
            names = sorted(p.name for p in await Pod.async_list())
        server.set_delay(0)
        assert names == WEB
        assert probe.worst < 0.5, f"the loop was blocked for {probe.worst:.3f}s"
        server.clear_requests()
        assert (await Pod.async_get("web-0")).name == "web-0"
        assert api_reads(server) == []  # now served from the informer


@pytest.mark.parametrize("mode", ["strict", "fallback"])
def test_async_reads_while_the_informer_fails_behave_like_sync_reads(server, seeded, make_config, mode: str):
    # the informer's LISTs are forbidden; single-object GETs are not
    server.fail_next(1000, 403, verb="list", path="re:^/api/v1/namespaces/default/pods$")
    sync_cfg = make_config(namespace="default", resources=[Pod], namespaces=["default"], mode="fallback")
    async_cfg = make_config(namespace="default", resources=[Pod], namespaces=["default"], mode="fallback")

    def read(call: Any) -> tuple[Any, ...]:
        server.clear_requests()
        try:
            return ("ok", call().name, api_reads(server))
        except CacheUnavailableError as exc:
            return ("error", str(exc), api_reads(server))

    with sync_cfg:  # fallback mode: the scope is entered in spite of the failing informer
        with getattr(sync_cfg.cache, f"{mode}_mode")():
            sync_outcome = read(lambda: Pod.get("web-0"))

    async def async_read() -> tuple[Any, ...]:
        async with async_cfg:
            with getattr(async_cfg.cache, f"{mode}_mode")():
                server.clear_requests()
                try:
                    return ("ok", (await Pod.async_get("web-0")).name, api_reads(server))
                except CacheUnavailableError as exc:
                    return ("error", str(exc), api_reads(server))

    async_outcome = asyncio.run(async_read())
    assert async_outcome == sync_outcome
    if mode == "strict":
        assert async_outcome[0] == "error"
        assert "informer failing" in async_outcome[1] and "Forbidden" in async_outcome[1]
    else:
        assert async_outcome == ("ok", "web-0", ["get"])


@pytest.mark.asyncio
@pytest.mark.parametrize("policy", ["pause", "fallback_mode"])
async def test_temporary_policies_apply_to_the_current_task_only(server, seeded, make_config, policy: str):
    cfg = make_config(resources=[Pod], namespaces=["default"], mode="strict")
    async with cfg:
        inside = asyncio.Event()
        leave = asyncio.Event()

        async def under_policy() -> list[str]:
            with getattr(cfg.cache, policy)():
                inside.set()
                await leave.wait()  # the other task reads while this block is open
                return sorted(p.name for p in await Pod.async_list(namespace="other"))

        task = asyncio.ensure_future(under_policy())
        await inside.wait()
        with pytest.raises(CacheUnavailableError, match="namespace outside the cache"):
            await Pod.async_list(namespace="other")  # this task is still strict
        leave.set()
        assert await task == ["db-0"]
