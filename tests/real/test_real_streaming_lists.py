"""``Tuning(streaming_lists=True)`` on kube-apiserver 1.33: with the ``WatchList`` gate on (off by
default in 1.33) the sync is a streaming list; with it off (the session server) the 422 makes the
informer LIST+WATCH silently. Either way the cache and the handler events equal LIST+WATCH's."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import attrs
from cluster_support import FAST, Recorder

from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.testing import RealAPIServer

STREAMING = attrs.evolve(FAST, streaming_lists=True)
UNAVAILABLE = "streaming lists unavailable"


def _event(kind: str, value: Any) -> tuple[str, str, str]:
    obj = value[1] if isinstance(value, tuple) else value
    return kind, obj.metadata.name, obj.metadata.resource_version


def compare_with_list_watch(kubeconfig: str, namespace: str) -> dict[str, Any]:
    """A streaming informer and a LIST+WATCH one side by side, through a sync and three writes."""
    live = Config(kubeconfig=kubeconfig, cache=False)
    client = ConfigMap.client(live)
    configs: list[Config] = []
    try:
        for i in range(5):
            client.create(ConfigMap(metadata=ObjectMeta(name=f"cm-{i}", namespace=namespace), data={"i": str(i)}))
        recorders = []
        for tuning in (STREAMING, FAST):
            config = Config(
                kubeconfig=kubeconfig, cache=Cache(tuning=tuning, resources=[ConfigMap], namespaces=[namespace])
            )
            configs.append(config)
            rec = Recorder()
            rec.hook(config.cache.get_informer(ConfigMap))  # type: ignore[union-attr]
            recorders.append(rec)
            config.__enter__()
        for rec in recorders:
            rec.wait(lambda ev: len(ev) >= 5, timeout=30)
        synced = [
            {o.name: o.metadata.resource_version for o in c.cache.get_informer(ConfigMap).list()} for c in configs
        ]  # type: ignore[union-attr]
        client.create(ConfigMap(metadata=ObjectMeta(name="late", namespace=namespace)))
        changed = client.get("cm-1", namespace)
        changed.data = {"i": "changed"}
        client.update(changed)
        client.delete("cm-2", namespace)
        for rec in recorders:
            rec.wait(lambda ev: "cm-2" in [n for k, n, _ in map(lambda e: _event(*e), ev) if k == "delete"], timeout=30)
        after = [{o.name: o.metadata.resource_version for o in c.cache.get_informer(ConfigMap).list()} for c in configs]  # type: ignore[union-attr]
        statuses = [c.cache.status().informers[0] for c in configs]  # type: ignore[union-attr]
        return {
            "synced": synced,
            "after": after,
            "events": [sorted(_event(k, v) for k, v in rec.events) for rec in recorders],
            "statuses": statuses,
        }
    finally:
        for config in reversed(configs):
            config.__exit__(None, None, None)
        live.close()


def check(result: dict[str, Any]) -> None:
    streamed, listed = result["synced"]
    assert streamed == listed and set(streamed) == {f"cm-{i}" for i in range(5)}
    assert result["after"][0] == result["after"][1]
    assert result["events"][0] == result["events"][1]
    assert sorted(k for k, _, _ in result["events"][0]) == ["add"] * 6 + ["delete", "update"]
    for status in result["statuses"]:
        assert status.last_error is None and status.relist_count == 1


def test_with_the_watch_list_gate_on_the_sync_is_a_streaming_list(real: RealAPIServer, tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="cloudcoil_cache.caching._reflector")
    with RealAPIServer(real.assets, apiserver_flags=["--feature-gates=WatchList=true"]) as server:
        assert server.request("POST", "/api/v1/namespaces", {"metadata": {"name": "streamed"}})[0] == 201
        result = compare_with_list_watch(server.write_kubeconfig(tmp_path / "kc", namespace="streamed"), "streamed")
    check(result)
    assert [r for r in caplog.records if UNAVAILABLE in r.getMessage()] == []


def test_with_the_watch_list_gate_off_the_informer_lists_and_watches_without_an_error(
    namespace: str, kubeconfig: str, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="cloudcoil_cache.caching._reflector")
    result = compare_with_list_watch(kubeconfig, namespace)
    check(result)
    (said,) = [r for r in caplog.records if UNAVAILABLE in r.getMessage()]
    assert "422" in said.getMessage() or "forbidden" in said.getMessage().lower()
