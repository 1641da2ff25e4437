"""Issue 22's end-to-end admission scenarios, run unchanged against FakeAPIServer and kube-apiserver.

Each scenario serves our ``AdmissionWebhook`` on a ``WebhookServer`` (self-signed certificates), registers it
with ``webhook.install(config, name=..., server=...)`` and waits with ``wait_effective`` until a dry-run
sentinel reached each route. Every route selects only the scenario's own namespace (kube-apiserver picks
configurations up asynchronously: one scenario's must not reach another's requests). Clients talk raw HTTP
to the API server, so the exact status, reason, message and ``Warning`` headers a user sees are asserted.
"""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import threading
import time
from typing import Any

from admission._e2e_support import (
    MUTATED,
    UNABLE,
    UNKNOWN,
    WAIT,
    Cluster,
    Load,
    RoundRobinProxy,
    Seen,
    Via,
    answer,
    cm,
    effective,
    failed_calling,
    get_readyz,
    only,
    same,
    served_leaf,
    serving,
)
from real._proxy import CuttingProxy

from cloudcoil_cache.admission import (
    AdmissionDenied,
    AdmissionRequest,
    AdmissionWebhook,
    SelfSignedCertificates,
    WebhookServer,
)
from cloudcoil_cache.controller import LeaderElection, Manager
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Secret
from cloudcoil_cache.resources import GenericResource

# ------------------------------------------------------------------ 1. a cached reference


def cached_reference(cluster: Cluster) -> None:
    """Deny a ConfigMap naming a Secret the cache does not hold, with the API server's answer; admit it
    within 2 s of the Secret's creation; edits of the returned copy never reach the cache; the Secret
    informer unable to serve → HTTP 500 from the webhook → rejected under Fail, admitted under Ignore."""
    ns = cluster.namespace("adm-ref")
    config = cluster.config(ns, Secret)
    hook = AdmissionWebhook(config=config)
    seen = Seen()
    second_reads: list[Any] = []

    def needs_secret(request: AdmissionRequest[ConfigMap]) -> None:
        seen.add("secret", request)
        assert request.resource is not None
        wanted = (request.resource.metadata.annotations or {}).get("example.com/secret")
        if wanted is None:
            return
        secret = request.cached(Secret).get(wanted)
        if secret is None:
            raise AdmissionDenied(f"Secret {ns}/{wanted} is not in the cache")
        secret.metadata.labels = {"edited": "by-the-handler"}  # a deep copy: the cache never sees it
        again = request.cached(Secret).get(wanted)
        second_reads.append(None if again is None else again.metadata.labels)

    ignore = {"matchExpressions": [{"key": "policy", "operator": "In", "values": ["ignore"]}]}
    fail = {"matchExpressions": [{"key": "policy", "operator": "NotIn", "values": ["ignore"]}]}
    hook.validating(ConfigMap, path="/secret", namespace_selector=only(ns), object_selector=fail)(needs_secret)
    hook.validating(
        ConfigMap, path="/secret-ignore", namespace_selector=only(ns), object_selector=ignore, failure_policy="Ignore"
    )(needs_secret)
    name = f"{ns}.example.com"
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    with serving(hook, config, name):
        effective(cluster, cms, seen, "secret", cm("s"))
        effective(cluster, cms, seen, "secret", cm("s", {"policy": "ignore"}))
        referring = cm("c", **{"example.com/secret": "db"})
        same(
            answer(cluster.call("POST", cms, referring)),
            (
                403,
                "Forbidden",
                f'admission webhook "validate-0.{name}" denied the request: Secret {ns}/db is not in the cache',
            ),
        )
        secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}, "data": {"k": "dg=="}}
        assert cluster.call("POST", f"/api/v1/namespaces/{ns}/secrets", secret)[0] == 201
        created_at = time.monotonic()
        deadline = created_at + 2.0
        status = 0
        while status != 201 and time.monotonic() < deadline:  # each try is a round trip: no sleep
            status = cluster.call("POST", cms, referring)[0]
        assert status == 201, f"not admitted within 2 s of the Secret's creation ({cluster.name})"
        assert second_reads and all(labels is None for labels in second_reads), second_reads
        assert Secret.client(config, cached=True).get("db").metadata.labels is None  # the cache as listed

        informer = config.cache.informer_for(Secret)  # type: ignore[union-attr]
        informer.stop(WAIT)  # the informer cannot serve: request.cached raises CacheUnavailableError
        # our body is {"message": "Admission webhook failed: CacheUnavailableError"}: not a Status, so
        # kube-apiserver's client reports it as "unknown"
        detail = UNKNOWN
        same(
            answer(cluster.call("POST", cms, cm("d", **{"example.com/secret": "db"}))),
            (
                500,
                "InternalError",
                failed_calling(f"validate-0.{name}", detail),
            ),
        )
        ignored = cm("e", {"policy": "ignore"}, **{"example.com/secret": "db"})
        same(answer(cluster.call("POST", cms, ignored)), (201, None, None))
        assert cluster.call("GET", cms + "/d")[0] == 404 and cluster.call("GET", cms + "/e")[0] == 200


# ------------------------------------------------------------------ 2 and 3. mutation, dry run, warnings


def _crd(group: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }


def _define_crd(cluster: Cluster, group: str) -> None:
    status, body, _ = cluster.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", _crd(group))
    assert status == 201, body
    deadline = time.monotonic() + WAIT
    while cluster.call("GET", f"/apis/{group}/v1/widgets")[0] != 200:  # each try a round trip
        assert time.monotonic() < deadline, f"{group}/v1 widgets not served"


def _review(raw: dict[str, Any], resource: dict[str, str], namespace: str) -> bytes:
    group, _, version = raw["apiVersion"].rpartition("/")
    request = {
        "uid": "replayed",
        "kind": {"group": group, "version": version, "kind": raw["kind"]},
        "resource": resource,
        "operation": "CREATE",
        "namespace": namespace,
        "name": raw["metadata"]["name"],
        "userInfo": {"username": "replay"},
        "object": raw,
    }
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).encode()


def _patch_of(server: WebhookServer, path: str, review: bytes) -> list[dict[str, Any]] | None:
    """Post ``review`` to our server over TLS as kube-apiserver does; the JSONPatch ops answered."""
    context = ssl.create_default_context(cadata=server.ca_bundle.decode())
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=context, timeout=WAIT)
    try:
        conn.request("POST", path + "?timeout=5s", body=review, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        data = json.loads(response.read())
    finally:
        conn.close()
    assert response.status == 200 and data["response"]["allowed"] is True, data
    if "patch" not in data["response"]:
        return None
    ops: list[dict[str, Any]] = json.loads(base64.b64decode(data["response"]["patch"]))
    return ops


def mutation_dry_run_and_warnings(cluster: Cluster) -> None:
    """A mutator adds a label next to the client's; a custom resource's unknown field survives and the
    patch touches only ``/metadata/labels``; the mutated object answered again gives no patch. Dry run:
    ``request.dry_run``, the answer mutated, nothing stored. ``request.warn`` → ``Warning: 299`` headers
    (and kubectl prints them where the tier has kubectl)."""
    ns = cluster.namespace("adm-mut")
    group = f"{ns}.example.com"
    _define_crd(cluster, group)
    widget_cls = GenericResource.define(api_version=f"{group}/v1", kind="Widget", plural="widgets", namespaced=True)
    config = cluster.config(ns)
    hook = AdmissionWebhook(config=config)
    seen = Seen()
    raws: dict[str, dict[str, Any]] = {}

    def label(request: AdmissionRequest[Any]) -> Any:
        seen.add("label", request)
        assert request.resource is not None and request.raw_object is not None
        raws[request.name] = json.loads(json.dumps(request.raw_object))
        obj = request.resource
        obj.metadata.labels = {**(obj.metadata.labels or {}), MUTATED: "true"}
        if request.dry_run:
            request.warn(f"dry run of {request.name}: nothing stored")
        return obj

    def warn(request: AdmissionRequest[ConfigMap]) -> None:
        seen.add("warn", request)
        if "warn" in (request.resource.metadata.labels or {} if request.resource else {}):
            request.warn("first warning")
            request.warn(f"second warning about {request.name}")

    hook.mutating(ConfigMap, path="/label", namespace_selector=only(ns))(label)
    hook.mutating(widget_cls, path="/label-widget", namespace_selector=only(ns))(label)
    hook.validating(ConfigMap, path="/warn", namespace_selector=only(ns))(warn)
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    widgets = f"/apis/{group}/v1/namespaces/{ns}/widgets"
    with serving(hook, config, group) as server:
        effective(cluster, cms, seen, "label", cm("s"))
        effective(cluster, cms, seen, "warn", cm("s"))
        effective(cluster, widgets, seen, "label", {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {}})

        status, body, _ = cluster.call("POST", cms, cm("c", {"app": "web"}))
        assert status == 201 and body["metadata"]["labels"] == {"app": "web", MUTATED: "true"}, body

        widget = {
            "apiVersion": f"{group}/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "labels": {"app": "web"}},
            "spec": {"size": 3, "unknownToAnyModel": {"nested": [1, "two", None]}},
        }
        status, body, _ = cluster.call("POST", widgets, widget)
        assert status == 201, body
        stored = cluster.call("GET", widgets + "/w")[1]
        assert stored["spec"] == widget["spec"] and stored["metadata"]["labels"] == {"app": "web", MUTATED: "true"}
        resource = {"group": group, "version": "v1", "resource": "widgets"}
        ops = _patch_of(server, "/label-widget", _review(raws["w"], resource, ns))
        assert ops and all(op["path"].startswith("/metadata/labels") for op in ops), ops
        assert _patch_of(server, "/label-widget", _review(stored, resource, ns)) is None  # already mutated

        status, body, warnings = cluster.call("POST", cms + "?dryRun=All", cm("dry", {"warn": "yes"}))
        assert status == 201 and body["metadata"]["labels"] == {"warn": "yes", MUTATED: "true"}, body
        assert ("label", "dry", True) in seen.calls
        assert cluster.call("GET", cms + "/dry")[0] == 404
        assert warnings == [
            '299 - "dry run of dry: nothing stored"',
            '299 - "first warning"',
            '299 - "second warning about dry"',
        ]
        if cluster.kubectl is not None:
            manifest = json.dumps(cm("k", {"warn": "yes"}))
            done = cluster.kubectl("create", "-n", ns, "--dry-run=server", "-f", "-", input=manifest)
            assert done.returncode == 0, done.stderr
            assert "Warning: first warning" in done.stderr and "Warning: second warning about k" in done.stderr
    status, body, _ = cluster.call("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}")
    assert status == 200, body


# ------------------------------------------------------------------ 4. failure policy


def failure_policy(cluster: Cluster) -> None:
    """Fail vs Ignore with a handler raising, a handler past its timeout (our 504 before kube-apiserver's
    deadline) and the server stopped: the exact answer a client sees."""
    ns = cluster.namespace("adm-fail")
    config = cluster.config(ns)
    hook = AdmissionWebhook(config=config)
    seen = Seen()
    release = threading.Event()

    def raising(request: AdmissionRequest[ConfigMap]) -> None:
        seen.add("raise", request)
        if not request.name.startswith("sentinel"):
            raise RuntimeError("the handler broke")

    def slow(request: AdmissionRequest[ConfigMap]) -> None:
        seen.add("slow", request)
        if not request.name.startswith("sentinel"):
            release.wait(WAIT)  # past the route's 1 s: answered 504 first

    for case, policy in (("fail", "Fail"), ("ignore", "Ignore")):
        for route, handler, timeout in (("raise", raising, 5), ("slow", slow, 1)):
            selector = {"matchLabels": {"case": f"{route}-{case}"}}
            hook.validating(
                ConfigMap,
                path=f"/{route}-{case}",
                namespace_selector=only(ns),
                object_selector=selector,
                failure_policy=policy,
                timeout_seconds=timeout,
            )(handler)
    name = f"{ns}.example.com"
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    webhooks = {"raise-fail": f"validate-0.{name}", "slow-fail": f"validate-1.{name}"}
    try:
        with serving(hook, config, name) as server:
            for case in ("raise-fail", "slow-fail", "raise-ignore", "slow-ignore"):
                effective(cluster, cms, seen, case.split("-")[0], cm("s", {"case": case}))
            same(
                answer(cluster.call("POST", cms, cm("a", {"case": "raise-fail"}))),
                (
                    500,
                    "InternalError",
                    failed_calling(webhooks["raise-fail"], UNKNOWN),
                ),
            )
            started = time.monotonic()
            slow_answer = answer(cluster.call("POST", cms, cm("b", {"case": "slow-fail"})))
            took = time.monotonic() - started
            # our 504 came first: not kube-apiserver's "context deadline exceeded" at timeoutSeconds
            same(slow_answer, (500, "InternalError", failed_calling(webhooks["slow-fail"], UNABLE)))
            assert took < 2.0, took  # the route's timeoutSeconds is 1 (and 1 s of slack)
            same(answer(cluster.call("POST", cms, cm("c", {"case": "raise-ignore"}))), (201, None, None))
            same(answer(cluster.call("POST", cms, cm("d", {"case": "slow-ignore"}))), (201, None, None))
            release.set()
            port = server.port
            server.stop()  # the webhook is down: its port refuses connections
            address = f"127.0.0.1:{port}"
            refused = f'Post "https://{address}/raise-fail?timeout=5s": dial tcp {address}: connect: connection refused'
            same(
                answer(cluster.call("POST", cms, cm("e", {"case": "raise-fail"}))),
                (
                    500,
                    "InternalError",
                    failed_calling(webhooks["raise-fail"], refused),
                ),
            )
            same(answer(cluster.call("POST", cms, cm("f", {"case": "slow-ignore"}))), (201, None, None))
    finally:
        release.set()


# ------------------------------------------------------------------ load


# ------------------------------------------------------------------ 5. certificate rotation


def rotation_under_load(cluster: Cluster, per_phase: int = 150) -> dict[str, int]:
    """8 threads of dry-run creates through a validating and a mutating route while the server's
    SelfSignedCertificates (its clock injected) renews the leaf, then the CA (old+new bundle re-installed
    by the listener → a leaf from the new CA → the new CA only): no request fails. The webhook sits behind a
    counting TCP proxy: each phase must see the API server open new connections (new handshakes), since a
    kept-alive connection could hide a certificate the bundle no longer trusts."""
    ns = cluster.namespace("adm-rot")
    config = cluster.config(ns)
    now = [0.0]
    day = 86400.0
    certs = SelfSignedCertificates(("127.0.0.1",), ca_days=30, cert_days=3, ca_overlap=60, clock=lambda: now[0])
    hook = AdmissionWebhook(config=config)
    seen = Seen()

    def check(request: AdmissionRequest[ConfigMap]) -> None:
        if request.name.startswith("sentinel"):
            seen.add("check", request)

    def label(request: AdmissionRequest[ConfigMap]) -> ConfigMap | None:
        obj = request.resource
        assert obj is not None
        obj.metadata.labels = {**(obj.metadata.labels or {}), MUTATED: "true"}
        return obj

    hook.validating(ConfigMap, path="/check", namespace_selector=only(ns))(check)
    hook.mutating(ConfigMap, path="/label", namespace_selector=only(ns))(label)
    bundles: list[bytes] = []
    bundle_changed = threading.Condition()

    def heard(bundle: bytes) -> None:  # after install's own listener re-applied the configurations
        with bundle_changed:
            bundles.append(bundle)
            bundle_changed.notify_all()

    cms = f"/api/v1/namespaces/{ns}/configmaps"
    connections: dict[str, int] = {}
    server = WebhookServer(hook, port=0, certificates=certs, cert_check_interval=0.05, max_concurrency=16)
    with server, CuttingProxy(server.port) as proxy:
        hook.install(config, name=f"{ns}.example.com", server=Via(server, proxy))
        server.add_ca_bundle_listener(heard)
        try:
            effective(cluster, cms, seen, "check", cm("s"))
            with Load(cluster, ns) as load:

                def phase(label: str, advance: float, bundle: bool) -> None:
                    leaf = served_leaf(server)
                    before = proxy.connections
                    with bundle_changed:
                        heard_before = len(bundles)
                    now[0] += advance
                    if bundle:
                        with bundle_changed:
                            assert bundle_changed.wait_for(lambda: len(bundles) > heard_before, WAIT), label
                    else:
                        deadline = time.monotonic() + WAIT
                        while served_leaf(server) == leaf:  # each try a handshake
                            assert time.monotonic() < deadline, f"{label}: the leaf was not renewed"
                    load.wait_for(per_phase)
                    connections[label] = proxy.connections - before
                    assert connections[label] > 0, f"{label}: no new connection reached the webhook"

                load.wait_for(per_phase)
                first_ca = server.ca_bundle
                phase("leaf", 2.1 * day, bundle=False)
                assert server.ca_bundle == first_ca
                phase("ca-added", 18.1 * day, bundle=True)
                assert server.ca_bundle.startswith(first_ca) and len(server.ca_bundle) > len(first_ca)
                phase("leaf-from-new-ca", 61, bundle=False)
                phase("old-ca-dropped", 61, bundle=True)
                assert first_ca not in server.ca_bundle
            assert load.failures == [], load.failures[:5]
            connections["requests"] = load.done
        finally:
            AdmissionWebhook.uninstall(config, f"{ns}.example.com")
    return connections


# ------------------------------------------------------------------ 6. every replica


def every_replica(cluster: Cluster, per_phase: int = 100) -> dict[str, int]:
    """Two Managers with LeaderElection, each with its own WebhookServer behind a round-robin proxy;
    under load the leader's Manager is stopped: no admission request fails while the Lease moves, and
    the standby's ``/readyz`` answers 200 throughout."""
    ns = cluster.namespace("adm-ha")
    name = f"{ns}.example.com"
    managers: list[Manager] = []
    servers: list[WebhookServer] = []
    seen = Seen()
    served = {"a": 0, "b": 0}  # requests each replica answered
    hooks: list[AdmissionWebhook] = []
    for identity in ("a", "b"):
        config = cluster.config(ns, Secret)
        hook = AdmissionWebhook(config=config)
        hooks.append(hook)

        @hook.validating(ConfigMap, path="/check", namespace_selector=only(ns))
        def check(request: AdmissionRequest[ConfigMap], _who: str = identity) -> None:
            seen.add("check", request)
            served[_who] += 1
            request.cached(Secret).get("anything")  # a cached read on every replica

        # one CA for both replicas, as a Secret mounted on both would give
        certs = servers[0].certificates if servers else None
        server = WebhookServer(hook, port=0, certificates=certs, max_concurrency=16, shutdown_timeout=5)
        servers.append(server)
        election = LeaderElection(
            f"{ns}-lease", namespace=ns, identity=identity, lease_duration=4, renew_deadline=3, retry_period=0.2
        )
        managers.append(Manager(webhooks=server, config=config, leader_election=election, health_port=0))
    leading = threading.Event()
    managers[0].leader_election.on_started_leading = leading.set  # type: ignore[union-attr]
    took_over = threading.Event()
    managers[1].leader_election.on_started_leading = took_over.set  # type: ignore[union-attr]
    readyz: list[int] = []
    watching = threading.Event()

    def watch_readyz() -> None:
        while not watching.wait(0.05):
            readyz.append(get_readyz(managers[1].health_port))

    figures: dict[str, int] = {}
    try:
        managers[0].start()
        assert leading.wait(WAIT)
        managers[1].start()
        with RoundRobinProxy([servers[0].port, servers[1].port]) as proxy:
            config = cluster.configs[-1]
            hooks[1].install(config, name=name, server=Via(servers[1], proxy))
            try:
                effective(cluster, f"/api/v1/namespaces/{ns}/configmaps", seen, "check", cm("s"))
                watcher = threading.Thread(target=watch_readyz, name="adm-readyz")
                watcher.start()
                try:
                    with Load(cluster, ns) as load:
                        load.wait_for(per_phase)
                        managers[0].stop()  # the leader goes, mid-load
                        after_stop = served["b"]
                        assert took_over.wait(WAIT), "the standby did not take the Lease"
                        load.wait_for(per_phase)
                    figures.update(requests=load.done, **{f"served_{k}": v for k, v in served.items()})
                    assert load.failures == [], load.failures[:5]
                    assert served["b"] >= after_stop + per_phase, served  # the standby answered the rest
                finally:
                    watching.set()
                    watcher.join(WAIT)
                assert readyz and set(readyz) == {200}, readyz
                figures["readyz"] = len(readyz)
            finally:
                AdmissionWebhook.uninstall(config, name)
    finally:
        for manager in managers:
            manager.stop()
    return figures
