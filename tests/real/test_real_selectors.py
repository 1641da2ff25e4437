"""Label and field selectors: the cache's in-memory answer equals kube-apiserver's for a table of selectors."""

from __future__ import annotations

import urllib.parse
from typing import Any, Callable, Iterator

import pytest
from cluster_support import FAST

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import BadRequest
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import RealAPIServer

# name: (labels, spec extras, status)
PODS: dict[str, tuple[dict[str, str], dict[str, Any], dict[str, Any]]] = {
    "p1": (
        {"app": "web", "tier": "frontend", "env": "prod", "rank": "3"},
        {"nodeName": "node-a"},
        {"phase": "Running", "podIP": "10.1.0.1", "podIPs": [{"ip": "10.1.0.1"}]},
    ),
    "p2": (
        {"app": "web", "tier": "backend", "env": "staging", "rank": "10"},
        {"nodeName": "node-b"},
        {"phase": "Pending"},
    ),
    "p3": (
        {"app": "db", "tier": "backend", "rank": "7"},
        {"restartPolicy": "OnFailure", "schedulerName": "custom"},
        {"phase": "Succeeded"},
    ),
    "p4": (
        {"app": "db", "env": "prod", "example.com/owner": "team-a"},
        {"serviceAccountName": "builder", "hostNetwork": True},
        {"phase": "Failed"},
    ),
    "p5": ({}, {"restartPolicy": "Never"}, {"phase": "Pending"}),
    "p6": ({"app": "cache", "version": "v1.2", "rank": "abc"}, {}, {"phase": "Pending", "nominatedNodeName": "node-c"}),
    "p7": ({"app": "web", "env": "", "tier": "frontend"}, {"nodeName": "node-a"}, {"phase": "Running"}),
}

LABEL_SELECTORS = [
    "",
    "app=web",
    "app==web",
    "app!=web",
    "app",
    "!app",
    "app in (web,db)",
    "app notin (web,db)",
    "app in (web)",
    "env=prod",
    "env=",
    "env==",
    "env!=",
    "env in (prod,staging)",
    "env notin (prod)",
    "!env",
    "env",
    "tier=backend,app=db",
    "app=web,tier=frontend,env=prod",
    "app=web,!env",
    "rank>5",
    "rank<5",
    "rank>3",
    "rank<10",
    "example.com/owner=team-a",
    "example.com/owner",
    "!example.com/owner",
    "version=v1.2",
    "version in (v1.2, v2)",
    " app = web ",
    "app=web,app=db",
    "app in (web,db),tier notin (frontend)",
    "app,tier",
    "!app,!tier",
    "app=nosuch",
    "nosuch",
    "!nosuch",
    "app!=web,app!=db",
    "tier in (frontend),env",
    "app in (web,db,cache),rank>2",
    "rank>0,rank<8",
    "env in (prod,)",
    "env notin (prod,)",
    "env in ()",
    "env notin ()",
    "app in ()",
    "app in ( web , db )",
    "tier notin (backend),app",
]
FIELD_SELECTORS = [
    "metadata.name=p1",
    "metadata.name!=p1",
    "metadata.name==p2",
    "metadata.namespace={ns}",
    "metadata.namespace!={ns}",
    "spec.nodeName=node-a",
    "spec.nodeName=",
    "spec.nodeName!=",
    "status.phase=Running",
    "status.phase!=Running",
    "spec.restartPolicy=OnFailure",
    "spec.restartPolicy!=Always",
    "spec.schedulerName=custom",
    "spec.serviceAccountName=builder",
    "spec.hostNetwork=true",
    "spec.hostNetwork=false",
    "status.podIP=10.1.0.1",
    "status.nominatedNodeName=node-c",
    "metadata.name=p1,status.phase=Running",
    "status.phase=Pending,spec.nodeName=node-b",
    "status.phase!=Pending,status.phase!=Running",
]
BOTH = [("app=web", "spec.nodeName=node-a"), ("env", "status.phase=Failed"), ("!tier", "metadata.name!=p5")]
INVALID_LABEL_SELECTORS = [
    "rank>-1",
    "rank>abc",
    "app=(",
    "=web",
    "app=we b",
    "app!",
    "a/b/c=d",
    "-app=web",
    "app in web",
    "app=web,",
    "rank>1.5",
    "app=" + "x" * 64,
]
INVALID_FIELD_SELECTORS = ["spec.containers=web", "metadata.name", "status.phase>Running", "nosuch.field=1"]


#: Where the cache's in-memory evaluation differs from kube-apiserver today (found by this test; the
#: selector code is cloudcoil_cache/_listwatch/_selectors.py). A gap that closes is reported, not failed.
KNOWN_CACHE_GAPS: dict[str, str] = {}  # none left: an invalid selector is errors.InvalidSelector (400) too


@pytest.fixture(scope="module")
def world(real_api_server: RealAPIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Config]]:
    """The table's pods in a namespace of their own, and a strict cache of them (no informer selector)."""
    real = real_api_server
    ns = "selectors"
    status, body = real.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    assert status == 201, body
    kubeconfig = real.write_kubeconfig(tmp_path_factory.mktemp("selectors") / "kc", namespace=ns)
    live = Config(kubeconfig=kubeconfig)
    client = Pod.client(live)
    for name, (labels, spec, status_) in PODS.items():
        created = client.create(
            Pod.from_dict(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": name, "namespace": ns, "labels": labels},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
                }
            )
        )
        with_status = created.to_dict()
        with_status["status"] = status_
        client.update_status(Pod.from_dict(with_status))
    live.close()
    cached = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], namespaces=[ns], mode="strict", tuning=FAST))
    with cached:
        yield ns, cached
    cached.close()


def server_answer(real: RealAPIServer, ns: str, label: str | None, field: str | None) -> Any:
    """kube-apiserver's own answer over raw HTTP: a set of names, or the error's HTTP status."""
    query = urllib.parse.urlencode(
        {k: v for k, v in (("labelSelector", label), ("fieldSelector", field)) if v is not None}
    )
    status, body = real.request("GET", f"/api/v1/namespaces/{ns}/pods?{query}")
    if status != 200:
        return status
    return {item["metadata"]["name"] for item in body["items"]}


def cache_answer(read: Callable[[], Any]) -> Any:
    try:
        return {p.metadata.name for p in read().items}
    except BadRequest:
        return 400
    except Exception as exc:  # a different error class is a mismatch, shown in the report
        return f"{type(exc).__name__}: {exc}"


def test_the_cache_answers_every_selector_as_the_server_does(real: RealAPIServer, world: tuple[str, Config]) -> None:
    ns, cached = world
    cases: list[tuple[str | None, str | None]] = [(s, None) for s in LABEL_SELECTORS + INVALID_LABEL_SELECTORS]
    cases += [(None, f.format(ns=ns)) for f in FIELD_SELECTORS + INVALID_FIELD_SELECTORS]
    cases += [(label, field) for label, field in BOTH]
    assert len(cases) >= 50
    live = Pod.client(cached)  # the library's live client, for the same reads over HTTP
    mismatches: list[tuple[str, str]] = []
    answers = {}
    with cached:
        informer = cached.cache.get_informer(Pod, sync=True)  # type: ignore[union-attr]
        assert informer is not None
        assert informer.wait_for_sync(30) and len(informer.list()) == len(PODS)
        for label, field in cases:
            expected = server_answer(real, ns, label, field)
            from_cache = cache_answer(lambda: Pod.list(namespace=ns, label_selector=label, field_selector=field))
            from_live = cache_answer(lambda: live.list(namespace=ns, label_selector=label, field_selector=field))
            answers[(label, field)] = expected
            if not (expected == from_cache == from_live):
                key = label or field or ""
                mismatches.append(
                    (
                        key,
                        f"label={label!r} field={field!r}: server {expected}, cache {from_cache}, "
                        f"live client {from_live}",
                    )
                )
    unknown = [m for key, m in mismatches if key not in KNOWN_CACHE_GAPS]
    closed = sorted(set(KNOWN_CACHE_GAPS) - {key for key, _ in mismatches})
    if closed:
        print(f"\nselector gaps that no longer show (drop them from KNOWN_CACHE_GAPS): {closed}")
    assert not unknown, "\n".join(unknown)
    # The table is not vacuous: it has empty, partial and full answers and both kinds of errors.
    values = list(answers.values())
    assert set() in values and set(PODS) in values and 400 in values
    assert sum(1 for v in values if v == 400) == len(INVALID_LABEL_SELECTORS) + len(INVALID_FIELD_SELECTORS)
