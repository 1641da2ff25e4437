"""API requests for a resource class: collection and object paths, LIST and WATCH query parameters."""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple
from urllib.parse import quote

import attrs

__all__ = [
    "DeleteOptions",
    "ListOptions",
    "WatchOptions",
    "check_path_segment",
    "collection_path",
    "group_version_prefix",
    "list_params",
    "object_path",
    "watch_params",
]


def group_version_prefix(cls: Any) -> str:
    """``/api/v1`` for the core group, ``/apis/{group}/{version}`` for named groups."""
    api_version: str = cls.api_version
    return f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"


def check_path_segment(value: str, what: str) -> str:
    """A name or namespace must be usable as one URL path segment (client-go's IsValidPathSegmentName)."""
    if value in (".", ".."):
        raise ValueError(f"{what} {value!r} may not be '.' or '..' (it is not a valid path segment)")
    for bad in ("/", "%"):
        if bad in value:
            raise ValueError(f"{what} {value!r} may not contain {bad!r} (it is not a valid path segment)")
    return value


def collection_path(cls: Any, namespace: str | None) -> str:
    """The LIST/WATCH path: all namespaces when ``namespace`` is None or the kind is cluster-scoped."""
    prefix = group_version_prefix(cls)
    if cls.namespaced and namespace:
        check_path_segment(namespace, "namespace")
        return f"{prefix}/namespaces/{quote(namespace, safe='')}/{cls.plural}"
    return f"{prefix}/{cls.plural}"


def object_path(cls: Any, name: str, namespace: str | None, subresource: str | None = None) -> str:
    """The path of one object (optionally of its ``status``/``scale`` subresource)."""
    if not name:
        raise ValueError(f"{cls.kind}: a name is required")
    if cls.namespaced and not namespace:
        raise ValueError(f"{cls.kind} is namespaced: a namespace is required for {name!r}")
    check_path_segment(name, f"{cls.kind} name")
    path = f"{collection_path(cls, namespace)}/{quote(name, safe='')}"
    return f"{path}/{subresource}" if subresource else path


def list_params(
    *,
    label_selector: str | None = None,
    field_selector: str | None = None,
    resource_version: str | None = None,
    limit: int | None = None,
    continue_: str | None = None,
) -> dict[str, str]:
    """LIST query parameters. A continued page carries no resourceVersion (kubernetes#85221)."""
    params: dict[str, str] = {}
    if label_selector:
        params["labelSelector"] = label_selector
    if field_selector:
        params["fieldSelector"] = field_selector
    if continue_:
        params["continue"] = continue_
    elif resource_version is not None:
        params["resourceVersion"] = resource_version
    if limit:
        params["limit"] = str(limit)
    return params


def watch_params(
    *,
    label_selector: str | None = None,
    field_selector: str | None = None,
    resource_version: str | None = None,
    timeout_seconds: int | None = None,
    allow_bookmarks: bool = False,
    send_initial_events: bool = False,
) -> dict[str, str]:
    """WATCH query parameters (``watch=1``; events strictly after ``resource_version``).

    ``send_initial_events``: a streaming list (KEP-3157): the state "not older than"
    ``resource_version`` (consistent when it is empty) first, as ADDED events ended by a bookmark
    annotated ``k8s.io/initial-events-end``, then the watch."""
    params = list_params(
        label_selector=label_selector, field_selector=field_selector, resource_version=resource_version
    )
    params["watch"] = "1"
    if timeout_seconds is not None:
        params["timeoutSeconds"] = str(int(timeout_seconds))
    if allow_bookmarks or send_initial_events:
        params["allowWatchBookmarks"] = "true"
    if send_initial_events:
        params["sendInitialEvents"] = "true"
        params["resourceVersionMatch"] = "NotOlderThan"
    return params


class ListOptions(NamedTuple):
    """The options of one list read: scope, selectors and page (one value instead of six arguments).

    A named tuple: made on every cached list (``Pod.list``), it costs half an attrs class's construction.
    """

    namespace: str | None = None
    all_namespaces: bool = False
    label_selector: str | None = None
    field_selector: str | None = None
    limit: int | None = None
    continue_: str | None = None
    #: ``(index name, value)``: the objects the cache's index of that name files under ``value``
    #: (a cached read only: the API server has no index); the last field, so positional callers keep
    #: working. It shadows ``tuple.index`` (a named tuple's field may: nothing here searches the tuple).
    index: tuple[str, str] | None = None  # type: ignore[assignment]

    def page(self, continue_: str | None) -> ListOptions:
        """The same list, at another page."""
        return self._replace(continue_=continue_)


@attrs.frozen
class WatchOptions:
    """The options of a resilient watch (``Api.watch``): scope, selectors, where it starts and how each
    request is bounded (one value instead of eight arguments)."""

    namespace: str | None = None
    all_namespaces: bool = False
    label_selector: str | None = None
    field_selector: str | None = None
    resource_version: str | None = None
    #: per request, server side (None: the server's default)
    timeout_seconds: int | None = None
    #: ``BOOKMARK`` events are yielded (cloudcoil does)
    allow_bookmarks: bool = True
    #: a quiet stream is re-opened after this many seconds (None: the transport's)
    read_timeout: float | None = None


@attrs.frozen
class DeleteOptions:
    """The options of a DELETE (``Api.delete``): ``propagation_policy`` "Foreground", "Background" or
    "Orphan" (any case), ``preconditions`` ``{"uid": ...}`` and/or ``{"resourceVersion": ...}``."""

    propagation_policy: str | None = None
    grace_period_seconds: int | None = None
    preconditions: Mapping[str, str] | None = None
    dry_run: bool = False
