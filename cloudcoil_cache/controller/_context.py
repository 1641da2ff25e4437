"""What a reconcile function gets besides its object: Context (key, config, logger, its writes) and CachedKind."""

from __future__ import annotations

import logging
from typing import Any, Literal, Mapping, TypeVar

from cloudcoil_cache.client import Config
from cloudcoil_cache.client._kind_reader import KindReader
from cloudcoil_cache.controller._children import ensure_child, live_read
from cloudcoil_cache.controller._fence import Fence
from cloudcoil_cache.controller._informers import Source
from cloudcoil_cache.controller._keys import split_key
from cloudcoil_cache.controller._shard_labels import SHARD_LABEL_PREFIX
from cloudcoil_cache.controller._status import ConditionStatus
from cloudcoil_cache.controller._writes import PassWrites

__all__ = ["CachedKind", "CachedResources", "Context"]

T = TypeVar("T")


class CachedKind(KindReader[T]):
    """Reads of one kind from a controller's informer: editable deep copies, never an API call.

    A view of the kind's one reader in the cache of the Config that owns the informer
    (``Cache.reader(cls)``, a ``caching.CacheReader``; no client is built per read). Reads go
    through that cache in strict mode, so they get
    what that cache guarantees (no stale data past ``max_staleness``; read-your-writes for writes
    made through that Config) and raise ``CacheUnavailableError`` when it cannot serve.
    ``namespace`` defaults to the namespace of the key being reconciled, else the informer's.
    """

    def __init__(self, source: Source, default_namespace: str | None = None) -> None:
        scope = source.scope
        super().__init__(
            scope.cls,
            source.config,
            watched=scope.namespace,
            selector=scope.label_selector,
            default_namespace=default_namespace,
            owner="the controller",
            no_namespace="the controller watches it in all namespaces",
        )
        self._source = source

    def __repr__(self) -> str:
        return f"<CachedKind {self._source.scope.describe()}>"


#: The controller's former name for this class: ``caching.CachedResources`` (cloudcoil's, over an informer view)
#: has a different contract, so the controller's reads are ``CachedKind``; the old name stays importable.
CachedResources = CachedKind


class _KeyLogger(logging.LoggerAdapter):  # type: ignore[type-arg]
    """Prefixes messages with the controller and key (also in ``extra`` for structured handlers)."""

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        extra = self.extra or {}
        kwargs["extra"] = {**extra, **(kwargs.get("extra") or {})}
        return f"{extra.get('controller')} {extra.get('key')}: {msg}", kwargs


class Context:
    """Passed to ``def reconcile(obj, ctx)``: the key, the Config writes go through, a logger with the
    key bound, and ``cached(Kind)`` over the controller's informers.

    It belongs to one pass. ``set_status``, ``condition`` and ``event`` are kept until the pass ends
    (then the status is written once, when it changed, and the Events are recorded); ``ensure``,
    ``get`` and ``client`` make their API calls at once.
    """

    def __init__(
        self,
        controller: str,
        key: str,
        config: Config,
        sources: Mapping[Any, Source],
        logger: logging.Logger,
        retries: int = 0,
        *,
        fence: Fence | None = None,
        unowned_warned: set[str] | None = None,
    ) -> None:
        """``unowned_warned``: the controller's kinds already warned about in ``ensure()`` without
        ``.owns()`` (shared by its passes, so the warning is logged once per kind)."""
        self.controller = controller
        self.key = key
        self.namespace, self.name = split_key(key)
        self.config = config
        self.retries = retries
        self._sources = sources
        self._fence = fence
        self._unowned_warned = unowned_warned
        self.logger: logging.LoggerAdapter[logging.Logger] = _KeyLogger(logger, {"controller": controller, "key": key})
        self._resource: Any = None
        self._writes: PassWrites | None = None
        self._field_manager = controller

    def _begin(self, obj: Any, writes: PassWrites, field_manager: str) -> None:
        """The controller's: the object this pass reconciles and where its writes are kept."""
        self._resource = obj
        self._writes = writes
        self._field_manager = field_manager

    def _pass_writes(self) -> PassWrites:
        if self._writes is None:
            raise RuntimeError("this Context is not a reconcile pass's: status, conditions and events need one")
        return self._writes

    @property
    def resource(self) -> Any:
        """The object this pass reconciles (as the reconcile function got it)."""
        return self._resource

    def client(self, cls: type[T]) -> Any:
        """A live ``ResourceClient`` of ``cls`` on the controller's Config."""
        return cls.client(self.config)  # type: ignore[attr-defined]

    def get(self, cls: type[T], name: str, *, namespace: str | None = None) -> T:
        """Read ``name`` live (``ResourceNotFound`` when it does not exist); ``namespace`` defaults
        to the key's."""
        namespace = namespace or (self.namespace if getattr(cls, "namespaced", False) else None)
        found: T = self.client(cls).live_get(name, namespace)
        return found

    def set_status(self, **changes: Any) -> None:
        """Set status fields (camelCase or snake_case; ``None`` removes one), written when the pass ends."""
        self._pass_writes().set_status(**changes)

    def condition(
        self,
        name: str,
        status: ConditionStatus,
        *,
        reason: str,
        message: str = "",
    ) -> None:
        """Set the condition ``name`` (``True``, ``False`` or ``"Unknown"``), written when the pass ends;
        its ``lastTransitionTime`` moves only when its status flips."""
        self._pass_writes().condition(name, status, reason=reason, message=message)

    def event(self, reason: str, message: str, type: Literal["Normal", "Warning"] = "Normal") -> None:
        """Queue an Event about the object (recorded after the status write, best-effort, bounded)."""
        self._pass_writes().event(reason, message, type)

    def ensure(self, desired: T) -> T:
        """Create or update the child ``desired`` (server-side apply with the controller's field
        manager, a controller owner reference to this pass's object) and return it as it is live;
        no write when it already has every desired field. Declare its kind with ``.owns()`` so its
        changes reconcile the owner (and the check reads the cache, not the API). A sharded object's
        child gets its shard label (``shard.cloudcoil.dev/<ring>``): it is in the owner's shard at once."""
        parent = self._resource
        if parent is None:
            raise RuntimeError("ensure() needs a reconcile pass's Context")
        self.check_leadership()
        kind_class = getattr(type(desired), "__editable_class__", type(desired))  # a sealed object: its class
        source = self._sources.get(kind_class)
        if source is None:
            self._warn_unowned(kind_class)

        def read(cls: Any, name: str, namespace: str | None) -> Any:
            if source is not None:
                return CachedKind(source, self.namespace).get(name, namespace)
            return live_read(self.config)(cls, name, namespace)

        labels = getattr(parent.metadata, "labels", None) or {}
        shard = {k: v for k, v in labels.items() if k.startswith(SHARD_LABEL_PREFIX)}
        return ensure_child(
            parent, desired, config=self.config, field_manager=self._field_manager, read=read, labels=shard
        )

    def _warn_unowned(self, cls: Any) -> None:
        warned = self._unowned_warned
        kind = str(getattr(cls, "kind", None) or cls.__name__)
        seen = f"{getattr(cls, 'api_version', '')}/{kind}"  # a group's kind apart from the core one
        if warned is None or seen in warned:
            return
        warned.add(seen)  # shared by worker threads: a race logs it twice at worst
        self.logger.warning(
            "controller %s: ensure(%s) of a kind not declared with .owns(%s): each pass reads the child live "
            "to check it, and changes to it do not reconcile the owner (logged once per kind)",
            self.controller,
            kind,
            kind,
        )

    def cached(self, cls: type[T]) -> CachedKind[T]:
        """Reads of ``cls`` from the controller's informers (primary, owned and watched kinds only)."""
        source = self._sources.get(cls)
        if source is None:
            readable = ", ".join(
                sorted(
                    f"PartialObjectMetadata.of({c.kind})" if getattr(c, "metadata_of", None) else c.kind
                    for c in self._sources
                )
            )
            raise ValueError(
                f"{getattr(cls, 'kind', cls)!r} is not watched by controller {self.controller!r}; "
                f"it can read: {readable} (declare it with .owns() or .watch())"
            )
        return CachedKind(source, self.namespace)

    @property
    def leading(self) -> bool:
        """Does the run of this reconcile still lead (False once the Lease was lost)?"""
        return self._fence is None or not self._fence.lost

    def check_leadership(self) -> None:
        """Raise ``LeadershipLost`` if this replica lost the Lease since the reconcile started: call it
        before a write (the Context's write helpers do); the new leader reconciles the key again."""
        if self._fence is not None:
            self._fence.check()

    def wait_leadership_lost(self, timeout: float | None = None) -> bool:
        """Block up to ``timeout`` seconds for this run's leadership to end (a long reconcile can wait on
        it rather than sleep); True once lost. Without an election it is never lost."""
        if self._fence is None:
            return False
        return self._fence.wait(timeout)

    def __repr__(self) -> str:
        return f"<Context {self.controller} {self.key}>"
