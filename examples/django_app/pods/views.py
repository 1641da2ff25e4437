"""Views of the ``pods`` app: every read is ``Pod.list``/``Pod.get`` served from the informer cache."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from cloudcoil_cache.errors import ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import Pod


def _row(pod: Pod) -> dict[str, Any]:
    return {
        "name": pod.name,
        "namespace": pod.namespace,
        "phase": pod.status.phase if pod.status else "",
        "node": (pod.spec.node_name or "") if pod.spec else "",
        "labels": dict(pod.metadata.labels or {}),
    }


def _by_namespace(namespace: str | None) -> tuple[dict[str, list[dict[str, Any]]], str]:
    pods = Pod.list(namespace=namespace) if namespace else Pod.list(all_namespaces=True)
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for pod in pods:
        groups[pod.namespace].append(_row(pod))
    return (
        {ns: sorted(rows, key=lambda r: r["name"]) for ns, rows in sorted(groups.items())},
        pods.metadata.resource_version or "",
    )


def index(request: HttpRequest) -> HttpResponse:
    groups, rv = _by_namespace(request.GET.get("namespace"))
    return render(
        request,
        "pods/index.html",
        {"groups": groups.items(), "rv": rv, "total": sum(len(rows) for rows in groups.values())},
    )


def api_pods(request: HttpRequest) -> JsonResponse:
    groups, rv = _by_namespace(request.GET.get("namespace"))
    return JsonResponse({"resourceVersion": rv, "namespaces": groups})


def api_pod(request: HttpRequest, namespace: str, name: str) -> JsonResponse:
    try:
        return JsonResponse(_row(Pod.get(name, namespace=namespace)))
    except ResourceNotFound as exc:
        return JsonResponse({"error": str(exc)}, status=404)
