"""kubectl-like table columns for common kinds (NAME ... AGE), computed from an object's wire form."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Callable, Mapping, Sequence

__all__ = ["Columns", "age", "columns_for", "format_table"]

Row = list[str]
Obj = Mapping[str, Any]


def _get(obj: Obj, *path: str, default: Any = None) -> Any:
    cur: Any = obj
    for key in path:
        if not isinstance(cur, Mapping):
            return default
        cur = cur.get(key)
    return default if cur is None else cur


def age(timestamp: str | None, now: _dt.datetime | None = None) -> str:
    """kubectl's short duration since an RFC 3339 timestamp: ``45s``, ``12m``, ``5h3m``, ``27d``."""
    if not timestamp:
        return "<unknown>"
    try:
        then = _dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    now = now or _dt.datetime.now(_dt.timezone.utc)
    seconds = max(0, int((now - then).total_seconds()))
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if days < 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    return f"{days // 365}y{days % 365}d"


def _pod_status(pod: Obj) -> str:
    if _get(pod, "metadata", "deletionTimestamp"):
        return "Terminating"
    reason = _get(pod, "status", "reason")
    for status in _get(pod, "status", "containerStatuses", default=[]):
        waiting = _get(status, "state", "waiting", "reason")
        terminated = _get(status, "state", "terminated", "reason")
        if waiting or (terminated and terminated != "Completed"):
            return str(waiting or terminated)
    return str(reason or _get(pod, "status", "phase", default="Unknown"))


def _pod(pod: Obj) -> Row:
    statuses = _get(pod, "status", "containerStatuses", default=[])
    containers = _get(pod, "spec", "containers", default=[])
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
    return [f"{ready}/{len(containers)}", _pod_status(pod), str(restarts)]


def _pod_wide(pod: Obj) -> Row:
    return [str(_get(pod, "status", "podIP", default="<none>")), str(_get(pod, "spec", "nodeName", default="<none>"))]


def _deployment(obj: Obj) -> Row:
    spec_replicas = _get(obj, "spec", "replicas", default=1)
    return [
        f"{_get(obj, 'status', 'readyReplicas', default=0)}/{spec_replicas}",
        str(_get(obj, "status", "updatedReplicas", default=0)),
        str(_get(obj, "status", "availableReplicas", default=0)),
    ]


def _containers_wide(obj: Obj) -> Row:
    containers = _get(obj, "spec", "template", "spec", "containers", default=[])
    selector = _get(obj, "spec", "selector", "matchLabels", default={})
    return [
        ",".join(str(c.get("name")) for c in containers),
        ",".join(str(c.get("image")) for c in containers),
        ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>",
    ]


def _service(obj: Obj) -> Row:
    ports = _get(obj, "spec", "ports", default=[])
    shown = ",".join(
        f"{p.get('port')}{':' + str(p['nodePort']) if p.get('nodePort') else ''}/{p.get('protocol', 'TCP')}"
        for p in ports
    )
    external = _get(obj, "status", "loadBalancer", "ingress", default=[])
    ext = ",".join(str(i.get("ip") or i.get("hostname")) for i in external) or (
        ",".join(_get(obj, "spec", "externalIPs", default=[])) or "<none>"
    )
    return [
        str(_get(obj, "spec", "type", default="ClusterIP")),
        str(_get(obj, "spec", "clusterIP", default="<none>")),
        ext,
        shown or "<none>",
    ]


def _data_count(obj: Obj) -> str:
    return str(len(_get(obj, "data", default={})) + len(_get(obj, "binaryData", default={})))


def _node(obj: Obj) -> Row:
    conditions = _get(obj, "status", "conditions", default=[])
    ready = next((c.get("status") for c in conditions if c.get("type") == "Ready"), "Unknown")
    status = "Ready" if ready == "True" else "NotReady"
    if _get(obj, "spec", "unschedulable"):
        status += ",SchedulingDisabled"
    prefix = "node-role.kubernetes.io/"
    roles = sorted(k[len(prefix) :] for k in _get(obj, "metadata", "labels", default={}) if k.startswith(prefix))
    return [status, ",".join(roles) or "<none>", str(_get(obj, "status", "nodeInfo", "kubeletVersion", default=""))]


def _replicas(*fields: str) -> Callable[[Obj], Row]:
    def row(obj: Obj) -> Row:
        out = []
        for field in fields:
            if field == "desired":
                out.append(
                    str(_get(obj, "spec", "replicas", default=_get(obj, "status", "desiredNumberScheduled", default=0)))
                )
            else:
                out.append(str(_get(obj, "status", field, default=0)))
        return out

    return row


def _statefulset(obj: Obj) -> Row:
    return [f"{_get(obj, 'status', 'readyReplicas', default=0)}/{_get(obj, 'spec', 'replicas', default=1)}"]


def _job(obj: Obj) -> Row:
    return [f"{_get(obj, 'status', 'succeeded', default=0)}/{_get(obj, 'spec', 'completions', default=1)}"]


class Columns:
    """The columns of one kind: headers after NAME and the function computing them (AGE is added last,
    or where ``headers`` places it; the function returns every cell but AGE)."""

    def __init__(
        self,
        headers: Sequence[str],
        row: Callable[[Obj], Row],
        wide_headers: Sequence[str] = (),
        wide_row: Callable[[Obj], Row] | None = None,
    ) -> None:
        self.headers = list(headers)
        self.row = row
        self.wide_headers = list(wide_headers)
        self.wide_row = wide_row

    def header(self, *, wide: bool, namespaced: bool) -> Row:
        extra = self.headers if "AGE" in self.headers else [*self.headers, "AGE"]
        head = (["NAMESPACE"] if namespaced else []) + ["NAME", *extra]
        return head + (self.wide_headers if wide else [])

    def cells(self, obj: Obj, *, wide: bool, namespaced: bool) -> Row:
        meta = obj.get("metadata") or {}
        row = ([str(meta.get("namespace", ""))] if namespaced else []) + [str(meta.get("name", ""))]
        cells = self.row(obj)
        at = self.headers.index("AGE") if "AGE" in self.headers else len(cells)
        row += cells[:at] + [age(meta.get("creationTimestamp"))] + cells[at:]
        if wide and self.wide_row is not None:
            row += self.wide_row(obj)
        return row


_COLUMNS: dict[str, Columns] = {
    "Pod": Columns(["READY", "STATUS", "RESTARTS"], _pod, ["IP", "NODE"], _pod_wide),
    "Deployment": Columns(
        ["READY", "UP-TO-DATE", "AVAILABLE"], _deployment, ["CONTAINERS", "IMAGES", "SELECTOR"], _containers_wide
    ),
    "ReplicaSet": Columns(
        ["DESIRED", "CURRENT", "READY"],
        _replicas("desired", "replicas", "readyReplicas"),
        ["CONTAINERS", "IMAGES", "SELECTOR"],
        _containers_wide,
    ),
    "StatefulSet": Columns(["READY"], _statefulset, ["CONTAINERS", "IMAGES"], lambda o: _containers_wide(o)[:2]),
    "DaemonSet": Columns(
        ["DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE"],
        _replicas(
            "desiredNumberScheduled",
            "currentNumberScheduled",
            "numberReady",
            "updatedNumberScheduled",
            "numberAvailable",
        ),
    ),
    "Job": Columns(["COMPLETIONS"], _job),
    "Service": Columns(["TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)"], _service),
    "ConfigMap": Columns(["DATA"], lambda o: [_data_count(o)]),
    "Secret": Columns(["TYPE", "DATA"], lambda o: [str(o.get("type") or "Opaque"), _data_count(o)]),
    "Namespace": Columns(["STATUS"], lambda o: [str(_get(o, "status", "phase", default="Active"))]),
    "Node": Columns(["STATUS", "ROLES", "AGE", "VERSION"], _node),
}
_GENERIC = Columns([], lambda o: [])


def columns_for(kind: str) -> Columns:
    """The columns for ``kind`` (NAME and AGE only for kinds without a specific layout)."""
    return _COLUMNS.get(kind, _GENERIC)


def format_table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Left-aligned columns separated by three spaces, as kubectl prints them (first row: header)."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows if i < len(row)) for i in range(max(len(r) for r in rows))]
    return ["   ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
