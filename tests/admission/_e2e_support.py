"""What the end-to-end admission scenarios (``_scenarios``) run on: one API server seen as raw HTTP
(``Cluster``), our webhook served and installed (``serving``, ``effective``), a load of dry-run creates
(``Load``) and loopback TCP proxies in front of webhook servers; kube-apiserver's wordings."""

from __future__ import annotations

import http.client
import itertools
import json
import selectors
import socket
import ssl
import threading
import urllib.parse
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from cluster_support import FAST
from real._proxy import CuttingProxy

from cloudcoil_cache.admission import AdmissionRequest, AdmissionWebhook, WebhookServer
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config

WAIT = 10.0  # the bound of every wait here (a condition, never a sleep)
MUTATED = "example.com/mutated"
ids = itertools.count()
#: kube-apiserver's words for our HTTP 504 (a handler past its route's deadline).
UNABLE = "the server was unable to return a response in the time allotted, but may still be processing the request"
#: kube-apiserver's words for our HTTP 500 (its body, {"message": "Admission webhook failed: <class>"}, is
#: not a Status: its client reports the cause as "unknown"); the fake says the same.
UNKNOWN = 'an error on the server ("unknown") has prevented the request from succeeding'


class Cluster:
    """One API server as the scenarios use it: raw HTTP (status, decoded body, ``Warning`` headers), the
    admin kubeconfig for Configs, and ``kubectl(*args)`` where the tier has one."""

    def __init__(
        self,
        name: str,
        url: str,
        kubeconfig: str,
        *,
        token: str | None = None,
        context: ssl.SSLContext | None = None,
        kubectl: Callable[..., Any] | None = None,
    ) -> None:
        self.name, self.url, self.kubeconfig = name, url, kubeconfig
        self.token, self.context, self.kubectl = token, context, kubectl
        self.configs: list[Config] = []

    def connection(self) -> http.client.HTTPConnection:
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme == "https":
            return http.client.HTTPSConnection(parts.netloc, context=self.context, timeout=30)
        return http.client.HTTPConnection(parts.netloc, timeout=30)

    def send(
        self, conn: http.client.HTTPConnection, method: str, path: str, body: Any = None
    ) -> tuple[int, Any, list[str]]:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers=headers)
        answer = conn.getresponse()
        raw = answer.read()
        try:
            decoded = json.loads(raw) if raw else None
        except ValueError:  # kube-apiserver's "404 page not found" for an API not served yet
            decoded = raw.decode(errors="replace")
        return answer.status, decoded, answer.headers.get_all("Warning") or []

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any, list[str]]:
        conn = self.connection()
        try:
            return self.send(conn, method, path, body)
        finally:
            conn.close()

    def namespace(self, prefix: str) -> str:
        name = f"{prefix}-{next(ids)}"
        status, body, _ = self.call(
            "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        )
        assert status == 201, body
        return name

    def config(self, namespace: str, *kinds: Any) -> Config:
        """A Config in ``namespace``; with ``kinds``, a strict cache of them in that namespace."""
        cache: Cache | bool = False
        if kinds:
            cache = Cache(resources=list(kinds), namespaces=namespace, mode="strict", tuning=FAST, max_staleness=0)
        config = Config(kubeconfig=self.kubeconfig, namespace=namespace, cache=cache)
        self.configs.append(config)
        return config

    def close(self) -> None:
        for config in self.configs:
            config.close()


# ------------------------------------------------------------------ helpers


def cm(name: str, labels: dict[str, str] | None = None, **annotations: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


def only(namespace: str) -> dict[str, Any]:
    return {"matchLabels": {"kubernetes.io/metadata.name": namespace}}


def same(got: Any, want: Any) -> None:
    """``got == want``, both shown when not (this module's asserts are not rewritten by pytest)."""
    assert got == want, f"\n got: {got!r}\nwant: {want!r}"


def failed_calling(webhook: str, detail: str) -> str:
    """kube-apiserver's message for a webhook that could not be called under failurePolicy Fail."""
    return f'Internal error occurred: failed calling webhook "{webhook}": failed to call webhook: {detail}'


class Seen:
    """What the handlers were called with: (route, name, dry_run)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[tuple[str, str, bool]] = []

    def add(self, route: str, request: AdmissionRequest[Any]) -> None:
        with self.lock:
            self.calls.append((route, request.name, request.dry_run))

    def has(self, route: str, name: str) -> bool:
        with self.lock:
            return any(r == route and n == name for r, n, _ in self.calls)


def effective(cluster: Cluster, path: str, seen: Seen, route: str, obj: dict[str, Any]) -> None:
    """``wait_effective``: dry-run creates of sentinels ``obj`` until one reached ``route``."""

    def probe() -> bool:
        name = f"sentinel-{next(ids)}"
        sentinel = json.loads(json.dumps(obj))
        sentinel["metadata"]["name"] = name
        cluster.call("POST", path + "?dryRun=All", sentinel)
        return seen.has(route, name)

    AdmissionWebhook.wait_effective(probe, timeout=WAIT)


@contextmanager
def serving(
    hook: AdmissionWebhook, config: Config, name: str, *, via: Any = None, **options: Any
) -> Iterator[WebhookServer]:
    """``hook`` on a WebhookServer (port 0), installed as ``name`` (``via``: what install sees as the
    server, e.g. a proxy in front of it); uninstalled and stopped at the end."""
    options.setdefault("max_concurrency", 16)
    server = WebhookServer(hook, port=0, **options)
    with server:
        hook.install(config, name=name, server=via(server) if via else server)
        try:
            yield server
        finally:
            AdmissionWebhook.uninstall(config, name)


def answer(result: tuple[int, Any, list[str]]) -> tuple[int, str | None, str | None]:
    status, body, _ = result
    if status < 300:
        return status, None, None
    return status, body.get("reason"), body.get("message")


class Load:
    """``threads`` threads sending dry-run ConfigMap creates to the API server, each on its own
    keep-alive connection, until stopped; every answer but 201 (or an exception) is a failure."""

    def __init__(self, cluster: Cluster, namespace: str, threads: int = 8, labels: dict[str, str] | None = None):
        self.cluster, self.path = cluster, f"/api/v1/namespaces/{namespace}/configmaps?dryRun=All"
        self.labels = labels
        self.stop = threading.Event()
        self.cond = threading.Condition()
        self.done = 0
        self.failures: list[str] = []
        self.threads = [threading.Thread(target=self._run, args=(i,), name=f"adm-load-{i}") for i in range(threads)]

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(60)

    def wait_for(self, n: int, timeout: float = 60.0) -> None:
        """Until ``n`` more creates were answered (or one failed)."""
        with self.cond:
            target = self.done + n
            assert self.cond.wait_for(lambda: self.done >= target or bool(self.failures), timeout), self.done

    def _run(self, index: int) -> None:
        conn = self.cluster.connection()
        try:
            for count in itertools.count():
                if self.stop.is_set():
                    return
                obj = cm(f"load-{index}-{count}", self.labels)
                try:
                    status, body, _ = self.cluster.send(conn, "POST", self.path, obj)
                    failure = None if status == 201 else f"{status}: {body and body.get('message')}"
                except (OSError, http.client.HTTPException) as exc:
                    failure = f"{type(exc).__name__}: {exc}"
                    conn.close()
                    conn = self.cluster.connection()
                with self.cond:
                    if failure is None:
                        self.done += 1
                    else:
                        self.failures.append(failure)
                    self.cond.notify_all()
        finally:
            conn.close()


class Via:
    """What ``install(server=...)`` sees: the proxy's url, the server's CA bundle and its listener."""

    def __init__(self, server: WebhookServer, proxy: CuttingProxy) -> None:
        self.server, self.proxy = server, proxy

    @property
    def url(self) -> str:
        return self.proxy.url

    @property
    def ca_bundle(self) -> bytes:
        return self.server.ca_bundle

    def add_ca_bundle_listener(self, listener: Callable[[bytes], None]) -> None:
        self.server.add_ca_bundle_listener(listener)


def served_leaf(server: WebhookServer) -> bytes:
    context = ssl.create_default_context(cadata=server.ca_bundle.decode())
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


class RoundRobinProxy(CuttingProxy):
    """A loopback TCP proxy handing each new connection to the next of ``ports`` that accepts it."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = list(ports)
        self._turn = 0
        super().__init__(ports[0])

    def _accept(self) -> None:
        try:
            client, _ = self._listener.accept()
        except BlockingIOError:
            return
        upstream = None
        for _ in self.ports:
            port = self.ports[self._turn % len(self.ports)]
            self._turn += 1
            try:
                upstream = socket.create_connection(("127.0.0.1", port), timeout=5)
                break
            except OSError:
                continue
        if upstream is None:
            client.close()
            return
        self.connections += 1
        for a, b in ((client, upstream), (upstream, client)):
            a.setblocking(True)
            self._pairs[a] = b
            self._sel.register(a, selectors.EVENT_READ, None)


def get_readyz(port: int | None) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    try:
        conn.request("GET", "/readyz")
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()
