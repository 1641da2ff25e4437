"""Live (and cache-routed) operations on one resource class: get, list, write, delete, watch."""

from __future__ import annotations

import builtins
import logging
import threading
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterator, Mapping, TypeVar

from cloudcoil_cache import _json
from cloudcoil_cache._listwatch import (
    DeleteOptions,
    ListOptions,
    ListWatch,
    WatchOptions,
    check_path_segment,
    collection_path,
    decode_event,
    list_params,
    object_path,
    watch_params,
)
from cloudcoil_cache._runnable import RunnableThread
from cloudcoil_cache.apimachinery import Status
from cloudcoil_cache.caching._reader import Covered
from cloudcoil_cache.client._api_config import ApiConfig
from cloudcoil_cache.client._discovery import bind_dynamic
from cloudcoil_cache.client._lists import ObjectList
from cloudcoil_cache.client._reads import cached_get, cached_list, plain_segment, whole_hit
from cloudcoil_cache.client._wait import WaitPredicate, check_wait, wait_timeout_message
from cloudcoil_cache.client._watch import Watch
from cloudcoil_cache.errors import ConfigError, DecodeError, WaitTimeout

if TYPE_CHECKING:
    from cloudcoil_cache.caching import Cache, CacheReader

__all__ = ["PATCH_TYPES", "Api", "LiveWatch", "ResourceClient", "Watch"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Page size of the LIST that finds the namespaces ``delete_all(all_namespaces=True)`` visits.
_NAMESPACE_PAGE = 500

PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}


def _body(data: Any, labels: Mapping[str, str] | None = None) -> bytes:
    if hasattr(data, "to_dict"):
        data = data.to_dict()
    if labels and isinstance(data, dict):  # (a copy: the caller's object is left as it is)
        meta = dict(data.get("metadata") or {})
        meta["labels"] = {**labels, **(meta.get("labels") or {})}
        data = {**data, "metadata": meta}
    return _json.dumps(data)


class Api(Generic[T]):
    """Operations on ``cls`` through one Config. Writes always go to the API server.

    With ``cached=True``, ``get`` and ``list`` are routed through the config's cache (served from
    memory when it can, per docs/contract.md "What the cache can serve"); with ``cached=False`` they are live.
    Thread-safe: beyond the class and the config it only memoizes, idempotently, the cache's reader of
    the kind and the config's default namespace (each fixed once known).
    """

    def __init__(self, cls: type[T], config: ApiConfig, *, cached: bool = False) -> None:
        # the kind's class, also when given a cached object's read-only class (type(cached_pod))
        kind_cls: Any = getattr(cls, "__editable_class__", cls)
        if not _bound_resource_class(cls):  # on every Pod.get's path: the common case in one test
            attrs = ("api_version", "kind") if _unbound(kind_cls) else ("api_version", "kind", "plural", "namespaced")
            for attr in attrs:
                if getattr(cls, attr, None) is None:
                    raise ConfigError(
                        f"{getattr(cls, '__name__', cls)!r} is not a resource class of one kind (no {attr}): use "
                        "the class of a kind (Pod), get_dynamic_resource(kind, api_version) or a GenericResource"
                    )
        self._cls = kind_cls
        #: The resource class as it is now (``cls`` without binding a dynamic one first).
        self.kind_class: Any = kind_cls
        self.config = config
        self.cached = cached
        #: The cache its reads go through (``config.cache`` for a cached client, else None).
        self.read_cache: Cache | None = config.cache if cached else None
        self._config_namespace: str | None = None  # the config's default namespace, once read
        self._reader: CacheReader[T] | None = None  # the cache's reader of the kind, once it has one
        self._plain_namespace: str | None = None  # the last namespace ``list_hit`` found plain
        self._served_list: tuple[Any, str, str] | None = None  # the class, kind and apiVersion of its lists

    def _config_default_namespace(self) -> str:
        """The config's default namespace (read once: it is fixed once the config is discovered)."""
        self._config_namespace = namespace = self.config.namespace
        return namespace

    @property
    def cls(self) -> Any:
        """The resource class; a dynamic one (no plural yet) is bound from discovery first (one GET)."""
        cls = self._cls
        if getattr(cls, "plural", None) is None and _unbound(cls):
            self.bind()
        return cls

    @property
    def needs_binding(self) -> bool:
        """True while the class still lacks the plural and scope discovery gives (``bind()``)."""
        return _unbound(self._cls)

    def bind(self) -> None:
        """Fill in a dynamic class's plural and scope from discovery (blocking I/O: off the event loop).

        ``get_dynamic_resource()`` classes and a user's class without a plural are bound on first use,
        once (a class bound stays bound). Raises ``ConfigError`` when the server serves no such kind.
        """
        if _unbound(self._cls):
            bind_dynamic(self._cls, self.config)

    def __repr__(self) -> str:
        return f"<Api {self._cls.kind} cached={self.cached}>"

    @property
    def subresources(self) -> frozenset[str]:
        """The subresources discovery lists for the kind (known for ``get_dynamic_resource`` classes)."""
        return frozenset(getattr(self.cls, "subresources", None) or ())

    # ---------------------------------------------------------------- helpers
    def _namespace(self, namespace: str | None) -> str | None:
        if namespace is not None and not isinstance(namespace, str):
            raise TypeError(f"namespace must be a string, got {type(namespace).__name__}")
        if not self.cls.namespaced:
            return None
        namespace = namespace or self.config.namespace
        if namespace is None or plain_segment(namespace):
            return namespace
        return check_path_segment(namespace, "namespace")

    def check_get(self, name: str) -> None:
        """Reject a bad name the same way whether the cache or the API would answer."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self.cls.kind}: a name is required (a non-empty string), got {name!r}")
        if not plain_segment(name):  # the message names the kind (bound or not: it has its kind)
            check_path_segment(name, f"{self._cls.kind} name")

    def check_list(self, limit: int | None) -> None:
        """Reject a bad limit the same way whether the cache or the API would answer."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise ValueError(f"limit must be an integer >= 0 (0: no limit), got {limit!r}")

    def _path(self, name: str, namespace: str | None, sub: str | None = None) -> str:
        return object_path(self.cls, name, self._namespace(namespace), sub)

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
    ) -> Any:
        if method != "GET":
            cache = self.config.cache
            if cache is not None:
                cache.will_write(self.cls)
        return self.config.transport.request(method, path, params=params, body=body, content_type=content_type).json()

    def _to_obj(self, data: Any) -> T | Status:
        if isinstance(data, dict) and data.get("kind") == "Status" and self.cls.kind != "Status":
            return Status.from_dict(data)
        obj: T = self.cls.from_dict(data)
        return obj

    # ------------------------------------------------------------------ reads
    def get(self, name: str, namespace: str | None = None) -> T:
        """The object ``name`` (``ResourceNotFound`` if it does not exist)."""
        if self.cached:
            reader = self._reader
            if reader is None:  # the cache binds one reader per kind, for good, once the kind has an informer
                cache = self.read_cache
                reader = self._reader = None if cache is None else cache.readers.get(self.kind_class)
            if reader is not None:  # its hit path, with the arguments as given: on every cached get's path
                found: T | None = reader.hit(
                    name,
                    namespace
                    if namespace is not None or not reader.namespaced
                    else self._config_namespace or self._config_default_namespace(),
                )
                if found is not None:
                    return found
            self.check_get(name)
            read: T = cached_get(self.read_cache, self.cls, name, self._namespace(namespace), self.live_get)
            return read
        return self.live_get(name, namespace)

    def live_get(self, name: str, namespace: str | None = None) -> T:
        self.check_get(name)
        obj: T = self.cls.from_dict(self._request("GET", self._path(name, namespace)))
        return obj

    def list(
        self,
        namespace: str | None = None,
        all_namespaces: bool = False,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        index: tuple[str, str] | None = None,
    ) -> ObjectList[T]:
        """A list result: ``items``, ``metadata``; iterating it walks every page. ``index=(name,
        value)``: the objects the cache's index ``name`` files under ``value`` (a cached client only)."""
        if label_selector is None and field_selector is None and limit is None and continue_ is None:
            hit = self.list_hit(namespace, all_namespaces, index)
            if hit is not None:
                return hit
        return self.list_with(
            ListOptions(namespace, all_namespaces, label_selector, field_selector, limit, continue_, index)
        )

    def list_hit(
        self, namespace: str | None, all_namespaces: bool, index: tuple[str, str] | None
    ) -> ObjectList[T] | None:
        """A list without selectors, page size or continue token (``index``: by the cache's index of
        that name) that the cache's reader serves at once, else None: then ``list_with`` answers (the
        read policy, and every check and error). On every cached list's path (``Pod.list``), so the
        namespace default and checks of ``cached_list`` are written out: anything unusual is left to it."""
        reader = self._reader
        if reader is None:
            reader = self._bind_reader()
            if reader is None:
                return None
        if all_namespaces or not reader.namespaced:
            namespace = None
        else:
            if namespace is None:
                namespace = self._config_namespace or self._config_default_namespace()
            if namespace is not self._plain_namespace:  # the last one found plain: not checked again
                if (
                    namespace.__class__ is not str
                    or not namespace
                    or "/" in namespace
                    or "%" in namespace
                    or namespace == "."
                    or namespace == ".."
                ):
                    return None
                self._plain_namespace = namespace
        if index is None:
            hit = reader.hit_list(namespace)
        elif index.__class__ is tuple and len(index) == 2:
            name, value = index
            if name.__class__ is not str or not name or value.__class__ is not str:
                return None
            hit = reader.hit_index(namespace, name, value)
        else:
            return None
        return None if hit is None else self._served(hit)

    def _served(self, hit: tuple[builtins.list[T], str]) -> ObjectList[T]:
        """A reader's hit as the list ``list_hit`` answers (a set's merged hit says what it covers)."""
        if hit[0].__class__ is Covered:
            return whole_hit(self.kind_class, hit)
        served = self._served_list
        if served is None:
            cls = self.kind_class
            served = self._served_list = (cls, f"{cls.kind}List", cls.api_version)
        return ObjectList.served(served, hit[0], hit[1])

    def _bind_reader(self) -> CacheReader[T] | None:
        """The cache's reader of the kind, kept: the cache binds one per kind, for good, once the kind
        has an informer (None: no cache, or no informer yet)."""
        cache = self.read_cache
        reader = self._reader = None if cache is None else cache.readers.get(self.kind_class)
        return reader

    def list_with(self, opts: ListOptions) -> ObjectList[T]:
        """``list()`` with its options as one ``ListOptions`` value."""
        if self.cached:
            if opts.limit is not None:
                self.check_list(opts.limit)
            return cached_list(self.read_cache, self.cls, opts, self._namespace, self.live_list_with)
        if opts.index is not None:
            return cached_list(None, self.cls, opts, self._namespace, self.live_list_with)  # raises, naming it
        return self.live_list_with(opts)

    def live_list(
        self,
        namespace: str | None = None,
        all_namespaces: bool = False,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> ObjectList[T]:
        return self.live_list_with(
            ListOptions(namespace, all_namespaces, label_selector, field_selector, limit, continue_)
        )

    def live_list_with(self, opts: ListOptions) -> ObjectList[T]:
        """A LIST from the API server."""
        self.check_list(opts.limit)
        ns = None if opts.all_namespaces else self._namespace(opts.namespace)
        path = collection_path(self.cls, ns)
        params = list_params(
            label_selector=opts.label_selector,
            field_selector=opts.field_selector,
            limit=opts.limit,
            continue_=opts.continue_,
        )
        body = self._request("GET", path, params=params)
        items = [self.cls.from_dict(item) for item in body.get("items") or ()]
        next_page: Callable[[str], ObjectList[T]] | None = None
        if opts.limit:

            def next_page(token: str) -> ObjectList[T]:
                return self.live_list_with(opts.page(token))

        return ObjectList(
            self.cls,
            items,
            body.get("metadata") or {},
            next_page,
            kind=body.get("kind"),
            api_version=body.get("apiVersion"),
        )

    def watch(
        self,
        namespace: str | None = None,
        all_namespaces: bool = False,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        _stop_event: threading.Event | None = None,
        allow_bookmarks: bool = True,
        read_timeout: float | None = None,
        _raise_on_expired: bool = False,
    ) -> Watch[T]:
        """Yield ``(event_type, object)`` until the caller stops (cloudcoil's resilient watch).

        Everything after ``all_namespaces`` is keyword-only (``Kind.watch()`` keeps cloudcoil's
        positional order, field selector first; ``open_watch`` and ``list`` put the label selector
        first: keywords bind the same in all of them). Each request lasts at most
        ``timeout_seconds`` (server side, default 300) or until the stream is quiet for
        ``read_timeout`` (default: the transport's); the watch is then re-opened from the last
        resourceVersion, at once when the request lasted 0.5 s or delivered an event, else after a
        backoff (so a tiny ``read_timeout`` cannot spin). A 410 restarts it from the current state
        (``ADDED`` for every object), or raises ``WatchExpired`` with ``_raise_on_expired``. It
        ends on ``close()`` (any thread) or when ``_stop_event`` is set (also while waiting to
        reconnect). See ``Watch``; ``open_watch`` is the single request.
        """
        opts = WatchOptions(
            namespace,
            all_namespaces,
            label_selector,
            field_selector,
            resource_version,
            timeout_seconds,
            allow_bookmarks,
            read_timeout,
        )
        return self.watch_with(opts, _stop_event=_stop_event, _raise_on_expired=_raise_on_expired)

    def watch_with(
        self,
        opts: WatchOptions,
        *,
        _stop_event: threading.Event | None = None,
        _raise_on_expired: bool = False,
    ) -> Watch[T]:
        """``watch()`` with its options as one ``WatchOptions`` value."""
        ns = None if opts.all_namespaces else self._namespace(opts.namespace)
        source: ListWatch[T] = ListWatch(
            self.config.transport,
            self.cls,
            namespace=ns,
            label_selector=opts.label_selector or "",
            field_selector=opts.field_selector or "",
            structure=self.cls.from_dict,
        )
        return Watch(
            source,
            self.cls,
            resource_version=opts.resource_version,
            timeout_seconds=opts.timeout_seconds,
            read_timeout=opts.read_timeout,
            allow_bookmarks=opts.allow_bookmarks,
            stop_event=_stop_event,
            raise_on_expired=_raise_on_expired,
        )

    def wait_for(self, obj: T, predicates: Mapping[str, WaitPredicate], timeout: float | None = None) -> str:
        """Watch ``obj`` until a predicate returns true; returns its name (cloudcoil's ``wait_for``).

        Raises:
            WaitTimeout: no predicate matched within ``timeout`` seconds.
        """
        return self.wait_for_match(obj, predicates, timeout)[0]

    def wait_for_match(
        self, obj: T, predicates: Mapping[str, WaitPredicate], timeout: float | None = None
    ) -> tuple[str, T]:
        """``wait_for`` returning the matching predicate's name and the object it matched.

        Every change of ``obj`` after its resourceVersion (or, without one, its current state)
        is passed to each predicate as ``predicate(event_type, obj)``, in order; the first that
        returns a true value wins. ``DELETED`` events are passed too; bookmarks are not.
        """
        name, namespace, rv = check_wait(self.cls, obj, predicates, timeout)
        watch = self.watch(
            namespace=namespace, field_selector=f"metadata.name={name}", resource_version=rv, allow_bookmarks=False
        )
        timer: RunnableThread | None = None
        if timeout is not None:
            stopping = threading.Event()
            label = f"cloudcoil-wait-for-{self.cls.kind}"
            timer = RunnableThread(label, _close_after, timeout, watch, stopping, owner="wait_for", stopping=stopping)
            timer.start()
        try:
            for event_type, found in watch:
                for key, predicate in predicates.items():
                    if predicate(event_type, found):
                        return key, found
            raise WaitTimeout(wait_timeout_message(self.cls, namespace, name, timeout))
        finally:
            if timer is not None:
                timer.stop()
                timer.join()
            watch.close()

    def open_watch(
        self,
        namespace: str | None = None,
        all_namespaces: bool = False,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = False,
        read_timeout: float | None = None,
    ) -> LiveWatch[T]:
        """Open one watch: iterate it for ``(event_type, object)``; ``close()`` from any thread."""
        ns = None if all_namespaces else self._namespace(namespace)
        params = watch_params(
            label_selector=label_selector,
            field_selector=field_selector,
            resource_version=resource_version,
            timeout_seconds=timeout_seconds,
            allow_bookmarks=allow_bookmarks,
        )
        stream = self.config.transport.stream(collection_path(self.cls, ns), params=params, read_timeout=read_timeout)
        return LiveWatch(stream, self.cls.from_dict)

    # ----------------------------------------------------------------- writes
    def create(self, obj: T, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        """POST ``obj``; returns the server's object (with uid, resourceVersion, ...)."""
        meta = _metadata(obj)
        namespace = self._namespace(meta.namespace if meta else None)
        params = _write_params(dry_run, field_manager)
        labelled = self.config.create_labels
        data = self._request(
            "POST",
            collection_path(self.cls, namespace),
            params=params,
            body=_body(obj, labelled(obj) if labelled is not None else None),
            content_type="application/json",
        )
        return self._written(self.cls.from_dict(data), dry_run)

    def update(self, obj: T, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        """PUT ``obj`` (a stale resourceVersion raises ``ResourceConflict``)."""
        return self._put(obj, None, dry_run, field_manager)

    def update_status(self, obj: T, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        """PUT ``obj`` to the ``status`` subresource."""
        return self._put(obj, "status", dry_run, field_manager)

    def _put(self, obj: Any, sub: str | None, dry_run: bool, field_manager: str | None) -> T:
        path = self._path(obj.metadata.name, obj.metadata.namespace, sub)
        data = self._request(
            "PUT", path, params=_write_params(dry_run, field_manager), body=_body(obj), content_type="application/json"
        )
        return self._written(self.cls.from_dict(data), dry_run)

    def patch(
        self,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: str = "merge",
        field_manager: str | None = None,
        force: bool = False,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> T:
        """PATCH with ``patch_type`` "merge", "json", "strategic" or "apply" (server-side apply)."""
        try:
            content_type = PATCH_TYPES[patch_type]
        except KeyError:
            raise ValueError(f"patch_type {patch_type!r}: expected one of {sorted(PATCH_TYPES)}") from None
        if patch_type == "apply" and not field_manager:
            raise ValueError("server-side apply needs a field_manager")
        params = _write_params(dry_run, field_manager)
        if force:
            params["force"] = "true"
        data = self._request(
            "PATCH",
            self._path(name, namespace, subresource),
            params=params,
            body=_body(patch),
            content_type=content_type,
        )
        return self._written(self.cls.from_dict(data), dry_run)

    def apply(self, obj: T, *, field_manager: str = "cloudcoil-cache", force: bool = False) -> T:
        """Server-side apply ``obj`` (a PATCH of type apply, recorded under ``field_manager``).

        ``metadata.managedFields`` is left out of the request (the API server refuses an applied
        configuration that sets it), so an object read from the server can be applied as is.
        """
        body: Any = obj
        data = body.to_dict()
        meta = data.get("metadata")
        if isinstance(meta, dict) and "managedFields" in meta:
            data["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
        return self.patch(
            body.metadata.name,
            data,
            namespace=body.metadata.namespace,
            patch_type="apply",
            field_manager=field_manager,
            force=force,
        )

    def delete(
        self,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Mapping[str, str] | None = None,
        dry_run: bool = False,
    ) -> T | Status:
        """DELETE ``name``; returns the object as the server returned it (or its Status).

        ``propagation_policy``: "Foreground", "Background" or "Orphan" (any case, as cloudcoil's
        lower-case ones); ``preconditions``:
        ``{"uid": ...}`` and/or ``{"resourceVersion": ...}`` (a mismatch raises
        ``ResourceConflict``).
        """
        return self.delete_with(
            name, namespace, DeleteOptions(propagation_policy, grace_period_seconds, preconditions, dry_run)
        )

    def delete_with(self, name: str, namespace: str | None, opts: DeleteOptions) -> T | Status:
        """``delete()`` with its options as one ``DeleteOptions`` value."""
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if opts.propagation_policy:
            options["propagationPolicy"] = _propagation(opts.propagation_policy)
        if opts.grace_period_seconds is not None:
            options["gracePeriodSeconds"] = int(opts.grace_period_seconds)
        if opts.preconditions:
            unknown = set(opts.preconditions) - {"uid", "resourceVersion"}
            if unknown:
                raise ValueError(f"preconditions: unknown keys {sorted(unknown)}; use uid, resourceVersion")
            options["preconditions"] = dict(opts.preconditions)
        if opts.dry_run:
            options["dryRun"] = ["All"]
        data = self._request(
            "DELETE", self._path(name, namespace), body=_json.dumps(options), content_type="application/json"
        )
        result = self._to_obj(data)
        if not opts.dry_run:
            self._note_delete(name, namespace, result)
        return result

    def delete_all(
        self,
        namespace: str | None = None,
        dry_run: bool = False,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        *,
        all_namespaces: bool = False,
    ) -> ObjectList[T]:
        """Delete every object of the namespace (or, ``all_namespaces``, of every namespace) that
        matches the selectors, with one DELETE of the collection per namespace.

        Returns the list of the deleted objects (an ``ObjectList``), as kube-apiserver answers it:
        each object as listed just before the deletion (so without a deletionTimestamp; one kept by
        finalizers is still on the server). A dry run answers the same list and deletes nothing.
        With ``all_namespaces``, the namespaces come from a paged LIST of the kind (the same
        selectors; only the namespace of each item is read).

        Raises:
            DecodeError: the server answered something else than the list (kube-apiserver never does).
        """
        params = list_params(label_selector=label_selector, field_selector=field_selector)
        if dry_run:
            params["dryRun"] = "All"
        if propagation_policy:
            params["propagationPolicy"] = _propagation(propagation_policy)
        if grace_period_seconds is not None:
            if isinstance(grace_period_seconds, bool) or not isinstance(grace_period_seconds, int):
                raise ValueError(f"grace_period_seconds must be an integer, got {grace_period_seconds!r}")
            params["gracePeriodSeconds"] = str(grace_period_seconds)
        if all_namespaces and self.cls.namespaced:
            # kube-apiserver has no cluster-wide DELETE of a namespaced collection: one per namespace
            scopes: list[str | None] = list(self._namespaces_with(label_selector, field_selector))
        else:
            scopes = [self._namespace(namespace)]
        log.info(
            "Deleting all %s in %s (labels %r, fields %r%s)",
            self.cls.kind,
            "all namespaces" if all_namespaces else (scopes[0] or "the cluster"),
            label_selector,
            field_selector,
            ", dry run" if dry_run else "",
        )
        items: list[T] = []
        meta: dict[str, Any] = {}
        kind, api_version = f"{self.cls.kind}List", self.cls.api_version
        for ns in scopes:
            data = self._request("DELETE", collection_path(self.cls, ns), params=params)
            if not isinstance(data, dict) or not isinstance(data.get("items"), list):
                # kube-apiserver always answers the list (dry run and no match too)
                raise DecodeError(
                    f"DELETE of the {self.cls.kind} collection: the server answered "
                    f"{_answer_kind(data)}, not the list of the deleted objects"
                )
            deleted = [self.cls.from_dict(item) for item in data["items"]]
            items.extend(deleted)
            if len(scopes) == 1:
                meta = data.get("metadata") or {}
                kind, api_version = data.get("kind") or kind, data.get("apiVersion") or api_version
            if not dry_run:
                for obj in deleted:
                    self._note_deleted_object(obj)
        return ObjectList(self.cls, items, meta, kind=kind, api_version=api_version)

    def _namespaces_with(self, label_selector: str | None, field_selector: str | None) -> tuple[str, ...]:
        """The namespaces holding objects of the kind that match the selectors, sorted.

        Read from a live LIST across all namespaces, page by page, without decoding the objects.
        """
        found: set[str] = set()
        token: str | None = None
        while True:
            params = list_params(
                label_selector=label_selector, field_selector=field_selector, limit=_NAMESPACE_PAGE, continue_=token
            )
            body = self._request("GET", collection_path(self.cls, None), params=params)
            for item in body.get("items") or ():
                ns = (item.get("metadata") or {}).get("namespace") if isinstance(item, dict) else None
                if isinstance(ns, str) and ns:
                    found.add(ns)
            token = (body.get("metadata") or {}).get("continue") or None
            if token is None:
                return tuple(sorted(found))

    def _note_deleted_object(self, obj: Any) -> None:
        """One object of a collection DELETE's answer: reads wait for its DELETED event.

        The answer lists the objects as they were before the delete, so their resourceVersions were
        delivered already and cannot be what reads wait for (an object a finalizer keeps is waited
        for until ``read_your_writes_timeout``, then read from the API).
        """
        cache = self.config.cache
        meta = getattr(obj, "metadata", None)
        if cache is not None and meta is not None and meta.name:
            cache.note_delete(self.cls, meta.namespace, meta.name)

    def scale(self, name: str, replicas: int, namespace: str | None = None) -> T:
        """Set ``spec.replicas`` through the ``scale`` subresource; returns the updated object."""
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
            raise ValueError(f"replicas must be an integer >= 0, got {replicas!r}")
        self._request(
            "PATCH",
            self._path(name, namespace, "scale"),
            body=_json.dumps({"spec": {"replicas": replicas}}),
            content_type=PATCH_TYPES["merge"],
        )
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


#: The name this class had (and keeps): cloudcoil's ``client_for`` gives one.
ResourceClient = Api


class LiveWatch(Generic[T]):
    """An open watch yielding ``(event_type, object)``; ``close()`` may be called from any thread
    (it unblocks a pending read, and the iteration then ends)."""

    def __init__(self, stream: Any, structure: Callable[[dict[str, Any]], T]) -> None:
        self._stream = stream
        self._structure = structure

    def __iter__(self) -> Iterator[tuple[str, T]]:
        for line in self._stream:
            event = decode_event(line, self._structure)
            found: Any = event.object  # None for a BOOKMARK (allow_bookmarks=True), yielded as it came
            yield event.type, found

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> LiveWatch[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _bound_resource_class(cls: Any) -> bool:
    """A resource class bound to its plural: api_version, kind, plural and namespaced all set."""
    return (
        getattr(cls, "plural", None) is not None
        and getattr(cls, "namespaced", None) is not None
        and getattr(cls, "kind", None) is not None
        and getattr(cls, "api_version", None) is not None
    )


def _unbound(cls: Any) -> bool:
    """A dynamic class still waiting for discovery: kind and apiVersion, no plural."""
    return (
        getattr(cls, "plural", None) is None
        and bool(getattr(cls, "kind", None))
        and bool(getattr(cls, "api_version", None))
    )


def _answer_kind(data: Any) -> str:
    if isinstance(data, dict) and isinstance(data.get("kind"), str):
        return f"a {data['kind']}"
    return f"a {type(data).__name__}"


def _close_after(timeout: float, watch: Watch[Any], stopping: threading.Event) -> None:
    """``wait_for``'s timer: close the watch after ``timeout`` seconds, unless stopped first."""
    if not stopping.wait(timeout):
        watch.close()


def _metadata(obj: Any) -> Any:
    """``obj.metadata`` (an object of any resource class), or None."""
    return getattr(obj, "metadata", None)


def _propagation(policy: str) -> str:
    """ "Foreground", "Background" or "Orphan" from any case of them (cloudcoil passes "background")."""
    value = policy.capitalize() if isinstance(policy, str) else policy
    if value not in ("Foreground", "Background", "Orphan"):
        raise ValueError(f"propagation_policy {policy!r}: expected Foreground, Background or Orphan")
    return value


def _write_params(dry_run: bool, field_manager: str | None) -> dict[str, str]:
    params: dict[str, str] = {}
    if dry_run:
        params["dryRun"] = "All"
    if field_manager:
        params["fieldManager"] = field_manager
    return params
