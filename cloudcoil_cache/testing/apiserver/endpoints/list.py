"""LIST for the fake server: option validation, resourceVersion rules, selectors and pagination."""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import time
from typing import Any, Callable, Mapping

from ..machinery import status as _status
from ..machinery.resources import ResourceType
from ..machinery.selectors import SelectorError, parse_field_selector, parse_label_selector
from ..storage.store import Snapshot
from .context import ServerContext
from .partial import partial_list_kind, partial_object

__all__ = ["Filters", "parse_filters", "parse_rv", "list_body", "wait_not_too_large"]

_CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list."
)


class Filters:
    """Namespace, label and field filters of one LIST or WATCH request."""

    def __init__(
        self,
        namespace: str | None,
        label_match: Callable[[Mapping[str, Any]], bool] | None,
        field_match: Callable[[Mapping[str, Any]], bool] | None,
    ) -> None:
        self.namespace = namespace
        self.label_match = label_match
        self.field_match = field_match

    @property
    def selective(self) -> bool:
        return self.label_match is not None or self.field_match is not None

    def matches(self, obj: Mapping[str, Any]) -> bool:
        if self.label_match is not None:
            if not self.label_match((obj.get("metadata") or {}).get("labels") or {}):
                return False
        return self.field_match is None or self.field_match(obj)


def parse_filters(
    rtype: ResourceType, namespace: str | None, query: Mapping[str, str], name: str | None = None
) -> Filters:
    """Selectors from the query (400 BadRequest on bad syntax or an unknown field)."""
    try:
        label_match = parse_label_selector(query.get("labelSelector", ""))
        fields = query.get("fieldSelector", "")
        if name is not None:
            fields = f"metadata.name={name}" + (f",{fields}" if fields else "")
        field_match = parse_field_selector(fields, rtype.field_selectors, legacy_error=rtype.legacy_field_error)
    except SelectorError as exc:
        raise _status.bad_request(str(exc)) from None
    return Filters(namespace, label_match, field_match)


def parse_rv(value: str) -> int:
    try:
        rv = int(value)
    except ValueError:
        rv = -1
    if rv < 0:
        raise _status.bad_request(f'invalid resource version "{value}": must be a non-negative decimal integer')
    return rv


def wait_not_too_large(ctx: ServerContext, rv: int) -> None:
    """Like the watch cache: wait briefly for revision ``rv``, then answer 504 (too large)."""
    store = ctx.store
    if rv > store.revision and not store.wait_for_revision(rv, ctx.settings.too_large_wait, ctx.stopping):
        raise _status.too_large_rv(rv, store.revision)


def _encode_continue(rv: int, start: str, issued: float) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start, "t": issued})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, str, float]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        return int(data["rv"]), str(data["start"]), float(data.get("t", time.monotonic()))
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise _status.bad_request(f"continue key is not valid: {token!r}") from None


def _validate(query: Mapping[str, str]) -> None:
    rv, rvm, cont = (
        query.get("resourceVersion", ""),
        query.get("resourceVersionMatch", ""),
        query.get("continue", ""),
    )
    if "sendInitialEvents" in query:
        raise _status.invalid_options("sendInitialEvents", "sendInitialEvents is forbidden for list")
    if rvm:
        if rvm not in ("Exact", "NotOlderThan"):
            raise _status.invalid_options(
                "resourceVersionMatch",
                f'"{rvm}": supported values: "Exact", "NotOlderThan", ""',
                cause_reason="FieldValueNotSupported",
                prefix="Unsupported value",
            )
        if cont:
            raise _status.invalid_options(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            )
        if not rv:
            raise _status.invalid_options(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            )
        if rvm == "Exact" and rv == "0":
            raise _status.invalid_options(
                "resourceVersionMatch",
                'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
            )
    if cont and rv not in ("", "0"):
        raise _status.bad_request("specifying resource version is not allowed when using continue")


def _parse_limit(query: Mapping[str, str]) -> int:
    text = query.get("limit", "")
    if not text:
        return 0
    try:
        limit = int(text)
    except ValueError:
        raise _status.bad_request(f'invalid limit "{text}": must be an integer') from None
    return max(limit, 0)


def _choose_snapshot(
    ctx: ServerContext, rtype: ResourceType, query: Mapping[str, str], limit: int
) -> tuple[Snapshot, str, float, int]:
    """The snapshot to serve, the key to start at, the token issue time and the (adjusted) limit."""
    store = ctx.store
    cont = query.get("continue", "")
    now = time.monotonic()
    if cont:
        rv, start, issued = _decode_continue(cont)
        ttl = ctx.settings.continue_ttl
        too_old = rv >= 0 and (rv < store.compacted or (ttl is not None and now - issued > ttl))
        if too_old:
            fresh = _encode_continue(-1, start, now)
            raise _status.expired(_CONTINUE_EXPIRED, continue_token=fresh)
        return store.snapshot(rtype, None if rv < 0 else rv), start, issued, limit
    rv_text, rvm = query.get("resourceVersion", ""), query.get("resourceVersionMatch", "")
    if rv_text == "":
        return store.snapshot(rtype, None), "", now, limit
    if rv_text == "0":
        return store.snapshot(rtype, None), "", now, 0 if ctx.settings.ignore_limit_for_rv0 else limit
    rv = parse_rv(rv_text)
    wait_not_too_large(ctx, rv)
    exact = rvm == "Exact" or (not rvm and limit > 0)
    return store.snapshot(rtype, rv if exact else None), "", now, limit


def _bounds(snap: Snapshot, namespace: str | None, start: str) -> tuple[int, int]:
    lo, hi = 0, len(snap.keys)
    if namespace is not None:
        prefix = namespace + "/"
        lo = bisect.bisect_left(snap.keys, prefix)
        hi = bisect.bisect_left(snap.keys, namespace + "0")  # "0" sorts right after "/"
    if start:
        lo = max(lo, bisect.bisect_left(snap.keys, start))
    return lo, hi


def list_body(
    ctx: ServerContext,
    rtype: ResourceType,
    namespace: str | None,
    query: Mapping[str, str],
    partial: str | None = None,
) -> bytes:
    """The serialized ``<Kind>List`` for a LIST request (raises ``StatusError``); with ``partial`` (a
    meta.k8s.io version), a ``PartialObjectMetadataList``."""
    _validate(query)
    limit = _parse_limit(query)
    filters = parse_filters(rtype, namespace, query)
    snap, start, issued, limit = _choose_snapshot(ctx, rtype, query, limit)
    lo, hi = _bounds(snap, namespace, start)
    with_kind = ctx.settings.list_items_have_kind or not rtype.builtin
    items: list[bytes] = []
    idx = lo
    entries = snap.entries
    while idx < hi and (limit == 0 or len(items) < limit):
        entry = entries[idx]
        idx += 1
        if filters.selective and not filters.matches(entry.obj):
            continue
        if partial == "v1":
            items.append(entry.partial())
        elif partial is not None:
            items.append(json.dumps(partial_object(entry.obj, partial), separators=(",", ":")).encode())
        else:
            items.append(entry.full() if with_kind else entry.bare())
    meta: dict[str, Any] = {"resourceVersion": str(snap.rv)}
    if limit and idx < hi:
        more = True
        if filters.selective:
            more = any(filters.matches(entries[i].obj) for i in range(idx, hi))
        if more:
            meta["continue"] = _encode_continue(snap.rv, snap.keys[idx - 1] + "\x00", issued)
            if not filters.selective:
                meta["remainingItemCount"] = hi - idx
    kind, api_version = (f"{rtype.kind}List", rtype.api_version) if partial is None else partial_list_kind(partial)
    head = json.dumps(
        {"kind": kind, "apiVersion": api_version, "metadata": meta},
        separators=(",", ":"),
    ).encode()
    return head[:-1] + b',"items":[' + b",".join(items) + b"]}"
