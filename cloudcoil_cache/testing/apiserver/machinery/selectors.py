"""Label and field selector parsing and matching, with kube-apiserver's messages for bad input."""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Sequence

__all__ = ["SelectorError", "parse_label_selector", "parse_field_selector", "Matcher"]

Matcher = Callable[[Mapping[str, Any]], bool]

_NAME_RE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_PREFIX_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_REQ_RE = re.compile(
    r"^\s*(?:(?P<not>!)\s*(?P<nkey>[^\s!=<>(),]+)"
    r"|(?P<skey>[^\s!=<>(),]+)\s+(?P<op>in|notin)\s*\((?P<vals>[^()]*)\)"
    r"|(?P<ekey>[^\s!=<>(),]+)\s*(?P<eop>==|=|!=|>|<)\s*(?P<eval>[^\s!=<>(),]*)"
    r"|(?P<key>[^\s!=<>(),]+))\s*$"
)


class SelectorError(ValueError):
    """A selector string could not be parsed, or names an unsupported field."""


def _check_key(key: str, selector: str) -> None:
    prefix, slash, name = key.rpartition("/")
    ok = bool(_NAME_RE.match(name)) and len(name) <= 63
    if slash and (not prefix or len(prefix) > 253 or not _PREFIX_RE.match(prefix)):
        ok = False
    if not ok:
        raise SelectorError(
            f"unable to parse label selector {selector!r}: invalid label key {key!r}: "
            "name part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character"
        )


def _check_value(value: str, selector: str) -> None:
    if value and (len(value) > 63 or not _NAME_RE.match(value)):
        raise SelectorError(
            f"unable to parse label selector {selector!r}: invalid label value "
            f"{value!r}: a valid label must be an empty string or consist of "
            "alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character"
        )


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _requirement(text: str, selector: str) -> Matcher:
    m = _REQ_RE.match(text)
    if m is None:
        raise SelectorError(f"unable to parse label selector {selector!r}: cannot parse requirement {text.strip()!r}")
    if m.group("nkey"):
        key = m.group("nkey")
        _check_key(key, selector)
        return lambda labels: key not in labels
    if m.group("key"):
        key = m.group("key")
        _check_key(key, selector)
        return lambda labels: key in labels
    if m.group("skey"):
        key = m.group("skey")
        _check_key(key, selector)
        values = frozenset(v.strip() for v in m.group("vals").split(","))
        for value in values:
            _check_value(value, selector)
        if m.group("op") == "in":
            return lambda labels: key in labels and labels[key] in values
        return lambda labels: key not in labels or labels[key] not in values
    key, op, value = m.group("ekey"), m.group("eop"), m.group("eval")
    _check_key(key, selector)
    _check_value(value, selector)
    if op in ("=", "=="):
        return lambda labels: labels.get(key) == value
    if op == "!=":
        return lambda labels: labels.get(key) != value
    try:
        bound = int(value)
    except ValueError:
        raise SelectorError(
            f"unable to parse label selector {selector!r}: for 'gt', 'lt' operators, the value must be an integer"
        ) from None
    if op == ">":
        return lambda labels: _int_or_none(labels.get(key)) is not None and _int(labels, key) > bound
    return lambda labels: _int_or_none(labels.get(key)) is not None and _int(labels, key) < bound


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _int(labels: Mapping[str, Any], key: str) -> int:
    return int(labels[key])


def parse_label_selector(selector: str) -> Matcher | None:
    """Compile a label selector string; ``None`` means "matches everything".

    The returned callable takes an object's ``metadata.labels`` mapping.
    """
    if not selector.strip():
        return None
    reqs = [_requirement(part, selector) for part in _split_top_level(selector)]
    return lambda labels: all(req(labels) for req in reqs)


def _field_value(obj: Mapping[str, Any], path: str) -> str | list[str]:
    if path == "source":
        path = "source.component"
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, Mapping) else None
        if cur is None:  # the real server formats unset booleans with strconv.FormatBool
            return "false" if path in ("spec.hostNetwork", "spec.unschedulable") else ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    if isinstance(cur, list):  # status.podIPs: matches any of the addresses
        return [str(item.get("ip", "")) if isinstance(item, Mapping) else str(item) for item in cur]
    return str(cur)


def parse_field_selector(
    selector: str, allowed: Sequence[str], *, legacy_error: bool = False
) -> Callable[[Mapping[str, Any]], bool] | None:
    """Compile a field selector for a kind whose extra selectable fields are ``allowed``.

    ``legacy_error`` selects the message core types such as pods give for an unknown field
    (``field label not supported: x``) instead of the generic ``"x" is not a known field selector``.
    """
    if not selector.strip():
        return None
    fields = ("metadata.name", "metadata.namespace", *allowed)
    reqs: list[Callable[[Mapping[str, Any]], bool]] = []
    for part in selector.split(","):
        m = re.match(r"^\s*([^\s!=]+)\s*(==|=|!=)\s*([^\s]*)\s*$", part)
        if m is None:
            raise SelectorError(f"invalid selector: '{selector}'; can't understand '{part}'")
        path, op, value = m.groups()
        if path not in fields:
            if legacy_error:
                raise SelectorError(f"field label not supported: {path}")
            raise SelectorError(f'"{path}" is not a known field selector: only "metadata.name", "metadata.namespace"')
        reqs.append(_field_requirement(path, op != "!=", value))
    return lambda obj: all(req(obj) for req in reqs)


def _field_requirement(path: str, equal: bool, value: str) -> Callable[[Mapping[str, Any]], bool]:
    def match(obj: Mapping[str, Any]) -> bool:
        actual = _field_value(obj, path)
        hit = value in actual if isinstance(actual, list) else actual == value
        return hit == equal

    return match
