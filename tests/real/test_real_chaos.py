"""Chaos against a real server: an informer under writes survives the faults kube-apiserver and etcd can
really produce, then agrees with the server object for object (store and handlers).

Faults: etcd compaction, kube-apiserver restart (a fresh watch cache: 410s), etcd restart, dropped
connections (a proxy that cuts them), a refused-connection window, and a token rotated in the static token
file followed by an apiserver restart (the client re-reads its tokenFile after the 401). The compaction
before that restart makes the relist after it certain: one restart (the slowest fault) serves
both the 410s and the 401s. The run lasts ``CHAOS_REAL_ROUNDS`` rounds of all faults (default 1: about
20 s); figures are printed.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from _proxy import CuttingProxy
from cluster_support import FAST

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.testing import RealAPIServer

NS = "chaos"


class Writer:
    """Creates, updates and deletes ConfigMaps over raw HTTP until stopped; failures (the server is down)
    are counted and skipped."""

    def __init__(self, server: RealAPIServer) -> None:
        self.server = server
        self.stop = threading.Event()
        self.writes = 0
        self.failures = 0
        self.thread = threading.Thread(target=self._run, name="chaos-writer")

    def _run(self) -> None:
        path = f"/api/v1/namespaces/{NS}/configmaps"
        i = 0
        while not self.stop.is_set():
            i += 1
            name = f"cm-{i % 40}"
            op = i % 3
            try:
                if op == 0:
                    status, _ = self.server.request("DELETE", f"{path}/{name}", timeout=5)
                elif op == 1:
                    status, _ = self.server.request(
                        "POST", path, {"metadata": {"name": name}, "data": {"i": str(i)}}, timeout=5
                    )
                else:
                    status, _ = self.server.request(
                        "PATCH",
                        f"{path}/{name}",
                        {"data": {"i": str(i)}},
                        content_type="application/merge-patch+json",
                        timeout=5,
                    )
            except OSError:
                status = 0
            if status in (200, 201):
                self.writes += 1
            elif status not in (404, 409):
                self.failures += 1
                self.stop.wait(0.05)  # down: do not spin


class Mirror:
    """The state the handlers describe: name → resourceVersion, guarded by a Condition."""

    def __init__(self) -> None:
        self.objects: dict[str, str] = {}
        self.cond = threading.Condition()
        self.deletes = 0

    def put(self, obj: Any) -> None:
        with self.cond:
            self.objects[obj.metadata.name] = obj.metadata.resource_version
            self.cond.notify_all()

    def remove(self, obj: Any) -> None:
        with self.cond:
            self.objects.pop(obj.metadata.name, None)
            self.deletes += 1
            self.cond.notify_all()


@pytest.fixture
def chaos_server(real_api_server: RealAPIServer) -> Iterator[RealAPIServer]:
    """A server of its own: restarts and token rotation must not disturb the session's."""
    with RealAPIServer(real_api_server.assets) as server:
        assert server.request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})[0] == 201
        yield server


def server_state(server: RealAPIServer) -> dict[str, str]:
    status, body = server.request("GET", f"/api/v1/namespaces/{NS}/configmaps")
    assert status == 200, body
    return {i["metadata"]["name"]: i["metadata"]["resourceVersion"] for i in body["items"]}


def test_an_informer_survives_real_faults_and_converges(
    chaos_server: RealAPIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = chaos_server
    rounds = int(os.environ.get("CHAOS_REAL_ROUNDS", "1"))
    token_file = tmp_path / "token"
    writer = Writer(server)
    mirror = Mirror()
    with CuttingProxy(server.port) as proxy:
        kubeconfig = server.write_kubeconfig(tmp_path / "kc", namespace=NS, server=proxy.url, token_file=token_file)
        config = Config(
            kubeconfig=kubeconfig, cache=Cache(resources=[ConfigMap], namespaces=[NS], tuning=FAST, max_staleness=None)
        )
        informer = config.cache.get_informer(ConfigMap, sync=True)  # type: ignore[union-attr]
        assert informer is not None
        informer.on_add(mirror.put)
        informer.on_update(lambda old, new: mirror.put(new))
        informer.on_delete(mirror.remove)
        pace = threading.Event()  # never set: pacing between faults, not waiting for a condition
        faults: list[tuple[str, float]] = []

        def fault(name: str, action: Callable[[], Any]) -> None:
            started = time.monotonic()
            action()
            faults.append((name, time.monotonic() - started))
            pace.wait(1.0)

        def compact_rotate_and_restart() -> None:
            new = secrets.token_hex(16)
            server.compact()
            server.set_token("admin", new)
            server.restart_apiserver()
            token_file.write_text(new)  # after the restart: the client sees 401s first, then re-reads

        def refuse() -> None:
            proxy.block()
            pace.wait(2.0)
            proxy.unblock()

        started = time.monotonic()
        try:
            with config:
                writer.thread.start()
                pace.wait(1.0)
                for _ in range(rounds):
                    fault("cut connections", proxy.cut)
                    fault("compact etcd", server.compact)
                    fault("refuse connections 2 s", refuse)
                    fault("restart etcd", server.restart_etcd)
                    fault("compact + rotate token + restart kube-apiserver", compact_rotate_and_restart)
                    fault("cut connections", proxy.cut)
                writer.stop.set()
                writer.thread.join(30)
                expected = server_state(server)
                converge_start = time.monotonic()
                with mirror.cond:
                    converged = mirror.cond.wait_for(lambda: mirror.objects == expected, timeout=60)
                converge = time.monotonic() - converge_start
                assert converged, (
                    f"handlers: {sorted(mirror.objects.items())}\n"
                    f"server:   {sorted(expected.items())}\n{config.cache.status()}"
                )  # type: ignore[union-attr]
                store = {o.metadata.name: o.metadata.resource_version for o in informer.list()}
                assert store == expected
                relists = config.cache.status().informers[0].relist_count  # type: ignore[union-attr]
        finally:
            writer.stop.set()
            if writer.thread.is_alive():
                writer.thread.join(30)
            config.close()
    with capsys.disabled():
        print(
            f"\nreal chaos: {rounds} round(s), {len(faults)} faults in {time.monotonic() - started:.1f} s; "
            f"{writer.writes} writes ({writer.failures} failed while the server was down); "
            f"{relists} lists; {mirror.deletes} deletes delivered; converged {converge:.2f} s after the "
            f"last write; {len(expected)} objects"
        )
        for name, seconds in faults:
            print(f"  {name}: {seconds:.1f} s")
