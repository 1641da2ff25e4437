"""Server-side tables (``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``) as kubectl gets them.

Columns are kube-apiserver's printers for pods, deployments, replica sets, services, config maps,
secrets, namespaces, nodes and leases; other kinds get the default ``Name`` / ``Created At``
columns (kube-apiserver has printers for most of them).
Columns with ``priority`` 1 are those ``kubectl get -o wide`` adds.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Callable

__all__ = ["human_duration", "table_event", "to_table", "wants_table"]

_DESCRIPTIONS = {
    "Name": "Name must be unique within a namespace. Is required when creating "
    "resources, although some resources may allow a client to request the "
    "generation of an appropriate name automatically.",
    "Age": "CreationTimestamp is a timestamp representing the server time when this object was created.",
}


def wants_table(accept: str) -> bool:
    """Whether the Accept header asks for a meta.k8s.io/v1 Table."""
    for media in accept.split(","):
        params = {p.split("=", 1)[0].strip(): p.split("=", 1)[1].strip() for p in media.split(";")[1:] if "=" in p}
        if (
            params.get("as") == "Table"
            and params.get("g", "meta.k8s.io") == "meta.k8s.io"
            and params.get("v", "v1") in ("v1", "v1beta1")
        ):
            return True
    return False


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def _age(obj: dict[str, Any]) -> str:
    stamp = (obj.get("metadata") or {}).get("creationTimestamp")
    if not stamp:
        return "<unknown>"
    try:
        created = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return "<unknown>"
    return human_duration((datetime.now(timezone.utc) - created).total_seconds())


def _col(name: str, kind: str = "string", priority: int = 0, fmt: str = "") -> dict[str, Any]:
    return {
        "name": name,
        "type": kind,
        "format": fmt,
        "description": _DESCRIPTIONS.get(name, name),
        "priority": priority,
    }


def _pod(obj: dict[str, Any]) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    statuses = status.get("containerStatuses") or []
    total = len(spec.get("containers") or [])
    ready = sum(1 for c in statuses if c.get("ready"))
    restarts = sum(int(c.get("restartCount") or 0) for c in statuses)
    reason = status.get("reason") or status.get("phase") or "Unknown"
    for c in statuses:
        state = c.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif (state.get("terminated") or {}).get("reason"):
            reason = state["terminated"]["reason"]
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        reason = "Terminating"
    gates = spec.get("readinessGates") or []
    return [
        obj["metadata"]["name"],
        f"{ready}/{total}",
        reason,
        str(restarts),
        _age(obj),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        f"{len(gates)}/{len(gates)}" if gates else "<none>",
    ]


def _containers(template: dict[str, Any]) -> tuple[str, str]:
    containers = ((template or {}).get("spec") or {}).get("containers") or []
    return (",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers))


def _selector(selector: Any) -> str:
    labels = (selector or {}).get("matchLabels") or {}
    text = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return text or "<none>"


def _deployment(obj: dict[str, Any]) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _containers(spec.get("template") or {})
    return [
        obj["metadata"]["name"],
        f"{int(status.get('readyReplicas') or 0)}/{int(spec.get('replicas', 1) or 0)}",
        int(status.get("updatedReplicas") or 0),
        int(status.get("availableReplicas") or 0),
        _age(obj),
        names,
        images,
        _selector(spec.get("selector")),
    ]


def _replica_set(obj: dict[str, Any]) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _containers(spec.get("template") or {})
    return [
        obj["metadata"]["name"],
        int(spec.get("replicas", 1) or 0),
        int(status.get("replicas") or 0),
        int(status.get("readyReplicas") or 0),
        _age(obj),
        names,
        images,
        _selector(spec.get("selector")),
    ]


def _service(obj: dict[str, Any]) -> list[Any]:
    spec = obj.get("spec") or {}
    kind = spec.get("type", "ClusterIP")
    ingress = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    external = ",".join(i.get("ip") or i.get("hostname") or "" for i in ingress)
    if kind == "ExternalName":
        external = spec.get("externalName", "")
    external = (
        external or ",".join(spec.get("externalIPs") or []) or ("<pending>" if kind == "LoadBalancer" else "<none>")
    )
    ports = (
        ",".join(
            f"{p.get('port')}" + (f":{p['nodePort']}" if p.get("nodePort") else "") + f"/{p.get('protocol', 'TCP')}"
            for p in spec.get("ports") or ()
        )
        or "<none>"
    )
    selector = ",".join(f"{k}={v}" for k, v in sorted((spec.get("selector") or {}).items()))
    return [
        obj["metadata"]["name"],
        kind,
        spec.get("clusterIP") or "<none>",
        external,
        ports,
        _age(obj),
        selector or "<none>",
    ]


def _node(obj: dict[str, Any]) -> list[Any]:
    status = obj.get("status") or {}
    ready = next((c for c in status.get("conditions") or () if c.get("type") == "Ready"), None)
    state = "Unknown" if ready is None else ("Ready" if ready.get("status") == "True" else "NotReady")
    if (obj.get("spec") or {}).get("unschedulable"):
        state += ",SchedulingDisabled"
    labels = obj["metadata"].get("labels") or {}
    roles = sorted(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/") and "/" in k)
    info = status.get("nodeInfo") or {}
    addresses = {a.get("type"): a.get("address") for a in status.get("addresses") or ()}
    return [
        obj["metadata"]["name"],
        state,
        ",".join(roles) or "<none>",
        _age(obj),
        info.get("kubeletVersion", ""),
        addresses.get("InternalIP", "<none>"),
        addresses.get("ExternalIP", "<none>"),
        info.get("osImage", "<unknown>"),
        info.get("kernelVersion", "<unknown>"),
        info.get("containerRuntimeVersion", "<unknown>"),
    ]


_PRINTERS: dict[tuple[str, str], tuple[list[dict[str, Any]], Callable[[dict[str, Any]], list[Any]]]] = {
    ("", "Pod"): (
        [
            _col("Name", fmt="name"),
            _col("Ready"),
            _col("Status"),
            _col("Restarts"),
            _col("Age"),
            _col("IP", priority=1),
            _col("Node", priority=1),
            _col("Nominated Node", priority=1),
            _col("Readiness Gates", priority=1),
        ],
        _pod,
    ),
    ("apps", "Deployment"): (
        [
            _col("Name", fmt="name"),
            _col("Ready"),
            _col("Up-to-date"),
            _col("Available"),
            _col("Age"),
            _col("Containers", priority=1),
            _col("Images", priority=1),
            _col("Selector", priority=1),
        ],
        _deployment,
    ),
    ("apps", "ReplicaSet"): (
        [
            _col("Name", fmt="name"),
            _col("Desired", "integer"),
            _col("Current", "integer"),
            _col("Ready", "integer"),
            _col("Age"),
            _col("Containers", priority=1),
            _col("Images", priority=1),
            _col("Selector", priority=1),
        ],
        _replica_set,
    ),
    ("", "Service"): (
        [
            _col("Name", fmt="name"),
            _col("Type"),
            _col("Cluster-IP"),
            _col("External-IP"),
            _col("Port(s)"),
            _col("Age"),
            _col("Selector", priority=1),
        ],
        _service,
    ),
    ("", "ConfigMap"): (
        [_col("Name", fmt="name"), _col("Data"), _col("Age")],
        lambda o: [o["metadata"]["name"], len(o.get("data") or {}) + len(o.get("binaryData") or {}), _age(o)],
    ),
    ("", "Secret"): (
        [_col("Name", fmt="name"), _col("Type"), _col("Data"), _col("Age")],
        lambda o: [o["metadata"]["name"], o.get("type", ""), len(o.get("data") or {}), _age(o)],
    ),
    ("coordination.k8s.io", "Lease"): (
        [_col("Name", fmt="name"), _col("Holder"), _col("Age")],
        lambda o: [o["metadata"]["name"], (o.get("spec") or {}).get("holderIdentity", ""), _age(o)],
    ),
    ("", "Namespace"): (
        [_col("Name", fmt="name"), _col("Status"), _col("Age")],
        lambda o: [o["metadata"]["name"], (o.get("status") or {}).get("phase", ""), _age(o)],
    ),
    ("", "Node"): (
        [
            _col("Name", fmt="name"),
            _col("Status"),
            _col("Roles"),
            _col("Age"),
            _col("Version"),
            _col("Internal-IP", priority=1),
            _col("External-IP", priority=1),
            _col("OS-Image", priority=1),
            _col("Kernel-Version", priority=1),
            _col("Container-Runtime", priority=1),
        ],
        _node,
    ),
}
_DEFAULT = (
    [
        _col("Name", fmt="name"),
        {
            "name": "Created At",
            "type": "date",
            "format": "",
            "description": "CreationTimestamp is a timestamp "
            "representing the server time when this object was "
            "created.",
            "priority": 0,
        },
    ],
    lambda o: [o["metadata"]["name"], o["metadata"].get("creationTimestamp")],
)


def to_table(
    group: str,
    kind: str,
    builtin: bool,
    items: list[dict[str, Any]],
    list_meta: dict[str, Any],
    include: str = "Metadata",
) -> dict[str, Any]:
    """A Table of ``items`` (full objects) with the printer of their kind."""
    columns, cells = _PRINTERS.get((group, kind), _DEFAULT) if builtin else _DEFAULT
    rows = []
    for obj in items:
        row: dict[str, Any] = {"cells": cells(obj)}
        if include == "Object":
            row["object"] = obj
        elif include != "None":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj.get("metadata") or {},
            }
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": columns,
        "rows": rows,
    }


def table_event(line: bytes, rtype: Any) -> bytes:
    """A watch event line whose object becomes a one-row Table (BOOKMARK and ERROR unchanged)."""
    event = json.loads(line)
    if event.get("type") in ("ADDED", "MODIFIED", "DELETED"):
        obj = event["object"]
        event["object"] = to_table(
            rtype.group,
            rtype.kind,
            rtype.builtin,
            [obj],
            {"resourceVersion": obj["metadata"].get("resourceVersion", "")},
        )
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"
