"""Live (and cache-routed) operations on one resource class: get, list, write, delete, watch."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterator, Mapping, TypeVar

from cloudcoil_cache import _json
from cloudcoil_cache._listwatch import (
    ListOptions,
    check_path_segment,
    collection_path,
    decode_event,
    list_params,
    object_path,
    watch_params,
)
from cloudcoil_cache.apimachinery import Status
from cloudcoil_cache.client._lists import ObjectList
from cloudcoil_cache.errors import ConfigError

if TYPE_CHECKING:
    from cloudcoil_cache.client._config import Config

__all__ = ["PATCH_TYPES", "LiveWatch", "ResourceClient"]

log = logging.getLogger(__name__)

T = TypeVar("T")

PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}


def _body(data: Any) -> bytes:
    if hasattr(data, "to_dict"):
        data = data.to_dict()
    return _json.dumps(data)


class ResourceClient(Generic[T]):
    """Operations on ``cls`` through one Config. Writes always go to the API server.

    With ``cached=True``, ``get`` and ``list`` are routed through the config's cache (served from
    memory when it can, per api.md "What the cache can serve"); with ``cached=False`` they are live.
    Thread-safe: it holds no state beyond the class and the config.
    """

    def __init__(self, cls: type[T], config: Config, *, cached: bool = False) -> None:
        for attr in ("api_version", "kind", "plural", "namespaced"):
            if getattr(cls, attr, None) is None:
                raise ConfigError(f"{cls!r} is not a resource class (no {attr})")
        # the kind's class, also when given a cached object's read-only class (type(cached_pod))
        self.cls: Any = getattr(cls, "__editable_class__", cls)
        self.config = config
        self.cached = cached

    def __repr__(self) -> str:
        return f"<ResourceClient {self.cls.kind} cached={self.cached}>"

    # ---------------------------------------------------------------- helpers
    def _namespace(self, namespace: str | None) -> str | None:
        if namespace is not None and not isinstance(namespace, str):
            raise TypeError(f"namespace must be a string, got {type(namespace).__name__}")
        if not self.cls.namespaced:
            return None
        namespace = namespace or self.config.namespace
        return None if namespace is None else check_path_segment(namespace, "namespace")

    def check_get(self, name: str) -> None:
        """Reject a bad name the same way whether the cache or the API would answer."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self.cls.kind}: a name is required (a non-empty string), got {name!r}")
        check_path_segment(name, f"{self.cls.kind} name")

    def check_list(self, limit: int | None) -> None:
        """Reject a bad limit the same way whether the cache or the API would answer."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise ValueError(f"limit must be an integer >= 0 (0: no limit), got {limit!r}")

    def _path(self, name: str, namespace: str | None, sub: str | None = None) -> str:
        return object_path(self.cls, name, self._namespace(namespace), sub)

    def _request(self, method: str, path: str, *, params: Mapping[str, str] | None = None,
                 body: bytes | None = None, content_type: str | None = None) -> Any:
        if method != "GET":
            cache = self.config.cache
            if cache is not None:
                cache.will_write(self.cls)
        return self.config.transport.request(method, path, params=params, body=body,
                                             content_type=content_type).json()

    def _to_obj(self, data: Any) -> Any:
        if isinstance(data, dict) and data.get("kind") == "Status" and self.cls.kind != "Status":
            return Status.from_dict(data)
        return self.cls.from_dict(data)

    # ------------------------------------------------------------------ reads
    def get(self, name: str, namespace: str | None = None) -> T:
        """The object ``name`` (``ResourceNotFound`` if it does not exist)."""
        if self.cached:
            from cloudcoil_cache.client._reads import cached_get
            found: T = cached_get(self, name, namespace)
            return found
        return self.live_get(name, namespace)

    def live_get(self, name: str, namespace: str | None = None) -> T:
        self.check_get(name)
        obj: T = self.cls.from_dict(self._request("GET", self._path(name, namespace)))
        return obj

    def list(self, namespace: str | None = None, all_namespaces: bool = False,
             label_selector: str | None = None, field_selector: str | None = None,
             limit: int | None = None, continue_: str | None = None) -> ObjectList[T]:
        """A list result: ``items``, ``metadata``; iterating it walks every page."""
        return self.list_with(ListOptions(namespace, all_namespaces, label_selector, field_selector,
                                          limit, continue_))

    def list_with(self, opts: ListOptions) -> ObjectList[T]:
        """``list()`` with its options as one ``ListOptions`` value."""
        if self.cached:
            from cloudcoil_cache.client._reads import cached_list
            return cached_list(self, opts)
        return self.live_list_with(opts)

    def live_list(self, namespace: str | None = None, all_namespaces: bool = False,
                  label_selector: str | None = None, field_selector: str | None = None,
                  limit: int | None = None, continue_: str | None = None) -> ObjectList[T]:
        return self.live_list_with(ListOptions(namespace, all_namespaces, label_selector, field_selector,
                                               limit, continue_))

    def live_list_with(self, opts: ListOptions) -> ObjectList[T]:
        """A LIST from the API server."""
        self.check_list(opts.limit)
        ns = None if opts.all_namespaces else self._namespace(opts.namespace)
        path = collection_path(self.cls, ns)
        params = list_params(label_selector=opts.label_selector, field_selector=opts.field_selector,
                             limit=opts.limit, continue_=opts.continue_)
        body = self._request("GET", path, params=params)
        items = [self.cls.from_dict(item) for item in body.get("items") or ()]
        next_page: Callable[[str], ObjectList[T]] | None = None
        if opts.limit:
            def next_page(token: str) -> ObjectList[T]:
                return self.live_list_with(opts.page(token))
        return ObjectList(self.cls, items, body.get("metadata") or {}, next_page,
                          kind=body.get("kind"), api_version=body.get("apiVersion"))

    def watch(self, namespace: str | None = None, all_namespaces: bool = False,
              label_selector: str | None = None, field_selector: str | None = None,
              resource_version: str | None = None, timeout_seconds: int | None = None,
              allow_bookmarks: bool = False,
              read_timeout: float | None = None) -> Iterator[tuple[str, T]]:
        """Yield ``(event_type, object)`` from one watch until the server ends it.

        ERROR events raise (a 410 as ``WatchExpired``); bookmarks are yielded with ``None``
        only when ``allow_bookmarks`` is set. For a resilient stream use an informer.
        """
        with self.open_watch(namespace, all_namespaces, label_selector, field_selector, resource_version,
                             timeout_seconds, allow_bookmarks, read_timeout) as events:
            yield from events

    def open_watch(self, namespace: str | None = None, all_namespaces: bool = False,
                   label_selector: str | None = None, field_selector: str | None = None,
                   resource_version: str | None = None, timeout_seconds: int | None = None,
                   allow_bookmarks: bool = False, read_timeout: float | None = None) -> LiveWatch[T]:
        """Open one watch: iterate it for ``(event_type, object)``; ``close()`` from any thread."""
        ns = None if all_namespaces else self._namespace(namespace)
        params = watch_params(label_selector=label_selector, field_selector=field_selector,
                              resource_version=resource_version, timeout_seconds=timeout_seconds,
                              allow_bookmarks=allow_bookmarks)
        stream = self.config.transport.stream(collection_path(self.cls, ns), params=params,
                                              read_timeout=read_timeout)
        return LiveWatch(stream, self.cls.from_dict)

    # ----------------------------------------------------------------- writes
    def create(self, obj: Any, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        """POST ``obj``; returns the server's object (with uid, resourceVersion, ...)."""
        namespace = self._namespace(obj.metadata.namespace if obj.metadata else None)
        params = _write_params(dry_run, field_manager)
        data = self._request("POST", collection_path(self.cls, namespace), params=params,
                             body=_body(obj), content_type="application/json")
        return self._written(self.cls.from_dict(data), dry_run)

    def update(self, obj: Any, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        """PUT ``obj`` (a stale resourceVersion raises ``ResourceConflict``)."""
        return self._put(obj, None, dry_run, field_manager)

    def update_status(self, obj: Any, *, dry_run: bool = False,
                      field_manager: str | None = None) -> T:
        """PUT ``obj`` to the ``status`` subresource."""
        return self._put(obj, "status", dry_run, field_manager)

    def _put(self, obj: Any, sub: str | None, dry_run: bool, field_manager: str | None) -> T:
        path = self._path(obj.metadata.name, obj.metadata.namespace, sub)
        data = self._request("PUT", path, params=_write_params(dry_run, field_manager),
                             body=_body(obj), content_type="application/json")
        return self._written(self.cls.from_dict(data), dry_run)

    def patch(self, name: str, patch: Any, *, namespace: str | None = None,
              patch_type: str = "merge", field_manager: str | None = None, force: bool = False,
              subresource: str | None = None, dry_run: bool = False) -> T:
        """PATCH with ``patch_type`` "merge", "json", "strategic" or "apply" (server-side apply)."""
        try:
            content_type = PATCH_TYPES[patch_type]
        except KeyError:
            raise ValueError(
                f"patch_type {patch_type!r}: expected one of {sorted(PATCH_TYPES)}") from None
        if patch_type == "apply" and not field_manager:
            raise ValueError("server-side apply needs a field_manager")
        params = _write_params(dry_run, field_manager)
        if force:
            params["force"] = "true"
        data = self._request("PATCH", self._path(name, namespace, subresource), params=params,
                             body=_body(patch), content_type=content_type)
        return self._written(self.cls.from_dict(data), dry_run)

    def apply(self, obj: Any, *, field_manager: str = "cloudcoil-cache", force: bool = False) -> T:
        """Server-side apply ``obj`` (a PATCH of type apply, recorded under ``field_manager``).

        ``metadata.managedFields`` is left out of the request (the API server refuses an applied
        configuration that sets it), so an object read from the server can be applied as is.
        """
        data = obj.to_dict()
        meta = data.get("metadata")
        if isinstance(meta, dict) and "managedFields" in meta:
            data["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
        return self.patch(obj.metadata.name, data, namespace=obj.metadata.namespace,
                          patch_type="apply", field_manager=field_manager, force=force)

    def delete(self, name: str, namespace: str | None = None, *,
               propagation_policy: str | None = None, grace_period_seconds: int | None = None,
               preconditions: Mapping[str, str] | None = None, dry_run: bool = False) -> Any:
        """DELETE ``name``; returns the object as the server returned it (or its Status).

        ``propagation_policy``: "Foreground", "Background" or "Orphan"; ``preconditions``:
        ``{"uid": ...}`` and/or ``{"resourceVersion": ...}`` (a mismatch raises
        ``ResourceConflict``).
        """
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation_policy:
            if propagation_policy not in ("Foreground", "Background", "Orphan"):
                raise ValueError(f"propagation_policy {propagation_policy!r}: expected Foreground, "
                                 "Background or Orphan")
            options["propagationPolicy"] = propagation_policy
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = int(grace_period_seconds)
        if preconditions:
            unknown = set(preconditions) - {"uid", "resourceVersion"}
            if unknown:
                raise ValueError(
                    f"preconditions: unknown keys {sorted(unknown)}; use uid, resourceVersion")
            options["preconditions"] = dict(preconditions)
        if dry_run:
            options["dryRun"] = ["All"]
        data = self._request("DELETE", self._path(name, namespace), body=_json.dumps(options),
                             content_type="application/json")
        result = self._to_obj(data)
        if not dry_run:
            self._note_delete(name, namespace, result)
        return result

    def scale(self, name: str, replicas: int, namespace: str | None = None) -> Any:
        """Set ``spec.replicas`` through the ``scale`` subresource; returns the updated object."""
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
            raise ValueError(f"replicas must be an integer >= 0, got {replicas!r}")
        self._request("PATCH", self._path(name, namespace, "scale"),
                      body=_json.dumps({"spec": {"replicas": replicas}}),
                      content_type=PATCH_TYPES["merge"])
        return self._written(self.live_get(name, namespace), False)

    # ------------------------------------------------------- read-your-writes
    def _written(self, obj: T, dry_run: bool) -> T:
        """Tell the config's cache about a write, so cached reads that follow it see it."""
        cache = self.config.cache
        if cache is not None and not dry_run:
            cache.note_write(self.cls, obj)
        return obj

    def _note_delete(self, name: str, namespace: str | None, result: Any) -> None:
        cache = self.config.cache
        if cache is None:
            return
        if isinstance(result, self.cls) and getattr(result, "metadata", None) is not None:
            # still there (finalizers, graceful deletion): its update or its deletion satisfies reads
            cache.note_write(self.cls, result, deleted=True)
        else:
            cache.note_delete(self.cls, self._namespace(namespace), name)


class LiveWatch(Generic[T]):
    """An open watch yielding ``(event_type, object)``; ``close()`` may be called from any thread
    (it unblocks a pending read, and the iteration then ends)."""

    def __init__(self, stream: Any, structure: Callable[[dict[str, Any]], T]) -> None:
        self._stream = stream
        self._structure = structure

    def __iter__(self) -> Iterator[tuple[str, T]]:
        for line in self._stream:
            event = decode_event(line, self._structure)
            yield event.type, event.object  # type: ignore[misc]

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> LiveWatch[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _write_params(dry_run: bool, field_manager: str | None) -> dict[str, str]:
    params: dict[str, str] = {}
    if dry_run:
        params["dryRun"] = "All"
    if field_manager:
        params["fieldManager"] = field_manager
    return params
