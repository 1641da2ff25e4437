"""What an admission handler is given: ``AdmissionRequest`` (with ``cached``, ``client``, ``warn``, ``audit``)."""

from __future__ import annotations

import re
import threading
from typing import Any, Callable, Generator, Generic, Literal, Mapping, TypeVar

import attrs

from cloudcoil_cache.admission._cached import CachedKind
from cloudcoil_cache.client import AsyncResourceClient, Config, ResourceClient

__all__ = [
    "MAX_WARNING_CHARS",
    "MAX_WARNINGS",
    "AdmissionRequest",
    "Notes",
    "Operation",
    "RequestClient",
    "UserInfo",
]

T = TypeVar("T")
U = TypeVar("U")

#: An admission operation (CONNECT is not routed).
Operation = Literal["CREATE", "UPDATE", "DELETE"]

#: kube-apiserver truncates a warning past 256 characters; at most 32 are kept per answer.
MAX_WARNING_CHARS = 256
MAX_WARNINGS = 32
_AUDIT_KEY = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


@attrs.frozen
class UserInfo:
    """Who sent the request (``request.userInfo``)."""

    username: str = ""
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)

    @classmethod
    def from_wire(cls, data: Any) -> UserInfo:
        if not isinstance(data, Mapping):
            return cls()
        extra = data.get("extra") or {}
        return cls(
            username=str(data.get("username") or ""),
            uid=str(data.get("uid") or ""),
            groups=tuple(str(g) for g in data.get("groups") or ()),
            extra={str(k): tuple(str(x) for x in v or ()) for k, v in extra.items()}
            if isinstance(extra, Mapping)
            else {},
        )


class Notes:
    """The warnings and audit annotations one answer carries (filled from the handler's thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.warnings: list[str] = []
        self.dropped = 0
        self.audit: dict[str, str] = {}

    def warn(self, text: str) -> None:
        if not isinstance(text, str) or not text:
            raise ValueError(f"request.warn() needs a non-empty string, got {text!r}")
        if len(text) > MAX_WARNING_CHARS:
            raise ValueError(
                f"request.warn(): a warning is at most {MAX_WARNING_CHARS} characters (got {len(text)}); "
                "kube-apiserver would truncate it"
            )
        with self._lock:
            if len(self.warnings) < MAX_WARNINGS:
                self.warnings.append(text)
            else:
                self.dropped += 1

    def add_audit(self, key: str, value: str) -> None:
        if not isinstance(key, str) or not _AUDIT_KEY.match(key):
            raise ValueError(
                f"request.audit(): key {key!r} must be a qualified name without a prefix "
                "(letters, digits, '-', '_', '.', at most 63 characters; kube-apiserver prefixes the webhook's name)"
            )
        if not isinstance(value, str):
            raise ValueError(f"request.audit(): value of {key!r} must be a string, got {type(value).__name__}")
        with self._lock:
            self.audit[key] = value

    def snapshot(self) -> tuple[list[str], dict[str, str]]:
        with self._lock:
            return list(self.warnings), dict(self.audit)


class RequestClient(ResourceClient[T]):
    """``request.client(Kind)``: the sync live client whose namespace defaults to the request's.

    Awaiting it gives its asyncio twin (``await request.client(Kind)``, as cloudcoil 0.8 reads)."""

    def __init__(self, cls: type[T], config: Config, namespace: str | None) -> None:
        super().__init__(cls, config, cached=False)
        self._default_namespace = namespace

    def _namespace(self, namespace: str | None) -> str | None:
        return super()._namespace(namespace or self._default_namespace)

    def __await__(self) -> Generator[Any, None, AsyncResourceClient[T]]:
        return AsyncResourceClient(self).ready().__await__()


@attrs.frozen(eq=False)
class AdmissionRequest(Generic[T]):
    """One admission request, decoded for a handler.

    ``resource`` is the decoded ``object`` (None for DELETE), ``old_resource`` the ``oldObject`` (None
    for CREATE); both are editable copies. A mutator returns an edited resource (or None: no change).
    ``raw_object``/``raw_old_object`` are the wire dicts, ``name`` is "" on a ``generateName`` create.
    """

    uid: str
    operation: Operation
    resource: T | None = attrs.field(repr=False)  # objects (a Secret's data) never in a repr
    old_resource: T | None = attrs.field(repr=False)
    name: str = ""
    namespace: str = ""
    subresource: str = ""
    dry_run: bool = False
    user_info: UserInfo = attrs.field(factory=UserInfo, repr=False)
    options: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    raw_object: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    raw_old_object: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    _config: Config | None = attrs.field(default=None, alias="config", repr=False)
    _reader: Callable[[Any, str | None], CachedKind[Any]] | None = attrs.field(default=None, alias="reader", repr=False)
    _notes: Notes = attrs.field(factory=Notes, alias="notes", repr=False)

    @property
    def config(self) -> Config | None:
        """The webhook's Config (``AdmissionWebhook(config=...)``), or None."""
        return self._config

    def warn(self, text: str) -> None:
        """Add a warning to the answer (allowed or denied): at most 256 characters, 32 kept."""
        self._notes.warn(text)

    def audit(self, key: str, value: str) -> None:
        """Add an audit annotation (``auditAnnotations``; kube-apiserver prefixes the webhook name)."""
        self._notes.add_audit(key, value)

    def cached(self, resource: type[U]) -> CachedKind[U]:
        """Strict reads of ``resource`` from the webhook Config's informer cache (``.get``/``.list``):
        deep editable copies, None on a miss, ``CacheUnavailableError`` when it cannot serve.

        The kind must be one of ``Config(cache=Cache(resources=[...]))``: admission serves on every
        replica and reads only a cache of its own. Staleness remains; use ``client()`` for live checks.
        """
        if self._reader is None:
            raise ValueError("Admission cached reads require a preconfigured Config cache resource")
        return self._reader(resource, self.namespace or None)

    def client(self, resource: type[U]) -> RequestClient[U]:
        """The live client of ``resource`` (namespace defaults to the request's); also awaitable."""
        if self._config is None:
            raise RuntimeError("Admission clients require AdmissionWebhook(config=...)")
        return RequestClient(resource, self._config, self.namespace or None)
