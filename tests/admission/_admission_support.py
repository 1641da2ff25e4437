"""Helpers for the admission tests: AdmissionReview bodies and ``Exchange`` values, answers decoded."""

from __future__ import annotations

import base64
import json
import threading
from typing import Any

from cloudcoil_cache.admission import AdmissionWebhook, Answer, Exchange

CM_KIND = {"group": "", "version": "v1", "kind": "ConfigMap"}
CM_RESOURCE = {"group": "", "version": "v1", "resource": "configmaps"}


def configmap(name: str = "web", namespace: str = "default", **fields: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "uid": "u-1", "resourceVersion": "5"},
    }
    obj.update(fields)
    return obj


def review(
    obj: dict[str, Any] | None = None,
    *,
    operation: str = "CREATE",
    old: dict[str, Any] | None = None,
    kind: dict[str, str] = CM_KIND,
    resource: dict[str, str] = CM_RESOURCE,
    namespace: str = "default",
    uid: str = "req-1",
    **request: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "uid": uid,
        "kind": kind,
        "resource": resource,
        "operation": operation,
        "namespace": namespace,
        "name": (obj or old or {}).get("metadata", {}).get("name", ""),
        "userInfo": {"username": "alice", "groups": ["dev"]},
    }
    if obj is not None:
        body["object"] = obj
    if old is not None:
        body["oldObject"] = old
    body.update(request)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": body}


def exchange(
    path: str,
    body: dict[str, Any] | bytes | None = None,
    *,
    method: str = "POST",
    content_type: str = "application/json",
    query: dict[str, str] | None = None,
) -> Exchange:
    raw = body if isinstance(body, bytes) else json.dumps(body or {}).encode()
    return Exchange(method, path, query or {}, {"content-type": content_type}, raw)


def call(webhook: AdmissionWebhook, ex: Exchange, disconnected: threading.Event | None = None) -> Answer:
    return webhook.answer(ex, disconnected or threading.Event())


def response(answer: Answer) -> dict[str, Any]:
    """The ``response`` of a 200 review answer."""
    assert answer.status == 200, (answer.status, answer.body)
    data = json.loads(answer.body)
    assert data["apiVersion"] == "admission.k8s.io/v1" and data["kind"] == "AdmissionReview"
    result: dict[str, Any] = data["response"]
    return result


def patch_of(answer: Answer) -> list[dict[str, Any]] | None:
    resp = response(answer)
    if "patch" not in resp:
        return None
    assert resp["patchType"] == "JSONPatch"
    ops: list[dict[str, Any]] = json.loads(base64.b64decode(resp["patch"]))
    return ops


def apply_patch(doc: Any, ops: list[dict[str, Any]]) -> Any:
    """A minimal RFC 6902 applier (add/remove/replace) to check patches against the raw object."""
    doc = json.loads(json.dumps(doc))
    for op in ops:
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in op["path"].split("/")[1:]]
        parent = doc
        for token in tokens[:-1]:
            parent = parent[int(token)] if isinstance(parent, list) else parent[token]
        last = tokens[-1]
        key: Any = int(last) if isinstance(parent, list) else last
        if op["op"] == "remove":
            del parent[key]
        else:
            parent[key] = op["value"]
    return doc
