"""The fake server's state: objects, one global revision, the event history, snapshots and watchers.

Stored object dicts are never modified after they are stored (copy on write), so reads share them
without copying and their serialized JSON is cached.
"""

from __future__ import annotations

import bisect
import contextlib
import copy
import json
import random
import threading
import time
import uuid
from collections import OrderedDict
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterable, Iterator, Protocol

from ..machinery import status as _status
from ..machinery.fields import apply as apply_fields
from ..machinery.fields import update_managed
from ..machinery.patch import PatchError, json_patch, merge_patch
from ..machinery.resources import ResourceType
from ..machinery.smp import definition_of, strategic_merge
from .watchers import Event, Watcher

__all__ = ["Admit", "CommitListener", "Store", "Stored", "Snapshot", "object_key"]

_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
_KIND_KEYS = ("kind", "apiVersion")
_PATCH_TYPES = (
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/json-patch+json",
)
APPLY_PATCH = "application/apply-patch+yaml"


class Admit(Protocol):
    """Defaults and validates a write in place before it is stored (``old``: the stored object
    on update); raises ``StatusError``. The registry passes it down (``Store.set_admission``)."""

    def __call__(
        self,
        rtype: ResourceType,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        *,
        namespace: str | None,
        subresource: str | None,
    ) -> None: ...


# Told of every stored change (rtype, event type, object), with the store lock held.
CommitListener = Callable[[ResourceType, str, dict[str, Any]], None]


def object_key(namespace: str | None, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def _same(new: dict[str, Any], current: dict[str, Any]) -> bool:
    """Whether a write changes nothing but managedFields times (the real server skips those)."""
    if {k: v for k, v in new.items() if k != "metadata"} != {k: v for k, v in current.items() if k != "metadata"}:
        return False
    skip = ("resourceVersion", "managedFields")
    new_meta, cur_meta = new.get("metadata") or {}, current.get("metadata") or {}
    if {k: v for k, v in new_meta.items() if k not in skip} != {k: v for k, v in cur_meta.items() if k not in skip}:
        return False
    return bool(_timeless(new_meta.get("managedFields")) == _timeless(cur_meta.get("managedFields")))


def _timeless(entries: Any) -> Any:
    if not isinstance(entries, list):
        return entries
    return [{k: v for k, v in e.items() if k != "time"} if isinstance(e, dict) else e for e in entries]


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _replacement(
    rtype: ResourceType,
    name: str,
    obj: dict[str, Any],
    current: dict[str, Any],
    *,
    subresource: str | None,
    keep_status: bool,
    managed: list[Any] | None,
) -> dict[str, Any]:
    """The object an update stores before admission: ``obj`` with what the server owns kept from
    ``current`` (identity, status unless it is the status subresource, deletion fields)."""
    cur_meta = current["metadata"]
    if subresource == "status":
        new = {**current, "status": obj.get("status", {})}
        new["metadata"] = dict(cur_meta)
    else:
        new = dict(obj)
        new_meta = dict(obj["metadata"])
        for field in ("uid", "creationTimestamp", "namespace", "generation"):
            if field in cur_meta:
                new_meta[field] = cur_meta[field]
        if "managedFields" not in new_meta and "managedFields" in cur_meta:
            new_meta["managedFields"] = cur_meta["managedFields"]
        new_meta["name"] = name
        new["metadata"] = new_meta
        new["kind"] = rtype.kind
        new["apiVersion"] = rtype.api_version
        if rtype.has_status and keep_status:
            if "status" in current:
                new["status"] = current["status"]
            else:
                new.pop("status", None)
    if managed is not None:  # server-side apply computed them
        new["metadata"]["managedFields"] = managed
    for field in ("deletionTimestamp", "deletionGracePeriodSeconds"):
        if field in cur_meta:
            new["metadata"][field] = cur_meta[field]
        else:
            new["metadata"].pop(field, None)
    return new


def _place(rtype: ResourceType, meta: dict[str, Any], namespace: str | None) -> str | None:
    """The namespace a new object goes to (set in its metadata; None for cluster-scoped kinds)."""
    if not rtype.namespaced:
        meta.pop("namespace", None)
        return None
    namespace = namespace or meta.get("namespace") or "default"
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise _status.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    meta["namespace"] = namespace
    return namespace


def _check_preconditions(
    rtype: ResourceType, name: str, cur_meta: dict[str, Any], preconditions: dict[str, Any] | None
) -> None:
    """409 when a DELETE's preconditions (uid, resourceVersion) do not hold."""
    for key, field in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
        wanted = (preconditions or {}).get(key)
        if wanted is not None and str(wanted) != cur_meta.get(key):
            raise _status.precondition_failed(rtype, name, field, str(wanted), str(cur_meta.get(key)))


def _pod_grace(pod: dict[str, Any], grace_period: int | None) -> Any:
    """A deleted pod's grace period: the request's, else the one it is terminating with, else its
    spec's; 0 for a pod on no node or finished."""
    spec = pod.get("spec") or {}
    phase = (pod.get("status") or {}).get("phase")
    grace: Any = grace_period
    if grace is None:
        grace = spec.get("terminationGracePeriodSeconds", 30)
        if pod["metadata"].get("deletionGracePeriodSeconds") is not None:
            grace = pod["metadata"]["deletionGracePeriodSeconds"]
    if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
        grace = 0
    return grace


def _check_applied(rtype: ResourceType, name: str, namespace: str | None, applied: Any) -> None:
    """400 for an apply patch that is not an object of the URL's kind, name and namespace."""
    if not isinstance(applied, dict):
        raise _status.bad_request("an apply patch must be an object")
    if applied.get("apiVersion") != rtype.api_version or applied.get("kind") != rtype.kind:
        raise _status.bad_request(
            f"the apply patch must have apiVersion {rtype.api_version!r} and kind "
            f"{rtype.kind!r}, got {applied.get('apiVersion')!r} and {applied.get('kind')!r}"
        )
    meta = applied.get("metadata")
    if not isinstance(meta, dict):
        raise _status.bad_request("metadata must be an object")
    if meta.get("name") not in (None, name):
        raise _status.bad_request(
            f"the name of the object ({meta['name']}) does not match the name on the URL ({name})"
        )
    if meta.get("managedFields") is not None:
        raise _status.bad_request("metadata.managedFields must be nil")
    if rtype.namespaced and meta.get("namespace") not in (None, namespace):
        raise _status.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )


class Stored:
    """A stored object and its cached serializations (with and without ``kind``/``apiVersion``, and
    as a meta.k8s.io/v1 ``PartialObjectMetadata``)."""

    __slots__ = ("obj", "_full", "_bare", "_partial")

    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj
        self._full: bytes | None = None
        self._bare: bytes | None = None
        self._partial: bytes | None = None

    def partial(self) -> bytes:
        """JSON of the object's meta.k8s.io/v1 ``PartialObjectMetadata`` (its metadata only)."""
        if self._partial is None:
            head = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": self.obj.get("metadata") or {},
            }
            self._partial = json.dumps(head, separators=(",", ":")).encode()
        return self._partial

    def full(self) -> bytes:
        if self._full is None:
            self._full = json.dumps(self.obj, separators=(",", ":")).encode()
        return self._full

    def bare(self) -> bytes:
        """JSON without ``kind``/``apiVersion``, as built-in LIST items are served."""
        if self._bare is None:
            obj = {k: v for k, v in self.obj.items() if k not in _KIND_KEYS}
            self._bare = json.dumps(obj, separators=(",", ":")).encode()
        return self._bare


class Snapshot:
    """The objects of one resource type at one revision, sorted by key."""

    __slots__ = ("rv", "keys", "entries", "created")

    def __init__(self, rv: int, items: dict[str, Stored]) -> None:
        self.rv = rv
        self.keys = sorted(items)
        self.entries = [items[k] for k in self.keys]
        self.created = time.monotonic()


class Store:
    """All objects and the watch fan-out; every write bumps ``revision`` and notifies watchers."""

    def __init__(self, *, max_history: int = 100_000, max_snapshots: int = 16) -> None:
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.revision = 1
        self.compacted = 1
        self.max_history = max_history
        self._objects: dict[ResourceType, dict[str, Stored]] = {}
        self._hist: list[Event] = []
        self._hist_rvs: list[int] = []
        self._watchers: dict[ResourceType, set[Watcher]] = {}
        self._snapshots: OrderedDict[tuple[ResourceType, int], Snapshot] = OrderedDict()
        self._max_snapshots = max_snapshots
        self._local = threading.local()  # per request thread: whether its writes are a dry run
        # Validation, defaulting and admission, passed down by the registry (None: store as given).
        self._admit: Admit | None = None
        self._listeners: list[CommitListener] = []

    def set_admission(self, admit: Admit | None) -> None:
        """What ``create``/``replace`` call on a write before storing it (with ``admit=True``)."""
        self._admit = admit

    def add_commit_listener(self, listener: CommitListener) -> None:
        """Call ``listener(rtype, etype, obj)`` after every stored change (lock held; it may write)."""
        with self.lock:
            self._listeners.append(listener)

    @contextlib.contextmanager
    def dry_run(self) -> Iterator[None]:
        """Writes in the block, made by this thread, are validated and answered but not stored
        (``dryRun=All``). The flag is the thread's own: the lock is not held for the block, so
        the request may wait on others (an admission webhook reading the server back)."""
        previous = self._dry_run
        self._local.dry_run = True
        try:
            yield
        finally:
            self._local.dry_run = previous

    @property
    def _dry_run(self) -> bool:
        return bool(getattr(self._local, "dry_run", False))

    # -- reads ---------------------------------------------------------------------------------

    def get(self, rtype: ResourceType, name: str, namespace: str | None) -> Stored:
        entry = self._objects.get(rtype, {}).get(object_key(namespace, name))
        if entry is None:
            raise _status.not_found(rtype, name)
        return entry

    def snapshot(self, rtype: ResourceType, rv: int | None) -> Snapshot:
        """Objects of ``rtype`` at revision ``rv`` (None: now); 410 when ``rv`` was compacted."""
        with self.lock:
            if rv is None or rv >= self.revision:
                rv = self.revision
            elif rv < self.compacted:
                raise _status.expired("The resourceVersion for the provided list is too old.")
            cached = self._snapshots.get((rtype, rv))
            if cached is not None:
                self._snapshots.move_to_end((rtype, rv))
                return cached
            items = dict(self._objects.get(rtype, {}))
            if rv < self.revision:
                self._roll_back(items, rtype, rv)
            snap = Snapshot(rv, items)
            self._snapshots[(rtype, rv)] = snap
            while len(self._snapshots) > self._max_snapshots:
                self._snapshots.popitem(last=False)
            return snap

    def _roll_back(self, items: dict[str, Stored], rtype: ResourceType, rv: int) -> None:
        start = bisect.bisect_right(self._hist_rvs, rv)
        for event in reversed(self._hist[start:]):
            if event.rtype != rtype:
                continue
            meta = event.obj.get("metadata", {})
            key = object_key(meta.get("namespace"), meta.get("name", ""))
            if event.type == "ADDED":
                items.pop(key, None)
            elif event.old is not None:
                items[key] = Stored(event.old)

    # -- writes --------------------------------------------------------------------------------

    def _commit(
        self,
        rtype: ResourceType,
        etype: str,
        key: str,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """Record a change at the next revision (lock held by the caller); returns the object.

        Inside ``dry_run()`` nothing is recorded: the object keeps the resourceVersion it had
        (none for a create).
        """
        if self._dry_run:
            if old is None:
                obj["metadata"].pop("resourceVersion", None)
            else:
                obj["metadata"]["resourceVersion"] = old["metadata"].get("resourceVersion")
            return obj
        self.revision += 1
        rv = self.revision
        obj["metadata"]["resourceVersion"] = str(rv)
        objects = self._objects.setdefault(rtype, {})
        if etype == "DELETED":
            objects.pop(key, None)
        else:
            objects[key] = Stored(obj)
        event = Event(rv, rtype, etype, obj, old)
        self._hist.append(event)
        self._hist_rvs.append(rv)
        if len(self._hist) > self.max_history + self.max_history // 4 + 1:
            self._trim(len(self._hist) - self.max_history)
        for watcher in self._watchers.get(rtype, ()):
            watcher.offer(event)
        self.changed.notify_all()
        for listener in self._listeners:
            listener(rtype, etype, obj)
        return obj

    def _trim(self, count: int) -> None:
        if count <= 0:
            return
        self.compacted = max(self.compacted, self._hist_rvs[count - 1])
        del self._hist[:count]
        del self._hist_rvs[:count]

    def create(
        self,
        rtype: ResourceType,
        obj: dict[str, Any],
        namespace: str | None,
        *,
        manager: str | None = None,
        admit: bool = True,
        reset_status: bool = False,
    ) -> dict[str, Any]:
        """Store a new object. ``admit``: validate and default it (when the store has an
        admission); ``manager``: record an ``Update`` managedFields entry for it;
        ``reset_status``: drop the status a kind with a status subresource was sent with (as
        the real server's create strategies do)."""
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise _status.bad_request("metadata must be an object")
        with self.lock:
            namespace = _place(rtype, meta, namespace)
            if not meta.get("name"):
                meta["name"] = self._generated_name_locked(rtype, meta, namespace)
            key = object_key(namespace, meta["name"])
            if key in self._objects.get(rtype, {}):
                raise _status.already_exists(rtype, meta["name"])
            obj["kind"] = rtype.kind
            obj["apiVersion"] = rtype.api_version
            for field in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion"):
                meta.pop(field, None)
            if reset_status and rtype.has_status:
                obj.pop("status", None)
                if rtype.builtin:
                    obj["status"] = {}
            if admit and self._admit is not None:
                self._admit(rtype, obj, None, namespace=namespace, subresource=None)
            meta = obj["metadata"]
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = _now()
            if rtype.has_generation:
                meta["generation"] = 1
            if manager is not None:
                update_managed(
                    None,
                    obj,
                    rtype.schema_node(),
                    manager=manager,
                    api_version=rtype.api_version,
                    has_status=rtype.has_status,
                )
            return self._commit(rtype, "ADDED", key, obj, None)

    def _generated_name_locked(self, rtype: ResourceType, meta: dict[str, Any], namespace: str | None) -> str:
        """A free name from ``generateName`` (422 when there is neither name nor generateName)."""
        if not meta.get("generateName"):
            raise _status.invalid_object(
                rtype,
                "",
                "metadata.name",
                "Required value: name or generateName is required",
            )
        objects = self._objects.get(rtype, {})
        while True:
            name = meta["generateName"] + "".join(random.choices(_NAME_CHARS, k=5))
            if object_key(namespace, name) not in objects:
                return str(name)

    def preload(self, rtype: ResourceType, obj: dict[str, Any]) -> None:
        """Store an object that existed before any history (no event, the current revision)."""
        with self.lock:
            meta = obj["metadata"]
            meta.setdefault("uid", str(uuid.uuid4()))
            meta.setdefault("creationTimestamp", _now())
            meta["resourceVersion"] = str(self.revision)
            obj["kind"], obj["apiVersion"] = rtype.kind, rtype.api_version
            key = object_key(meta.get("namespace"), meta["name"])
            self._objects.setdefault(rtype, {})[key] = Stored(obj)
            self._snapshots.clear()

    def replace(
        self,
        rtype: ResourceType,
        name: str,
        namespace: str | None,
        obj: dict[str, Any],
        *,
        subresource: str | None = None,
        keep_status: bool = True,
        manager: str | None = None,
        admit: bool = True,
        managed: list[Any] | None = None,
    ) -> dict[str, Any]:
        """PUT semantics: optimistic concurrency on ``metadata.resourceVersion`` when given.

        With ``subresource="status"`` only the status changes; otherwise, for kinds with a status
        subresource and ``keep_status``, the stored status is kept. ``admit``: validate (with
        the immutability rules) and default; ``manager``: record an ``Update`` managedFields
        entry. A write that changes nothing is not stored (no new resourceVersion, no event).
        """
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            raise _status.bad_request("metadata must be an object")
        if meta.get("name") and meta["name"] != name:
            raise _status.bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL ({name})"
            )
        with self.lock:
            current = self.get(rtype, name, namespace).obj
            cur_meta = current["metadata"]
            wanted_rv = meta.get("resourceVersion")
            if wanted_rv and str(wanted_rv) != cur_meta.get("resourceVersion"):
                raise _status.conflict(rtype, name)
            new = _replacement(
                rtype, name, obj, current, subresource=subresource, keep_status=keep_status, managed=managed
            )
            if admit and self._admit is not None:
                self._admit(rtype, new, current, namespace=namespace, subresource=subresource)
            new_meta = new["metadata"]
            if subresource is None and rtype.has_generation and new.get("spec") != current.get("spec"):
                new_meta["generation"] = int(cur_meta.get("generation", 1)) + 1
            if manager is not None:
                update_managed(
                    current,
                    new,
                    rtype.schema_node(),
                    manager=manager,
                    api_version=rtype.api_version,
                    has_status=rtype.has_status,
                    subresource=subresource,
                )
            return self._store_replaced_locked(rtype, object_key(namespace, name), new, current)

    def _store_replaced_locked(
        self, rtype: ResourceType, key: str, new: dict[str, Any], current: dict[str, Any]
    ) -> dict[str, Any]:
        """Commit an update: nothing when it changes nothing, a deletion when it removed the
        last finalizer of an object being deleted, else a MODIFIED event."""
        new_meta, cur_meta = new["metadata"], current["metadata"]
        if _same(new, current):
            return {**current, "metadata": dict(cur_meta)}
        if (
            new_meta.get("deletionTimestamp")
            and not new_meta.get("finalizers")
            and not new_meta.get("deletionGracePeriodSeconds")
        ):
            # The last finalizer was removed from an object being deleted: it goes now.
            new_meta["resourceVersion"] = cur_meta.get("resourceVersion")
            gone = self._commit(rtype, "DELETED", key, new, current)
            self._after_delete_locked(gone)
            return gone
        return self._commit(rtype, "MODIFIED", key, new, current)

    def patch(
        self,
        rtype: ResourceType,
        name: str,
        namespace: str | None,
        content_type: str,
        patch: Any,
        subresource: str | None = None,
        *,
        manager: str | None = None,
    ) -> dict[str, Any]:
        """PATCH semantics: merge, strategic merge (built-ins only) or JSON patch, atomically.

        A resourceVersion the patch sets is a precondition (409 Conflict when stale).
        """
        strategic = content_type == "application/strategic-merge-patch+json"
        if content_type not in _PATCH_TYPES or (strategic and not rtype.builtin):
            raise _status.unsupported_patch(rtype.builtin)
        with self.lock:
            current = self.get(rtype, name, namespace).obj
            try:
                if content_type == "application/json-patch+json":
                    new = json_patch(current, patch)
                elif not isinstance(patch, dict):
                    raise _status.bad_request("a merge patch must be a JSON object")
                elif strategic:
                    definition = definition_of(rtype.api_version, rtype.kind)
                    new = strategic_merge(current, patch, definition)
                else:
                    new = merge_patch(current, patch)
            except PatchError as exc:
                raise _status.StatusError(422, _status.status_body(422, "Invalid", str(exc))) from None
            return self._replace_patched(rtype, name, namespace, new, subresource, manager)

    def _replace_patched(
        self,
        rtype: ResourceType,
        name: str,
        namespace: str | None,
        new: Any,
        subresource: str | None,
        manager: str | None,
    ) -> dict[str, Any]:
        if not isinstance(new, dict) or not isinstance(new.get("metadata"), dict):
            raise _status.bad_request("the patched object must keep its metadata")
        new["metadata"] = dict(new["metadata"])
        return self.replace(rtype, name, namespace, new, subresource=subresource, manager=manager)

    def apply(
        self,
        rtype: ResourceType,
        name: str,
        namespace: str | None,
        applied: Any,
        field_manager: str,
        subresource: str | None = None,
        *,
        force: bool = False,
    ) -> tuple[dict[str, Any], bool]:
        """Server-side apply: create when missing, else merge with field ownership (``machinery.fields``).

        Returns the object and whether it was created. Conflicts with other managers are a 409
        unless ``force``.
        """
        _check_applied(rtype, name, namespace, applied)
        body = {k: v for k, v in applied.items() if k not in ("apiVersion", "kind")}
        node = rtype.schema_node()
        with self.lock:
            try:
                current = self.get(rtype, name, namespace).obj
            except _status.StatusError:
                if subresource:
                    raise
                created = apply_fields(
                    None,
                    copy.deepcopy(body),
                    node,
                    manager=field_manager,
                    api_version=rtype.api_version,
                    has_status=rtype.has_status,
                    subresource=subresource,
                    force=force,
                )
                created["metadata"]["name"] = name
                return self.create(rtype, created, namespace), True
            merged = apply_fields(
                current,
                body,
                node,
                manager=field_manager,
                api_version=rtype.api_version,
                has_status=rtype.has_status,
                subresource=subresource,
                force=force,
            )
            merged["apiVersion"], merged["kind"] = rtype.api_version, rtype.kind
            merged["metadata"].pop("resourceVersion", None)
            managed = merged["metadata"].pop("managedFields", [])
            return self.replace(rtype, name, namespace, merged, subresource=subresource, managed=managed), False

    def delete(
        self,
        rtype: ResourceType,
        name: str,
        namespace: str | None,
        preconditions: dict[str, Any] | None = None,
        *,
        grace_period: int | None = None,
        kubelet: bool = True,
    ) -> dict[str, Any]:
        """Delete as kube-apiserver does; returns the object (its last state when removed).

        ``preconditions`` (uid, resourceVersion) → 409. An object with finalizers gets
        ``deletionTimestamp`` (and ``deletionGracePeriodSeconds: 0``) and stays until an update
        removes the last finalizer. A pod on a node is deleted gracefully (``grace_period``, else
        its ``terminationGracePeriodSeconds``): it gets ``deletionTimestamp`` in the future and
        ``deletionGracePeriodSeconds``; with ``kubelet`` the simulated kubelet then removes it at
        once (both events are sent), without, it stays until deleted with grace period 0. A pod
        not on a node, or finished, goes at once. A namespace becomes ``Terminating``, its content
        is deleted, and it goes when nothing is left in it.
        """
        with self.lock:
            current = self.get(rtype, name, namespace).obj
            cur_meta = current["metadata"]
            _check_preconditions(rtype, name, cur_meta, preconditions)
            key = object_key(namespace, name)
            is_pod = rtype.builtin and rtype.group == "" and rtype.kind == "Pod"
            is_namespace = rtype.builtin and rtype.group == "" and rtype.kind == "Namespace"
            if cur_meta.get("finalizers") and not is_namespace:
                if cur_meta.get("deletionTimestamp"):
                    return current
                return self._mark_deleting(rtype, key, current, 0)
            if is_namespace:
                return self._delete_namespace(rtype, key, current, kubelet)
            if is_pod:
                grace = _pod_grace(current, grace_period)
                if isinstance(grace, int) and grace > 0:
                    if cur_meta.get("deletionTimestamp") and grace >= int(
                        cur_meta.get("deletionGracePeriodSeconds") or 0
                    ):
                        return current  # already terminating, no sooner
                    marked = self._mark_deleting(rtype, key, current, grace)
                    if not kubelet or self._dry_run:
                        return marked
                    current = self._objects[rtype][key].obj  # the kubelet is done at once
            last = {**current, "metadata": dict(current["metadata"])}
            if is_pod and not last["metadata"].get("deletionTimestamp"):
                last["metadata"]["deletionTimestamp"] = _now()
                last["metadata"]["deletionGracePeriodSeconds"] = 0
            gone = self._commit(rtype, "DELETED", key, last, current)
            self._after_delete_locked(gone)
            return gone

    def exists(self, rtype: ResourceType, name: str, namespace: str | None) -> bool:
        return object_key(namespace, name) in self._objects.get(rtype, {})

    def _mark_deleting(self, rtype: ResourceType, key: str, current: dict[str, Any], grace: int) -> dict[str, Any]:
        stamp = datetime.now(timezone.utc) + timedelta(seconds=grace)
        new = {
            **current,
            "metadata": {
                **current["metadata"],
                "deletionTimestamp": stamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "deletionGracePeriodSeconds": grace,
            },
        }
        if current["metadata"].get("generation") is not None and rtype.has_generation:
            new["metadata"]["generation"] = int(current["metadata"]["generation"]) + 1
        return self._commit(rtype, "MODIFIED", key, new, current)

    def _delete_namespace(
        self, rtype: ResourceType, key: str, current: dict[str, Any], kubelet: bool
    ) -> dict[str, Any]:
        """Mark a namespace Terminating and (as the namespace controller) delete its content."""
        name = current["metadata"]["name"]
        if not current["metadata"].get("deletionTimestamp"):
            terminating = {**current, "status": {**(current.get("status") or {}), "phase": "Terminating"}}
            current = self._mark_deleting(rtype, key, terminating, 0)
        if self._dry_run:
            return current
        for other in list(self._objects):
            if not other.namespaced:
                continue
            for entry in [e for e in self._objects[other].values() if e.obj["metadata"].get("namespace") == name]:
                meta = entry.obj["metadata"]
                if meta.get("deletionTimestamp") and meta.get("finalizers"):
                    continue
                self.delete(other, meta["name"], name, grace_period=0, kubelet=kubelet)
        finished = self._finish_namespace_locked(rtype, name)  # (deleting its last object may have finished it)
        return finished or (self._objects[rtype][key].obj if key in self._objects[rtype] else current)

    def _finish_namespace_locked(self, rtype: ResourceType, name: str) -> dict[str, Any] | None:
        """Remove a terminating namespace once nothing is left in it; its last state or None."""
        entry = self._objects.get(rtype, {}).get(name)
        if entry is None or not entry.obj["metadata"].get("deletionTimestamp"):
            return None
        for other, objects in self._objects.items():
            if other.namespaced and any(e.obj["metadata"].get("namespace") == name for e in objects.values()):
                return None
        current = entry.obj
        if current["metadata"].get("finalizers"):
            return None
        last = {
            **current,
            "metadata": dict(current["metadata"]),
            "spec": {**(current.get("spec") or {}), "finalizers": []},
        }
        return self._commit(rtype, "DELETED", name, last, current)

    def _after_delete_locked(self, gone: dict[str, Any]) -> None:
        """A namespaced object went: finish its namespace if it was waiting for it."""
        namespace = gone["metadata"].get("namespace")
        if not namespace or self._dry_run:
            return
        ns_type = next((t for t in self._objects if t.builtin and t.kind == "Namespace" and t.group == ""), None)
        if ns_type is not None:
            self._finish_namespace_locked(ns_type, namespace)

    # -- watchers ------------------------------------------------------------------------------

    def add_watcher(
        self,
        watcher: Watcher,
        *,
        initial: bool,
        since: int | None,
        end_marker: bool = False,
        ahead: bool = False,
    ) -> int:
        """Register ``watcher``; queue synthetic ADDEDs (``initial``) or history after ``since``.

        ``end_marker`` queues the initial-events-end bookmark (at the snapshot revision) after
        the synthetic ADDEDs. A ``since`` the revision has not reached (checked under the lock: a
        restart may have rewound the revision since the request's own check) is a 504 "Too large
        resource version", or with ``ahead`` the watch's floor: nothing at or below it is sent.

        Returns the revision the registration happened at. Raises a 410 StatusError when
        ``since`` is older than the compacted history.
        """
        with self.lock:
            if since is not None and since < self.compacted:
                raise _status.expired(f"too old resource version: {since} ({self.compacted})")
            if not initial and since is not None and since > self.revision:
                if not ahead:
                    raise _status.too_large_rv(since, self.revision)
                watcher.floor = since
            if initial:
                objects = self._objects.get(watcher.rtype, {})
                for key in sorted(objects):
                    entry = objects[key]
                    if watcher.matches(entry.obj):
                        watcher.items.append(("event", b'{"type":"ADDED","object":' + entry.full() + b"}\n"))
            elif since is not None:
                start = bisect.bisect_right(self._hist_rvs, since)
                for event in self._hist[start:]:
                    if event.rtype == watcher.rtype:
                        watcher.offer(event)
            if end_marker:
                watcher.items.append(("initial-end", self.revision))
            self._watchers.setdefault(watcher.rtype, set()).add(watcher)
            return self.revision

    def remove_watcher(self, watcher: Watcher) -> None:
        with self.lock:
            self._watchers.get(watcher.rtype, set()).discard(watcher)

    def watchers(self) -> list[Watcher]:
        with self.lock:
            return [w for ws in self._watchers.values() for w in ws]

    def drain_for_bookmark(self, watcher: Watcher, stalled: Callable[[], bool]) -> tuple[list[Any], int | None]:
        """Take the watcher's pending items and the revision they bring it up to, atomically; nothing
        (``None``) once ``stalled()``: a stall set while the stream was on its way to a bookmark
        must still hold back what was written after it (and the revision of it). The revision is
        ``None`` too while it is at or below the floor of a watch that started ahead of it (no bookmark)."""
        with self.lock, watcher.cond:
            if stalled():
                return [], None
            items = list(watcher.items)
            watcher.items.clear()
            return items, None if watcher.below_floor(self.revision) else self.revision

    # -- history control -----------------------------------------------------------------------

    def compact(self) -> None:
        """Forget all history up to now (watches from older RVs and continue tokens get 410)."""
        with self.lock:
            self._hist.clear()
            self._hist_rvs.clear()
            self.compacted = self.revision
            self._snapshots.clear()

    def reset_revision(self, revision: int) -> None:
        with self.lock:
            self.compact()
            self.revision = revision
            self.compacted = revision

    def wait_for_revision(self, rv: int, timeout: float, stop: threading.Event) -> bool:
        """Wait until the revision reaches ``rv``; False on timeout or when ``stop`` is set."""
        with self.changed:
            self.changed.wait_for(lambda: self.revision >= rv or stop.is_set(), timeout)
            return self.revision >= rv

    def wake_waiters(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def drop_all_locked(self, rtype: ResourceType) -> None:
        """Delete every object of ``rtype`` (its CRD went), each with a DELETED event."""
        for key, entry in sorted(self._objects.get(rtype, {}).items()):
            current = entry.obj
            self._commit(rtype, "DELETED", key, {**current, "metadata": dict(current["metadata"])}, current)

    def all_objects(self, rtype: ResourceType) -> Iterable[Stored]:
        with self.lock:
            return list(self._objects.get(rtype, {}).values())
