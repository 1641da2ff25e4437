"""Differential conformance: one corpus of requests against FakeAPIServer and the real kube-apiserver.

Answers are normalised (uids, timestamps, resourceVersion values, continue tokens, managedFields) and
compared step by step. Every difference must be listed in ``KNOWN`` with its reason (mirrored in
``cloudcoil_cache/testing/KNOWN_DIFFERENCES.md``); an unlisted difference fails the test. A listed
difference that no longer shows is reported in the test's output (the fake was fixed: drop the row).
"""

from __future__ import annotations

import http.client
import json
import re
import ssl
import threading
import time
import urllib.parse
from typing import Any, Callable, Iterator

import pytest

from cloudcoil_cache.testing import FakeAPIServer, RealAPIServer

#: step id → why the fake answers differently (the KNOWN_DIFFERENCES.md table, one row each).
KNOWN: dict[str, str] = {
    "list-label idx>x": "label selector parse errors: same 400 BadRequest, different message text",
    "list-label app==(": "label selector parse errors: same 400 BadRequest, different message text",
    "list-label =a": "label selector parse errors: same 400 BadRequest, different message text",
    "continue-garbage": "an undecodable continue token: same 400 BadRequest, different message text",
    "list-rv-bad": "a non-numeric resourceVersion: same 400 BadRequest, different message text",
    "patch-json-test-fails": "a failed JSON-patch 'test' op: both 422 Invalid; kube-apiserver's message is the "
    "generic 'the server rejected our request due to an error in our request' with "
    "empty details, the fake's names the failed test",
    "patch-bad-type": "an unsupported PATCH content type: both 415 UnsupportedMediaType; kube-apiserver's message "
    "is '415: Unsupported Media Type' with empty details, the fake lists the accepted types",
    "crd list": "a custom resource LIST from kube-apiserver carries 'continue': '' in its list metadata "
    "(unstructured lists keep the empty field); built-in lists and the fake omit it",
    "watch-unknown-resource": "404 for an unknown resource: kube-apiserver's Status carries an empty 'details' "
    "object, the fake's omits it",
}

Answer = tuple[int, Any]


class Backend:
    """Raw HTTP to one server: ``call`` returns (status, decoded JSON or text); ``watch_first`` the first
    line of a watch (or the HTTP error)."""

    def __init__(
        self,
        name: str,
        host: str,
        port: int,
        context: ssl.SSLContext | None,
        token: str | None,
        compact: Callable[[], Any],
    ) -> None:
        self.name, self.host, self.port, self.context, self.token = name, host, port, context, token
        self.compact = compact

    def _conn(self, timeout: float) -> http.client.HTTPConnection:
        if self.context is not None:
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=self.context)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def call(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Answer:
        conn = self._conn(30)
        try:
            data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
            conn.request(method, path, body=data, headers=self._headers(content_type if data else None))
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, raw.decode("utf-8", "replace")

    def wait_established(self, name: str) -> None:
        """Watch a CRD until it is Established (30 s at most; a server without CRDs returns at once)."""
        conn = self._conn(35)
        try:
            conn.request(
                "GET",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=true"
                f"&fieldSelector=metadata.name%3D{name}&timeoutSeconds=30",
                headers=self._headers(None),
            )
            response = conn.getresponse()
            if response.status != 200:
                return
            for line in response:
                status = json.loads(line).get("object", {}).get("status") or {}
                if any(
                    c.get("type") == "Established" and c.get("status") == "True" for c in status.get("conditions") or []
                ):
                    return
        finally:
            conn.close()

    def wait_served(self, path: str, within: float = 15.0) -> None:
        """GET ``path`` until it answers 200 (``within`` seconds at most).

        kube-apiserver serves a CRD's discovery document a moment after the CRD is Established (its
        discovery controller runs on its own), and nothing can be watched for that: kubectl retries
        discovery too. A bounded poll, paced by an Event that is never set.
        """
        deadline = time.monotonic() + within
        pace = threading.Event()
        while self.call("GET", path)[0] != 200 and time.monotonic() < deadline:
            pace.wait(0.05)

    def watch_events(self, path: str, count: int) -> list[Any]:
        """The first ``count`` events of a watch (or its HTTP error); ``path`` sets ``timeoutSeconds``."""
        conn = self._conn(35)
        try:
            conn.request("GET", path, headers=self._headers(None))
            response = conn.getresponse()
            if response.status != 200:
                return [response.status, response.read().decode("utf-8", "replace")]
            events = []
            for line in response:
                events.append(json.loads(line))
                if len(events) == count:
                    break
            return events
        finally:
            conn.close()

    def watch_first(self, path: str) -> Answer:
        conn = self._conn(30)
        try:
            conn.request("GET", path, headers=self._headers(None))
            response = conn.getresponse()
            if response.status != 200:
                raw = response.read()
                try:
                    return response.status, json.loads(raw)
                except ValueError:
                    return response.status, raw.decode("utf-8", "replace")
            return 200, json.loads(response.readline())
        finally:
            conn.close()


_DROP = {"uid", "creationTimestamp", "managedFields", "selfLink"}


def normalise(value: Any) -> Any:
    """Blank out what the API leaves to the server: ids, times, RV values, continue tokens."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in _DROP:
                continue
            if key in ("resourceVersion", "continue") and isinstance(item, str):
                out[key] = "<set>" if item else ""
            else:
                out[key] = normalise(item)
        return out
    if isinstance(value, (list, tuple)):
        return [normalise(v) for v in value]
    if isinstance(value, str):
        return re.sub(r"\b\d+\b", "<n>", value)  # revisions quoted in messages
    return value


def names_of(answer: Answer) -> list[Any]:
    status, body = answer
    if status == 200 and isinstance(body, dict) and "items" in body:
        return [status, sorted(i["metadata"]["name"] for i in body["items"])]
    return [status, normalise(body)]


def corpus(b: Backend, ns: str) -> Iterator[tuple[str, Any]]:
    """The scripted sequence; yields (step id, normalised answer)."""
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    yield "namespace-create", names_of(b.call("POST", "/api/v1/namespaces", {"metadata": {"name": ns}}))[0]
    yield "list-empty", normalise(b.call("GET", cms))
    rvs = []
    for i in range(5):
        status, body = b.call(
            "POST",
            cms,
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cm-{i}", "labels": {"app": "a" if i % 2 else "b", "idx": str(i)}},
                "data": {"k": str(i)},
            },
        )
        rvs.append(body["metadata"]["resourceVersion"])
        yield f"create-{i}", normalise((status, body))
    yield "get", normalise(b.call("GET", f"{cms}/cm-0"))
    yield "get-404", normalise(b.call("GET", f"{cms}/nope"))
    yield "create-409", normalise(b.call("POST", cms, {"metadata": {"name": "cm-0"}}))
    stale = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm-0", "resourceVersion": rvs[0]},
        "data": {"k": "x"},
    }
    yield "update-ok", normalise(b.call("PUT", f"{cms}/cm-0", stale))
    yield "update-409-conflict", normalise(b.call("PUT", f"{cms}/cm-0", stale))
    yield "create-422-bad-name", normalise(b.call("POST", cms, {"metadata": {"name": "Bad_Name"}}))
    yield (
        "create-wrong-kind-body",
        normalise(b.call("POST", cms, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})),
    )
    for name in ("Bad_Name", "s"):  # a server that accepted them must not change the later steps
        b.call("DELETE", f"{cms}/{name}")
    for selector in [
        "app=a",
        "app!=a",
        "app in (a,b)",
        "app notin (a)",
        "idx>2",
        "idx<2",
        "!idx",
        "app,idx=3",
        "app=",
        "app in ()",
        "idx>x",
        "app==(",
        "=a",
    ]:
        query = urllib.parse.urlencode({"labelSelector": selector})
        yield f"list-label {selector}", names_of(b.call("GET", f"{cms}?{query}"))
    for selector in [
        "metadata.name=cm-1",
        "metadata.name!=cm-1",
        f"metadata.namespace={ns}",
        "data.k=1",
        "metadata.name",
    ]:
        query = urllib.parse.urlencode({"fieldSelector": selector})
        yield f"list-field {selector}", names_of(b.call("GET", f"{cms}?{query}"))
    # Pagination.
    status, page1 = b.call("GET", f"{cms}?limit=2")
    yield "page-1", normalise((status, page1))
    token = page1["metadata"].get("continue", "")
    status, page2 = b.call("GET", f"{cms}?limit=2&continue={urllib.parse.quote(token)}")
    yield "page-2", normalise((status, page2))
    token2 = page2["metadata"].get("continue", "")
    yield "page-3", normalise(b.call("GET", f"{cms}?limit=2&continue={urllib.parse.quote(token2)}"))
    yield (
        "continue-with-rv",
        normalise(b.call("GET", f"{cms}?limit=2&continue={urllib.parse.quote(token)}&resourceVersion={rvs[1]}")),
    )
    yield "continue-garbage", normalise(b.call("GET", f"{cms}?limit=2&continue=bm9wZQ"))
    # resourceVersion / resourceVersionMatch validation.
    yield "rvmatch-without-rv", normalise(b.call("GET", f"{cms}?resourceVersionMatch=NotOlderThan"))
    yield "rvmatch-exact-0", normalise(b.call("GET", f"{cms}?resourceVersion=0&resourceVersionMatch=Exact"))
    yield "rvmatch-bogus", normalise(b.call("GET", f"{cms}?resourceVersion=1&resourceVersionMatch=Bogus"))
    yield (
        "rvmatch-with-continue",
        normalise(
            b.call(
                "GET",
                f"{cms}?limit=2&continue={urllib.parse.quote(token)}&resourceVersion=0"
                "&resourceVersionMatch=NotOlderThan",
            )
        ),
    )
    yield "list-rv-0", names_of(b.call("GET", f"{cms}?resourceVersion=0"))
    yield "list-exact-rv", names_of(b.call("GET", f"{cms}?resourceVersion={rvs[2]}&resourceVersionMatch=Exact"))
    yield (
        "list-not-older-than",
        names_of(b.call("GET", f"{cms}?resourceVersion={rvs[2]}&resourceVersionMatch=NotOlderThan")),
    )
    yield "list-rv-bad", normalise(b.call("GET", f"{cms}?resourceVersion=abc"))
    yield "list-send-initial-events", normalise(b.call("GET", f"{cms}?sendInitialEvents=true"))
    # Patches.
    yield (
        "patch-merge",
        normalise(b.call("PATCH", f"{cms}/cm-1", {"metadata": {"labels": {"m": "1"}}}, "application/merge-patch+json")),
    )
    yield (
        "patch-json",
        normalise(
            b.call(
                "PATCH",
                f"{cms}/cm-1",
                [{"op": "replace", "path": "/data/k", "value": "j"}],
                "application/json-patch+json",
            )
        ),
    )
    yield (
        "patch-json-test-fails",
        normalise(
            b.call(
                "PATCH",
                f"{cms}/cm-1",
                [{"op": "test", "path": "/data/k", "value": "zzz"}],
                "application/json-patch+json",
            )
        ),
    )
    yield (
        "patch-strategic",
        normalise(b.call("PATCH", f"{cms}/cm-1", {"data": {"s": "1"}}, "application/strategic-merge-patch+json")),
    )
    yield "patch-404", normalise(b.call("PATCH", f"{cms}/nope", {"data": {"s": "1"}}, "application/merge-patch+json"))
    yield "patch-bad-type", normalise(b.call("PATCH", f"{cms}/cm-1", {"data": {}}, "text/plain"))
    # Server-side apply and its field-manager conflict.
    applied = json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"owner": "alice"}}
    ).encode()
    yield (
        "apply-create",
        normalise(b.call("PATCH", f"{cms}/ssa?fieldManager=alice", applied, "application/apply-patch+yaml")),
    )
    theirs = applied.replace(b"alice", b"bob")
    yield (
        "apply-conflict",
        normalise(b.call("PATCH", f"{cms}/ssa?fieldManager=bob", theirs, "application/apply-patch+yaml")),
    )
    yield (
        "apply-force",
        normalise(b.call("PATCH", f"{cms}/ssa?fieldManager=bob&force=true", theirs, "application/apply-patch+yaml")),
    )
    yield "apply-no-manager", normalise(b.call("PATCH", f"{cms}/ssa", theirs, "application/apply-patch+yaml"))
    # Deletion.
    yield "delete", normalise(b.call("DELETE", f"{cms}/cm-4"))
    yield "delete-404", normalise(b.call("DELETE", f"{cms}/cm-4"))
    # Watches: from RV 1 after a compaction (410), from the future, and a normal first event.
    yield "watch-current-first-event", normalise(b.watch_first(f"{cms}?watch=true&resourceVersion={rvs[3]}"))
    b.call("POST", cms, {"metadata": {"name": "after"}})
    b.compact()
    yield "watch-410", normalise(b.watch_first(f"{cms}?watch=true&resourceVersion=1"))
    yield (
        "list-exact-compacted-410",
        normalise(b.call("GET", f"{cms}?resourceVersion={rvs[2]}&resourceVersionMatch=Exact")),
    )
    yield "continue-compacted-410", normalise(b.call("GET", f"{cms}?limit=2&continue={urllib.parse.quote(token)}"))
    yield "watch-unknown-resource", normalise(b.watch_first(f"/api/v1/namespaces/{ns}/nosuchthings?watch=true"))
    # A collection DELETE answers the <Kind>List of what it deleted (as listed before), dry run or not.
    yield "delete-collection-dry-run", normalise(b.call("DELETE", f"{cms}?labelSelector=app%3Da&dryRun=All"))
    yield "delete-collection", normalise(b.call("DELETE", f"{cms}?labelSelector=app%3Da"))
    yield "delete-collection-none", normalise(b.call("DELETE", f"{cms}?labelSelector=app%3Da"))
    yield from discovery(b, ns)


def _resource(answer: Answer, name: str) -> Any:
    status, body = answer
    if status != 200 or not isinstance(body, dict):
        return normalise([status, body])
    found = [r for r in body.get("resources", []) if r.get("name") == name]
    # verbs are a set (order left open: kube-apiserver lists a CRD's in its own order)
    return [{k: sorted(v) if k == "verbs" else v for k, v in r.items() if k != "storageVersionHash"} for r in found]


def discovery(b: Backend, ns: str) -> Iterator[tuple[str, Any]]:
    """Discovery documents of built-in groups, and of a CRD created at run time (its type must appear)."""
    v1 = b.call("GET", "/api/v1")
    yield "discovery /api/v1 configmaps", _resource(v1, "configmaps")
    yield "discovery /api/v1 pods/status", _resource(v1, "pods/status")
    apps = b.call("GET", "/apis/apps/v1")
    yield "discovery /apis/apps/v1 deployments", _resource(apps, "deployments")
    yield "discovery /apis/apps/v1 deployments/scale", _resource(apps, "deployments/scale")
    status, groups = b.call("GET", "/apis")
    wanted = ("apps", "coordination.k8s.io", "apiextensions.k8s.io")
    yield (
        "discovery /apis groups",
        [
            status,
            sorted(
                (g["name"], g["preferredVersion"]["version"]) for g in groups.get("groups", []) if g["name"] in wanted
            )
            if isinstance(groups, dict)
            else groups,
        ],
    )
    group = "differential.cloudcoil.dev"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
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
    yield "crd-create", b.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)[0]
    b.wait_established(f"widgets.{group}")
    b.wait_served(f"/apis/{group}/v1")
    yield "crd discovery", _resource(b.call("GET", f"/apis/{group}/v1"), "widgets")
    widgets = f"/apis/{group}/v1/namespaces/{ns}/widgets"
    yield (
        "crd object create",
        normalise(
            b.call(
                "POST",
                widgets,
                {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"a": 1}},
            )
        ),
    )
    yield "crd list", normalise(b.call("GET", widgets))
    yield (
        "crd strategic patch 415",
        normalise(b.call("PATCH", f"{widgets}/w", {"spec": {"a": 2}}, "application/strategic-merge-patch+json")),
    )
    yield "crd no scale subresource 404", normalise(b.call("GET", f"{widgets}/w/scale"))
    yield "crd no status subresource 404", normalise(b.call("PUT", f"{widgets}/w/status", {"metadata": {"name": "w"}}))
    yield from cloudcoil_needs(b, ns)


def cloudcoil_needs(b: Backend, ns: str) -> Iterator[tuple[str, Any]]:
    """What cloudcoil's e2e suites need: CRD establishment events, a custom resource's /scale at its CRD's
    paths, and the default/kubernetes Service."""
    status, svc = b.call("GET", "/api/v1/namespaces/default/services/kubernetes")
    if status == 200:  # the service range and the secure port are each server's own
        spec = svc["spec"]
        spec["clusterIP"], spec["clusterIPs"] = "<ip>", ["<ip>"]
        spec["ports"][0]["targetPort"] = "<port>"
    yield "kubernetes service", normalise((status, svc))
    group = "scale.differential.cloudcoil.dev"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"webservices.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "webservices", "kind": "WebService"},
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.size",
                            "statusReplicasPath": ".status.currentSize",
                            "labelSelectorPath": ".status.selector",
                        },
                    },
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }
    status, created = b.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    yield "scale-crd create", normalise([status, created.get("status"), created["spec"].get("names")])
    rv = created["metadata"]["resourceVersion"]
    events = b.watch_events(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=true"
        f"&fieldSelector=metadata.name%3Dwebservices.{group}&resourceVersion={rv}"
        "&timeoutSeconds=10",
        2,
    )
    if events and isinstance(events[0], dict):
        for event in events:
            for condition in (event.get("object", {}).get("status") or {}).get("conditions") or ():
                condition["lastTransitionTime"] = "<time>" if condition.get("lastTransitionTime") else ""
        events = [[e.get("type"), e.get("object", {}).get("status")] for e in events]
    yield "scale-crd events", normalise(events)
    b.wait_served(f"/apis/{group}/v1alpha1")
    items = f"/apis/{group}/v1alpha1/namespaces/{ns}/webservices"
    b.call(
        "POST",
        items,
        {
            "apiVersion": f"{group}/v1alpha1",
            "kind": "WebService",
            "metadata": {"name": "w"},
            "spec": {"image": "nginx:latest", "size": 3},
        },
    )
    status, obj = b.call("GET", f"{items}/w")
    obj["status"] = {"currentSize": 2, "selector": "app=web"}
    yield "cr update status", normalise(b.call("PUT", f"{items}/w/status", obj))
    yield "cr scale get", normalise(b.call("GET", f"{items}/w/scale"))
    yield (
        "cr scale patch",
        normalise(b.call("PATCH", f"{items}/w/scale", {"spec": {"replicas": 5}}, "application/merge-patch+json")),
    )
    yield "cr after scale", normalise(b.call("GET", f"{items}/w"))
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "w"}}
    yield "cr scale put negative", normalise(b.call("PUT", f"{items}/w/scale", {**scale, "spec": {"replicas": -1}}))
    yield "cr scale put zero", normalise(b.call("PUT", f"{items}/w/scale", {**scale, "spec": {}}))
    yield "cr scale missing object", normalise(b.call("GET", f"{items}/nope/scale"))
    b.call(
        "POST", items, {"apiVersion": f"{group}/v1alpha1", "kind": "WebService", "metadata": {"name": "n"}, "spec": {}}
    )
    yield "cr scale get without replicas", normalise(b.call("GET", f"{items}/n/scale"))
    yield (
        "cr scale patch without replicas",
        normalise(
            b.call("PATCH", f"{items}/n/scale", {"metadata": {"labels": {"a": "b"}}}, "application/merge-patch+json")
        ),
    )
    yield (
        "cr create negative size",
        normalise(
            b.call(
                "POST",
                items,
                {
                    "apiVersion": f"{group}/v1alpha1",
                    "kind": "WebService",
                    "metadata": {"name": "neg"},
                    "spec": {"size": -2},
                },
            )
        ),
    )


@pytest.fixture
def fake() -> Iterator[FakeAPIServer]:
    with FakeAPIServer(too_large_wait=0.1) as server:
        yield server


def test_the_fake_answers_the_corpus_as_the_real_server_does(
    real: RealAPIServer, fake: FakeAPIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    real_backend = Backend("real", "127.0.0.1", real.port, real.ssl_context(), real.tokens["admin"], real.compact)
    fake_backend = Backend("fake", "127.0.0.1", fake.port, None, None, fake.compact)
    real_answers = dict(corpus(real_backend, "differential"))
    fake_answers = dict(corpus(fake_backend, "differential"))
    assert real_answers.keys() == fake_answers.keys()
    differences = {
        step: (real_answers[step], fake_answers[step])
        for step in real_answers
        if real_answers[step] != fake_answers[step]
    }
    unknown = {s: d for s, d in differences.items() if s not in KNOWN}
    fixed = sorted(set(KNOWN) - set(differences))
    with capsys.disabled():
        if fixed:
            print(f"\nknown differences that no longer show (drop them from KNOWN): {fixed}")
    report = "\n".join(
        f"- {step}:\n    real: {json.dumps(r, sort_keys=True)}\n    fake: {json.dumps(f, sort_keys=True)}"
        for step, (r, f) in unknown.items()
    )
    assert not unknown, f"{len(unknown)} unlisted differences between the fake and the real server:\n{report}"
