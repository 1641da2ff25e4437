"""Kubernetes label and field selectors: parsing (full syntax) and in-memory matching."""

from __future__ import annotations

import re
from typing import Any, Mapping

import attrs

from cloudcoil_cache.errors import BadRequest, InvalidSelector

__all__ = [
    "SELECTABLE_FIELDS",
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "check_field_selector",
    "parse_field_selector",
    "parse_label_selector",
    "undecided_field_paths",
]

_KEY = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")


@attrs.frozen
class Requirement:
    """One clause of a label selector: ``key op values``."""

    key: str
    op: str  # "in" (also = and ==), "notin" (also !=), "exists", "!", "gt", "lt"
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        if self.op == "in":
            return present and labels[self.key] in self.values
        if self.op == "notin":
            return not present or labels[self.key] not in self.values
        if not present:
            return False
        try:
            have, want = int(labels[self.key]), int(next(iter(self.values)))
        except ValueError:
            return False
        return have > want if self.op == "gt" else have < want


@attrs.frozen
class LabelSelector:
    """A parsed label selector; ``matches(labels)`` is AND over its requirements."""

    text: str
    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _check_key(key: str, text: str) -> str:
    if not _KEY.match(key) or len(key.rpartition("/")[2]) > 63:
        raise InvalidSelector(f"invalid label selector {text!r}: invalid label key {key!r}")
    return key


def _check_value(value: str, text: str) -> str:
    if len(value) > 63 or not _VALUE.match(value):
        raise InvalidSelector(f"invalid label selector {text!r}: invalid label value {value!r}")
    return value


_SET_RE = re.compile(r"^(?P<key>\S+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")
_EQ_RE = re.compile(r"^(?P<key>[^=!<>\s]+)\s*(?P<op>==|=|!=|>|<)\s*(?P<value>[^=!<>\s]*)$")


def _parse_requirement(part: str, text: str) -> Requirement:
    part = part.strip()
    if not part:
        raise InvalidSelector(f"invalid label selector {text!r}: empty requirement")
    m = _SET_RE.match(part)
    if m:
        # "()" is the set {""} to apimachinery's parser (parseValues), and "(a,)" is {"a", ""}:
        # "env in ()" matches env="", "env notin ()" every object without env=""
        values = [v.strip() for v in m.group("values").split(",")]
        return Requirement(
            _check_key(m.group("key"), text), m.group("op"), frozenset(_check_value(v, text) for v in values)
        )
    m = _EQ_RE.match(part)
    if m:
        key, op, value = _check_key(m.group("key"), text), m.group("op"), m.group("value")
        if op in (">", "<"):
            if not value.isdigit():  # the value must also be a valid label value: no sign (as the server)
                raise InvalidSelector(
                    f"invalid label selector {text!r}: {op} needs a non-negative integer, got {value!r}"
                )
            return Requirement(key, "gt" if op == ">" else "lt", frozenset([value]))
        return Requirement(key, "notin" if op == "!=" else "in", frozenset([_check_value(value, text)]))
    if part.startswith("!"):
        return Requirement(_check_key(part[1:].strip(), text), "!")
    if re.match(r"^\S+$", part):
        return Requirement(_check_key(part, text), "exists")
    raise InvalidSelector(f"invalid label selector {text!r}: cannot parse {part!r}")


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse ``app=web,tier in (a,b),!legacy``; raises ``InvalidSelector`` (a 400 BadRequest and a
    ``ValueError``) naming the selector."""
    text = (text or "").strip()
    if not text:
        return LabelSelector("", ())
    return LabelSelector(text, tuple(_parse_requirement(p, text) for p in _split_top_level(text)))


def _camel_to_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


#: Boolean fields the API server formats with strconv.FormatBool, so "unset" reads as "false".
_BOOL_FIELDS = frozenset({"spec.hostNetwork", "spec.unschedulable"})
#: Field-selector aliases of the API server (Event's ``source`` is ``source.component``).
_ALIASES = {"source": "source.component"}


def _field_value(obj: Any, path: str) -> str | list[str]:
    """Read a dotted wire-form field path (``spec.nodeName``) from a model object or a dict.

    As on the API server: an unset field is "", an unset boolean field "false", and a list
    (``status.podIPs``) is every value in it (a selector matches any of them).
    """
    current = obj
    for segment in _ALIASES.get(path, path).split("."):
        if current is None:
            break
        if isinstance(current, Mapping):
            current = current.get(segment)
            continue
        attr = _camel_to_snake(segment)
        if hasattr(current, attr):
            current = getattr(current, attr)
        else:
            extra = getattr(current, "_extra", None) or {}
            current = extra.get(segment)
    if current is None:
        return "false" if path in _BOOL_FIELDS else ""
    if isinstance(current, bool):
        return "true" if current else "false"
    if isinstance(current, list):
        return [str(item.get("ip", "") if isinstance(item, Mapping) else getattr(item, "ip", item)) for item in current]
    return str(current)


@attrs.frozen
class FieldSelector:
    """A parsed field selector: ``(path, op, value)`` triples, AND-ed; ops ``=`` and ``!=``."""

    text: str
    terms: tuple[tuple[str, str, str], ...]

    def matches(self, obj: Any) -> bool:
        for path, op, value in self.terms:
            have = _field_value(obj, path)
            equal = value in have if isinstance(have, list) else have == value
            if equal != (op == "="):
                return False
        return True

    @property
    def empty(self) -> bool:
        return not self.terms

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(p for p, _, _ in self.terms)


def parse_field_selector(text: str | None) -> FieldSelector:
    """Parse ``metadata.name=x,status.phase!=Running``; raises ``InvalidSelector`` naming the selector."""
    text = (text or "").strip()
    if not text:
        return FieldSelector("", ())
    terms = []
    for part in text.split(","):
        m = re.match(r"^\s*([A-Za-z0-9_.\-/]+)\s*(==|=|!=)\s*(.*?)\s*$", part)
        if not m:
            raise InvalidSelector(f"invalid field selector {text!r}: cannot parse {part.strip()!r}")
        path, op, value = m.groups()
        terms.append((path, "!=" if op == "!=" else "=", value))
    return FieldSelector(text, tuple(terms))


#: Fields each built-in kind can be selected on besides metadata.name and metadata.namespace
#: (kube-apiserver's per-kind field sets; docs/protocol.md §1.8). Custom resources: none.
SELECTABLE_FIELDS: dict[tuple[str, str], frozenset[str]] = {
    ("v1", "Pod"): frozenset(
        {
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        }
    ),
    ("v1", "Node"): frozenset({"spec.unschedulable"}),
    ("v1", "Namespace"): frozenset({"status.phase"}),
    ("v1", "Secret"): frozenset({"type"}),
    ("v1", "ReplicationController"): frozenset({"status.replicas"}),
    ("apps/v1", "ReplicaSet"): frozenset({"status.replicas"}),
    ("batch/v1", "Job"): frozenset({"status.successful"}),
    ("v1", "Event"): frozenset(
        {
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        }
    ),
    ("certificates.k8s.io/v1", "CertificateSigningRequest"): frozenset({"spec.signerName"}),
}
_ALWAYS = ("metadata.name", "metadata.namespace")
#: Kinds whose API server answers an unknown field with the legacy message.
_LEGACY_MESSAGE = frozenset(
    {
        ("v1", "Pod"),
        ("v1", "Node"),
        ("v1", "Namespace"),
        ("v1", "Secret"),
        ("v1", "ReplicationController"),
        ("v1", "Event"),
    }
)


def _built_in(cls: Any) -> bool:
    """A kind of kube-apiserver itself (a generated model), whose selectable fields are known here."""
    return (cls.api_version, cls.kind) in SELECTABLE_FIELDS or str(getattr(cls, "__module__", "")).startswith(
        "cloudcoil_cache.models.kubernetes."
    )


def undecided_field_paths(cls: Any, text: str | None) -> list[str]:
    """Paths of a field selector on a custom resource that only its CRD can allow (``selectableFields``,
    Kubernetes 1.30+): the library does not know whether the API server accepts them, so the cache
    cannot answer them; empty for built-in kinds, which ``check_field_selector`` checks."""
    if _built_in(cls):
        return []
    return [path for path in sorted(parse_field_selector(text).paths) if path not in _ALWAYS]


def check_field_selector(cls: Any, text: str | None) -> None:
    """Raise the API server's 400 for a field a built-in ``cls`` cannot be selected on (never answer
    ``[]``). A custom resource's other fields are left to the API server (``undecided_field_paths``)."""
    selector = parse_field_selector(text)
    if not _built_in(cls):
        return
    gvk = (cls.api_version, cls.kind)
    allowed = SELECTABLE_FIELDS.get(gvk, frozenset())
    for path in sorted(selector.paths):
        if path in _ALWAYS or path in allowed:
            continue
        if gvk in _LEGACY_MESSAGE:
            message = f"field label not supported: {path}"
        else:
            known = ", ".join(f'"{f}"' for f in (*_ALWAYS, *sorted(allowed)))
            message = f'"{path}" is not a known field selector: only {known}'
        raise BadRequest(message, reason="BadRequest")
