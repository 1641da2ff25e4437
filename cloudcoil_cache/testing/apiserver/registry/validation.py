"""The table of validation, defaulting and immutability rules the fake server applies per type.

Rules are keyed by schema definition (``PodSpec``, ``Container``, ...) so they apply wherever the
type appears (a Pod's spec and a Deployment's template alike), or by kind for whole-object rules.
Messages are kube-apiserver's.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

__all__ = [
    "DEFAULTS",
    "IMMUTABLE",
    "NAME_RULES",
    "OBJECT_RULES",
    "TYPE_RULES",
    "Errors",
    "check_name",
    "label_errors",
    "render",
]

_CORE = "io.k8s.api.core.v1."
_APPS = "io.k8s.api.apps.v1."
_BATCH = "io.k8s.api.batch.v1."

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
    "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_CONFIG_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)
POD_UPDATE_MSG = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set "
    "to 1 if it was previously negative)"
)


def render(value: Any) -> str:
    """A value as the real messages show simple ones: strings quoted, numbers bare."""
    if isinstance(value, GoValue):
        return str(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def go_labels(value: Any) -> str:
    """A label map as Go's ``%#v`` prints it."""
    if not isinstance(value, dict):
        return "map[string]string(nil)"
    inner = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(value.items()))
    return f"map[string]string{{{inner}}}"


def go_label_selector(value: Any) -> str:
    """A LabelSelector as Go's ``%#v`` prints it (``v1.LabelSelector{...}``)."""
    value = value if isinstance(value, dict) else {}
    labels = value.get("matchLabels")
    exprs = value.get("matchExpressions")
    expr_text = "[]v1.LabelSelectorRequirement(nil)"
    if exprs:
        parts = []
        for e in exprs:
            values = e.get("values")
            vals = "[]string{" + ", ".join(json.dumps(v) for v in values) + "}" if values else "[]string(nil)"
            parts.append(
                f"v1.LabelSelectorRequirement{{Key:{json.dumps(e.get('key', ''))}, "
                f"Operator:{json.dumps(e.get('operator', ''))}, Values:{vals}}}"
            )
        expr_text = "[]v1.LabelSelectorRequirement{" + ", ".join(parts) + "}"
    return f"v1.LabelSelector{{MatchLabels:{go_labels(labels)}, MatchExpressions:{expr_text}}}"


class GoValue(str):
    """A value already rendered as Go prints it (shown as is in messages)."""


class Errors:
    """Field errors collected by validation: ``(field, reason, text)``."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str, str]] = []

    def _add(self, item: tuple[str, str, str]) -> None:
        if item not in self.items:
            self.items.append(item)

    def required(self, field: str) -> None:
        self._add((field, "FieldValueRequired", "Required value"))

    def invalid(self, field: str, value: Any, detail: str) -> None:
        self._add((field, "FieldValueInvalid", f"Invalid value: {render(value)}: {detail}"))

    def forbidden(self, field: str, detail: str) -> None:
        self._add((field, "FieldValueForbidden", f"Forbidden: {detail}"))

    def unsupported(self, field: str, value: Any, supported: list[str]) -> None:
        allowed = ", ".join(render(s) for s in supported)
        self._add((field, "FieldValueNotSupported", f"Unsupported value: {render(value)}: supported values: {allowed}"))

    def __bool__(self) -> bool:
        return bool(self.items)


# -- names and labels -------------------------------------------------------------------------


def _dns(rule: str, value: str) -> str | None:
    if rule == "path":
        if value in (".", ".."):
            return f"may not be '{value}'"
        for bad in ("/", "%"):
            if bad in value:
                return f"may not contain '{bad}'"
        return None
    pattern, message, limit = {
        "subdomain": (_SUBDOMAIN, SUBDOMAIN_MSG, 253),
        "label": (_LABEL, LABEL_MSG, 63),
        "dns1035": (_DNS1035, DNS1035_MSG, 63),
    }[rule]
    if len(value) > limit:
        return f"must be no more than {limit} characters"
    if pattern.match(value):
        return None
    if rule == "label" and "." in value and _SUBDOMAIN.match(value):
        return "must not contain dots"
    return message


# Kinds whose names are not DNS subdomains (the default).
NAME_RULES: dict[tuple[str, str], str] = {
    ("", "Namespace"): "label",
    ("", "Service"): "dns1035",
    ("rbac.authorization.k8s.io", "Role"): "path",
    ("rbac.authorization.k8s.io", "ClusterRole"): "path",
    ("rbac.authorization.k8s.io", "RoleBinding"): "path",
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): "path",
}


def check_name(group: str, kind: str, name: str, errs: Errors) -> None:
    problem = _dns(NAME_RULES.get((group, kind), "subdomain"), name)
    if problem is not None:
        errs.invalid("metadata.name", name, problem)


def _qualified_name(key: str) -> str | None:
    prefix, _, name = key.rpartition("/")
    if prefix:
        problem = _dns("subdomain", prefix)
        if problem is not None:
            return f"prefix part {problem}"
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return "name part must be no more than 63 characters"
    return None if _NAME_PART.match(name) else _NAME_PART_MSG


def label_errors(meta: dict[str, Any], base: str, errs: Errors) -> None:
    for field in ("labels", "annotations"):
        values = meta.get(field)
        if not isinstance(values, dict):
            continue
        for key, value in values.items():
            problem = _qualified_name(str(key))
            if problem is not None:
                errs.invalid(f"{base}.{field}", key, problem)
            elif field == "labels" and isinstance(value, str):
                if len(value) > 63:
                    errs.invalid(f"{base}.labels", value, "must be no more than 63 characters")
                elif not _LABEL_VALUE.match(value):
                    errs.invalid(f"{base}.labels", value, _LABEL_VALUE_MSG)


# -- defaults (per definition) --------------------------------------------------------------


def _set(obj: dict[str, Any], key: str, value: Any) -> None:
    if obj.get(key) is None:
        obj[key] = value


def _pull_policy(image: Any) -> str:
    if not isinstance(image, str):
        return "IfNotPresent"
    name = image.split("@")[0].rsplit("/", 1)[-1]
    if "@" not in image and (":" not in name or name.endswith(":latest")):
        return "Always"
    return "IfNotPresent"


def _container(c: dict[str, Any]) -> None:
    _set(c, "resources", {})
    _set(c, "imagePullPolicy", _pull_policy(c.get("image")))
    _set(c, "terminationMessagePath", "/dev/termination-log")
    _set(c, "terminationMessagePolicy", "File")


def _pod_spec(s: dict[str, Any]) -> None:
    _set(s, "restartPolicy", "Always")
    _set(s, "dnsPolicy", "ClusterFirst")
    _set(s, "terminationGracePeriodSeconds", 30)
    _set(s, "schedulerName", "default-scheduler")
    _set(s, "securityContext", {})


def _probe(p: dict[str, Any]) -> None:
    for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3)):
        _set(p, key, value)


def _deployment_spec(s: dict[str, Any]) -> None:
    _set(s, "replicas", 1)
    _set(s, "strategy", {})
    strategy = s["strategy"]
    if isinstance(strategy, dict):
        _set(strategy, "type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            _set(strategy, "rollingUpdate", {})
            rolling = strategy["rollingUpdate"]
            if isinstance(rolling, dict):
                _set(rolling, "maxUnavailable", "25%")
                _set(rolling, "maxSurge", "25%")
    _set(s, "revisionHistoryLimit", 10)
    _set(s, "progressDeadlineSeconds", 600)


def _stateful_set_spec(s: dict[str, Any]) -> None:
    _set(s, "replicas", 1)
    _set(s, "podManagementPolicy", "OrderedReady")
    _set(s, "revisionHistoryLimit", 10)
    _set(s, "updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    _set(s, "persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})


def _daemon_set_spec(s: dict[str, Any]) -> None:
    _set(s, "revisionHistoryLimit", 10)
    _set(s, "updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})


def _job_spec(s: dict[str, Any]) -> None:
    _set(s, "parallelism", 1)
    _set(s, "completions", 1)
    _set(s, "backoffLimit", 6)
    _set(s, "completionMode", "NonIndexed")
    _set(s, "suspend", False)


def _cron_job_spec(s: dict[str, Any]) -> None:
    _set(s, "concurrencyPolicy", "Allow")
    _set(s, "suspend", False)
    _set(s, "successfulJobsHistoryLimit", 3)
    _set(s, "failedJobsHistoryLimit", 1)


def _service_spec(s: dict[str, Any]) -> None:
    _set(s, "type", "ClusterIP")
    _set(s, "sessionAffinity", "None")
    if s["type"] != "ExternalName":
        _set(s, "internalTrafficPolicy", "Cluster")
    for port in s.get("ports") or ():
        if isinstance(port, dict):
            _set(port, "protocol", "TCP")
            _set(port, "targetPort", port.get("port"))


def _template(t: dict[str, Any]) -> None:
    _set(t, "metadata", {})
    if isinstance(t["metadata"], dict):
        t["metadata"].setdefault("creationTimestamp", None)  # Go's zero time, serialized


DEFAULTS: dict[str, Callable[[dict[str, Any]], None]] = {
    _CORE + "PodTemplateSpec": _template,
    _CORE + "Container": _container,
    _CORE + "EphemeralContainer": _container,
    _CORE + "PodSpec": _pod_spec,
    _CORE + "ContainerPort": lambda p: _set(p, "protocol", "TCP"),
    _CORE + "Probe": _probe,
    _CORE + "HTTPGetAction": lambda h: _set(h, "scheme", "HTTP"),
    _CORE + "ConfigMapVolumeSource": lambda v: _set(v, "defaultMode", 420),
    _CORE + "SecretVolumeSource": lambda v: _set(v, "defaultMode", 420),
    _CORE + "ServiceSpec": _service_spec,
    _APPS + "DeploymentSpec": _deployment_spec,
    _APPS + "StatefulSetSpec": _stateful_set_spec,
    _APPS + "DaemonSetSpec": _daemon_set_spec,
    _APPS + "ReplicaSetSpec": lambda s: _set(s, "replicas", 1),
    _CORE + "ReplicationControllerSpec": lambda s: _set(s, "replicas", 1),
    _BATCH + "JobSpec": _job_spec,
    _BATCH + "CronJobSpec": _cron_job_spec,
}


# -- validation (per definition and per kind) ----------------------------------------------


def _containers(spec: dict[str, Any], path: str, errs: Errors) -> None:
    containers = spec.get("containers")
    names: set[str] = set()
    for field in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(field) or ()):
            if not isinstance(c, dict):
                continue
            name = c.get("name")
            if isinstance(name, str) and name:
                if _dns("label", name) is not None:
                    errs.invalid(f"{path}.{field}[{i}].name", name, LABEL_MSG)
                elif name in names:
                    errs.items.append(
                        (f"{path}.{field}[{i}].name", "FieldValueDuplicate", f"Duplicate value: {render(name)}")
                    )
                names.add(name)
            if not c.get("image") and field == "containers":
                errs.required(f"{path}.{field}[{i}].image")
            policy = c.get("imagePullPolicy")
            if policy not in (None, "Always", "IfNotPresent", "Never"):
                errs.unsupported(f"{path}.{field}[{i}].imagePullPolicy", policy, ["Always", "IfNotPresent", "Never"])
            for j, port in enumerate(c.get("ports") or ()):
                number = port.get("containerPort") if isinstance(port, dict) else None
                if isinstance(number, int) and not 0 < number < 65536:
                    errs.invalid(
                        f"{path}.{field}[{i}].ports[{j}].containerPort",
                        number,
                        "must be between 1 and 65535, inclusive",
                    )
    if not containers:
        errs.required(f"{path}.containers")


def _pod_spec_rules(spec: dict[str, Any], path: str, errs: Errors) -> None:
    _containers(spec, path, errs)
    for field, allowed in (
        ("restartPolicy", ["Always", "OnFailure", "Never"]),
        ("dnsPolicy", ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]),
    ):
        value = spec.get(field)
        if value is not None and value not in allowed:
            errs.unsupported(f"{path}.{field}", value, allowed)
    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0:
        errs.invalid(f"{path}.terminationGracePeriodSeconds", grace, "must be greater than or equal to 0")


def _service_rules(spec: dict[str, Any], path: str, errs: Errors) -> None:
    kind = spec.get("type", "ClusterIP")
    allowed = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
    if kind not in allowed:
        errs.unsupported(f"{path}.type", kind, allowed)
    ports = spec.get("ports") or []
    if not ports and kind != "ExternalName" and spec.get("clusterIP") != "None":
        errs.required(f"{path}.ports")
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            continue
        number = port.get("port")
        if isinstance(number, int) and not 0 < number < 65536:
            errs.invalid(f"{path}.ports[{i}].port", number, "must be between 1 and 65535, inclusive")
        if len(ports) > 1 and not port.get("name"):
            errs.required(f"{path}.ports[{i}].name")
    if kind == "ExternalName" and not spec.get("externalName"):
        errs.required(f"{path}.externalName")


def _selector_matches(selector: Any, labels: Any) -> bool:
    if not isinstance(selector, dict):
        return False  # no selector selects nothing
    labels = labels if isinstance(labels, dict) else {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for req in selector.get("matchExpressions") or ():
        key, op, values = req.get("key"), req.get("operator"), req.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def _workload_rules(spec: dict[str, Any], path: str, errs: Errors) -> None:
    selector = spec.get("selector")
    template = spec.get("template")
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and replicas < 0:
        errs.invalid(f"{path}.replicas", replicas, "must be greater than or equal to 0")
    if isinstance(selector, dict) and not (selector.get("matchLabels") or selector.get("matchExpressions")):
        errs.invalid(f"{path}.selector", selector, "empty selector is invalid for deployment")
    labels = ((template or {}).get("metadata") or {}).get("labels") if isinstance(template, dict) else None
    if not _selector_matches(selector, labels):
        errs.invalid(
            f"{path}.template.metadata.labels",
            GoValue(go_labels(labels)),
            "`selector` does not match template `labels`",
        )
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        errs.required(f"{path}.template.spec.containers")
    tspec = (template or {}).get("spec") if isinstance(template, dict) else None
    if isinstance(tspec, dict):
        policy = tspec.get("restartPolicy")
        if policy is not None and policy != "Always":
            errs.unsupported(f"{path}.template.spec.restartPolicy", policy, ["Always"])


def _job_rules(spec: dict[str, Any], path: str, errs: Errors) -> None:
    tspec = (spec.get("template") or {}).get("spec") or {}
    policy = tspec.get("restartPolicy")
    if policy is not None and policy not in ("OnFailure", "Never"):
        errs.unsupported(f"{path}.template.spec.restartPolicy", policy, ["OnFailure", "Never"])


def _cron_rules(spec: dict[str, Any], path: str, errs: Errors) -> None:
    schedule = spec.get("schedule")
    if isinstance(schedule, str) and len(schedule.split()) not in (5, 6) and not schedule.startswith("@"):
        errs.invalid(
            f"{path}.schedule", schedule, f"unparseable schedule {render(schedule)}: expected exactly 5 fields"
        )


def _config_keys(obj: dict[str, Any], errs: Errors) -> None:
    for field in ("data", "binaryData", "stringData"):
        for key in obj.get(field) or {}:
            if len(key) > 253:
                errs.invalid(f"{field}[{key}]", key, "must be no more than 253 characters")
            elif not _CONFIG_KEY.match(key):
                errs.invalid(f"{field}[{key}]", key, _CONFIG_KEY_MSG)


def _lease_rules(obj: dict[str, Any], errs: Errors) -> None:
    spec = obj.get("spec") or {}
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errs.invalid("spec.leaseDurationSeconds", duration, "must be greater than 0")
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        errs.invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0")


# Rules run on every dict of a definition (value, its path, errors).
TYPE_RULES: dict[str, Callable[[dict[str, Any], str, Errors], None]] = {
    _CORE + "PodSpec": _pod_spec_rules,
    _CORE + "ServiceSpec": _service_rules,
    _APPS + "DeploymentSpec": _workload_rules,
    _APPS + "ReplicaSetSpec": _workload_rules,
    _APPS + "StatefulSetSpec": _workload_rules,
    _APPS + "DaemonSetSpec": _workload_rules,
    _BATCH + "JobSpec": _job_rules,
    _BATCH + "CronJobSpec": _cron_rules,
}

# Rules run on whole objects of a kind: (group, kind) -> rule(obj, errs).
OBJECT_RULES: dict[tuple[str, str], Callable[[dict[str, Any], Errors], None]] = {
    ("", "ConfigMap"): _config_keys,
    ("", "Secret"): _config_keys,
    ("coordination.k8s.io", "Lease"): _lease_rules,
}


# -- immutability: (group, kind) -> rule(old, new, errs) ---------------------------------------


def _field_immutable(*paths: str) -> Callable[[dict[str, Any], dict[str, Any], Errors], None]:
    def rule(old: dict[str, Any], new: dict[str, Any], errs: Errors) -> None:
        for path in paths:
            before, after = _at(old, path), _at(new, path)
            if before is not None and before != after:
                shown = GoValue(go_label_selector(after)) if path.endswith("selector") else after
                errs.invalid(path, shown, "field is immutable")

    return rule


def _at(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _pod_immutable(old: dict[str, Any], new: dict[str, Any], errs: Errors) -> None:
    before = json.loads(json.dumps(old.get("spec") or {}))
    after = new.get("spec") or {}
    for field in ("containers", "initContainers"):
        old_list, new_list = before.get(field) or [], after.get(field) or []
        if len(old_list) == len(new_list):
            for o, n in zip(old_list, new_list):
                if isinstance(o, dict) and isinstance(n, dict) and "image" in n:
                    o["image"] = n["image"]
    deadline, new_deadline = before.get("activeDeadlineSeconds"), after.get("activeDeadlineSeconds")
    if isinstance(new_deadline, int) and new_deadline > 0 and (deadline is None or new_deadline <= deadline):
        before["activeDeadlineSeconds"] = new_deadline
    tolerations = after.get("tolerations") or []
    if all(t in tolerations for t in before.get("tolerations") or []):
        before["tolerations"] = after.get("tolerations")
    grace = before.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0 and after.get("terminationGracePeriodSeconds") == 1:
        before["terminationGracePeriodSeconds"] = 1
    gates = after.get("schedulingGates") or []
    if all(g in (before.get("schedulingGates") or []) for g in gates):
        before["schedulingGates"] = after.get("schedulingGates")
    for key in [k for k in ("tolerations", "schedulingGates") if before.get(k) is None]:
        before.pop(key, None)
    after_cmp = {k: v for k, v in after.items() if not (k in ("tolerations", "schedulingGates") and v is None)}
    if before != after_cmp:
        errs.forbidden("spec", POD_UPDATE_MSG)


def _immutable_data(old: dict[str, Any], new: dict[str, Any], errs: Errors) -> None:
    if old.get("immutable") is True:
        for field in ("data", "binaryData"):
            if (old.get(field) or {}) != (new.get(field) or {}):
                errs.forbidden(field, "field is immutable when `immutable` is set")
        if new.get("immutable") is not True:
            errs.forbidden("immutable", "field is immutable when `immutable` is set")


def _secret_immutable(old: dict[str, Any], new: dict[str, Any], errs: Errors) -> None:
    _field_immutable("type")(old, new, errs)
    _immutable_data(old, new, errs)


def _service_immutable(old: dict[str, Any], new: dict[str, Any], errs: Errors) -> None:
    before = _at(old, "spec.clusterIP")
    after = _at(new, "spec.clusterIP")
    if before and after is not None and after != before and _at(new, "spec.type") != "ExternalName":
        errs.invalid("spec.clusterIPs[0]", [after], "may not change once set")


IMMUTABLE: dict[tuple[str, str], Callable[[dict[str, Any], dict[str, Any], Errors], None]] = {
    ("", "Pod"): _pod_immutable,
    ("", "ConfigMap"): _immutable_data,
    ("", "Secret"): _secret_immutable,
    ("", "Service"): _service_immutable,
    ("apps", "Deployment"): _field_immutable("spec.selector"),
    ("apps", "ReplicaSet"): _field_immutable("spec.selector"),
    ("apps", "DaemonSet"): _field_immutable("spec.selector"),
    ("apps", "StatefulSet"): _field_immutable("spec.selector", "spec.serviceName", "spec.podManagementPolicy"),
    ("batch", "Job"): _field_immutable("spec.selector", "spec.completionMode"),
}
