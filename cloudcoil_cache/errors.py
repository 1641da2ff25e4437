"""The one exception hierarchy of cloudcoil_cache, and the predicates that classify errors.

Hierarchy::

    CloudcoilError                       base of everything this library raises
    ├── ConfigError                      kubeconfig / in-cluster / argument problems (names file + field)
    ├── DecodeError                      a body or watch line that cannot be decoded into objects
    ├── TransportError                   no usable HTTP response (converted in exactly one place)
    │   ├── ConnectError                 connection refused / DNS / TLS handshake failure
    │   ├── ReadTimeout                  the server sent nothing for the read timeout
    │   └── ProtocolError                connection dropped mid-response, truncated chunked body
    │       └── LineTooLong              a watch line longer than the limit (.limit, in bytes)
    ├── APIError                         the API server answered with an error Status (has .code, .status)
    │   ├── BadRequest                   400
    │   ├── Unauthorized                 401
    │   ├── Forbidden                    403
    │   ├── ResourceNotFound             404
    │   ├── NotAcceptable                406
    │   ├── ResourceConflict             409 (AlreadyExists and Conflict)
    │   ├── WatchExpired                 410 (HTTP 410 or an in-band ERROR event with code 410)
    │   ├── UnprocessableEntity          422 (Invalid)
    │   ├── TooManyRequests              429 (.retry_after)
    │   └── ServerError                  5xx (.retry_after)
    │       └── ServerTimeout            504 (.is_too_large_resource_version)
    ├── CacheError                       the informer cache
    │   ├── CacheUnavailableError        strict mode: the cache cannot serve this read (.reason)
    │   ├── CacheSyncTimeout             informers did not sync within sync_timeout
    │   └── ReadOnlyError                a cached (shared, sealed) object was modified
    ├── WaitTimeout                      a wait for a condition timed out
    └── AdmissionDenied                  an admission handler's refusal (.code, .reason, .message)

``ReadOnlyError`` also subclasses ``TypeError`` (what Python raises for immutable values), so code
that guards mutation with ``except TypeError`` keeps working.

Messages never contain credentials: the transport strips Authorization headers and
client keys before any error is built.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = [
    "APIError",
    "AdmissionDenied",
    "BadRequest",
    "BodyTooLarge",
    "CacheError",
    "CacheSyncTimeout",
    "CacheUnavailableError",
    "CloudcoilError",
    "ConfigError",
    "ConnectError",
    "DecodeError",
    "Forbidden",
    "IndexUnavailableError",
    "InheritedAcrossFork",
    "InvalidSelector",
    "LineTooLong",
    "NotAcceptable",
    "ProtocolError",
    "ReadOnlyError",
    "ReadTimeout",
    "ResourceConflict",
    "ResourceNotFound",
    "ServerError",
    "ServerTimeout",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "UnprocessableEntity",
    "WaitTimeout",
    "WatchExpired",
    "api_error_from_status",
    "is_expired",
    "is_hard_failure",
    "is_too_large_resource_version",
    "retry_after_of",
]


class CloudcoilError(Exception):
    """Base class of every exception raised by cloudcoil_cache."""


class ConfigError(CloudcoilError, ValueError):
    """A configuration problem: missing/malformed kubeconfig, bad argument, unknown context; also a
    ``ValueError`` (as cloudcoil's ``Config`` raises for a malformed kubeconfig)."""


class DecodeError(CloudcoilError, ValueError):
    """A response body, watch line or model value could not be decoded; also a ``ValueError`` (as
    pydantic's ``ValidationError`` is, which cloudcoil's models raise)."""


class TransportError(CloudcoilError):
    """The request got no usable HTTP response (see ``_http._transport`` for the one conversion point)."""


class ConnectError(TransportError):
    """The connection could not be established (refused, DNS, TLS handshake)."""


class ReadTimeout(TransportError):
    """The server sent nothing for longer than the read timeout."""


class ProtocolError(TransportError):
    """The connection broke while a response was read (reset, truncated chunked body)."""


class LineTooLong(ProtocolError):
    """A watch stream sent more than ``limit`` bytes without a newline; the stream was closed.

    The limit bounds the memory one watch can take (a server or proxy that never ends a line must
    not exhaust it). ``limit`` is the transport's ``max_line_bytes``.
    """

    def __init__(self, message: str, *, limit: int) -> None:
        self.limit = limit
        super().__init__(message)

    def __reduce__(self) -> Any:
        return (_rebuild_line_too_long, (str(self), self.limit))


def _rebuild_line_too_long(message: str, limit: int) -> LineTooLong:
    return LineTooLong(message, limit=limit)


class BodyTooLarge(ProtocolError):
    """A response body (a LIST) was longer than ``limit`` bytes; refused while reading, the stream closed.

    The limit bounds the memory one LIST can take before it is parsed (``Tuning(max_list_bytes=...)``
    for the cache's informers): a server that sends 100 MB where 1 MB was expected is cut off at the
    limit, never read whole first.
    """

    def __init__(self, message: str, *, limit: int) -> None:
        self.limit = limit
        super().__init__(message)

    def __reduce__(self) -> Any:
        return (_rebuild_body_too_large, (str(self), self.limit))


def _rebuild_body_too_large(message: str, limit: int) -> BodyTooLarge:
    return BodyTooLarge(message, limit=limit)


class APIError(CloudcoilError):
    """The API server answered with an error ``Status``.

    Attributes:
        code: the HTTP status code (or the Status' ``code`` for in-band watch errors).
        reason: the Status ``reason`` (``NotFound``, ``Expired``, ...), or ``""``.
        message: the Status ``message``, or a short description of the body.
        status: the raw Status dict (``{}`` when the body was not a Status).
        retry_after: seconds from ``Retry-After`` / ``details.retryAfterSeconds``, if any.
    """

    default_code = 0

    def __init__(
        self,
        message: str = "",
        *,
        code: int | None = None,
        reason: str = "",
        status: Mapping[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.code = code if code is not None else self.default_code
        self.reason = reason
        self.message = message
        self.status: dict[str, Any] = dict(status or {})
        self.retry_after = retry_after
        text = f"{self.code} {reason}: {message}" if reason else f"{self.code}: {message}"
        super().__init__(text)

    def __reduce__(self) -> Any:
        return (
            _rebuild_api_error,
            (type(self), self.message, self.code, self.reason, self.status, self.retry_after),
        )


def _rebuild_api_error(
    cls: type[APIError], message: str, code: int, reason: str, status: dict[str, Any], retry_after: float | None
) -> APIError:
    return cls(message, code=code, reason=reason, status=status, retry_after=retry_after)


class BadRequest(APIError):
    """400 BadRequest (bad selector, bad parameter)."""

    default_code = 400


class InvalidSelector(BadRequest, ValueError):
    """A label or field selector that does not parse, found before any request is sent: the same
    400 BadRequest the API server answers for it (so a cached read and a live one fail alike), and
    a ``ValueError``."""

    def __init__(self, message: str = "", **kwargs: Any) -> None:
        kwargs.setdefault("reason", "BadRequest")
        super().__init__(message, **kwargs)


class Unauthorized(APIError):
    """401 Unauthorized: missing or expired credentials."""

    default_code = 401


class Forbidden(APIError):
    """403 Forbidden: RBAC denies the request."""

    default_code = 403


class ResourceNotFound(APIError):
    """404 NotFound: the object, or the resource type, does not exist."""

    default_code = 404


class NotAcceptable(APIError):
    """406 NotAcceptable."""

    default_code = 406


class ResourceConflict(APIError):
    """409: AlreadyExists on create, Conflict on a stale resourceVersion."""

    default_code = 409


class WatchExpired(APIError):
    """410 Expired/Gone: the resourceVersion or continue token is no longer available; relist."""

    default_code = 410


class UnprocessableEntity(APIError):
    """422 Invalid: the request's options or object failed validation."""

    default_code = 422


class TooManyRequests(APIError):
    """429 TooManyRequests: back off for ``retry_after`` seconds."""

    default_code = 429


class ServerError(APIError):
    """5xx: the server failed; retry with backoff."""

    default_code = 500


class ServerTimeout(ServerError):
    """504 Timeout, including "Too large resource version"."""

    default_code = 504

    @property
    def is_too_large_resource_version(self) -> bool:
        return is_too_large_resource_version(self)


class CacheError(CloudcoilError):
    """Base class of informer cache errors."""


class CacheUnavailableError(CacheError):
    """Strict mode: the cache cannot serve a read. ``reason`` names why."""

    def __init__(self, message: str, *, reason: str = "", last_error: BaseException | None = None):
        self.reason = reason
        self.last_error = last_error
        super().__init__(message)


class IndexUnavailableError(CacheUnavailableError):
    """A list asked an index (``index=(name, value)``) that cannot answer: the kind has no cache
    (or the cache is bypassed), the informer has no index of that name, or the cache refuses the
    read. The API server has no index to fall back to. ``index`` names it."""

    def __init__(
        self, message: str, *, index: str = "", reason: str = "", last_error: BaseException | None = None
    ) -> None:
        self.index = index
        super().__init__(message, reason=reason, last_error=last_error)


class CacheSyncTimeout(CacheError):
    """Informers did not finish their initial sync within ``sync_timeout`` seconds."""


class InheritedAcrossFork(CacheError):
    """An informer's objects were copied into this process by ``fork()`` and its watch is not
    resumed here yet (it resumes at the next use): reads are served as a ``degraded`` informer's,
    within ``max_staleness`` of when the copy was last current. Never a hard failure."""


class ReadOnlyError(CacheError, TypeError):
    """A shared cached object (or a list/dict inside it) was modified; call ``.copy()`` first."""


class WaitTimeout(CloudcoilError):
    """A wait for a condition timed out."""


class AdmissionDenied(CloudcoilError):
    """Raised by an admission handler to refuse the request: answered ``allowed: false`` with this
    ``code`` (400-599), ``reason`` and ``message`` (which kube-apiserver shows to the client)."""

    def __init__(self, message: str, *, code: int = 403, reason: str = "Forbidden") -> None:
        if not isinstance(message, str) or not message:
            raise ValueError("AdmissionDenied needs a non-empty message")
        if isinstance(code, bool) or not isinstance(code, int) or not 400 <= code <= 599:
            raise ValueError(f"AdmissionDenied code must be an integer from 400 to 599, got {code!r}")
        if not isinstance(reason, str):
            raise ValueError(f"AdmissionDenied reason must be a string, got {type(reason).__name__}")
        self.message = message
        self.code = code
        self.reason = reason
        super().__init__(message)

    def __reduce__(self) -> Any:
        return (_rebuild_admission_denied, (self.message, self.code, self.reason))


def _rebuild_admission_denied(message: str, code: int, reason: str) -> AdmissionDenied:
    return AdmissionDenied(message, code=code, reason=reason)


_BY_CODE: dict[int, type[APIError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: ResourceNotFound,
    406: NotAcceptable,
    409: ResourceConflict,
    410: WatchExpired,
    422: UnprocessableEntity,
    429: TooManyRequests,
    504: ServerTimeout,
}


def api_error_from_status(
    code: int,
    status: Mapping[str, Any] | None,
    *,
    retry_after: float | None = None,
    fallback_message: str = "",
) -> APIError:
    """Build the most specific ``APIError`` for an HTTP code and an (optional) Status body."""
    status = status or {}
    message = str(status.get("message") or fallback_message or "")
    reason = str(status.get("reason") or "")
    if retry_after is None:
        details = status.get("details") or {}
        if isinstance(details, Mapping) and details.get("retryAfterSeconds"):
            try:
                retry_after = float(details["retryAfterSeconds"])
            except (TypeError, ValueError):
                retry_after = None
    cls = _BY_CODE.get(code)
    if cls is None:
        cls = ServerError if code >= 500 else APIError
    return cls(message, code=code, reason=reason, status=status, retry_after=retry_after)


def is_expired(exc: BaseException) -> bool:
    """410 Expired/Gone, from an HTTP status or an in-band ERROR event: the caller must relist."""
    return isinstance(exc, WatchExpired) or (isinstance(exc, APIError) and exc.reason in ("Expired", "Gone"))


def is_too_large_resource_version(exc: BaseException) -> bool:
    """504 "Too large resource version": the server is behind our RV (e.g. restored from backup).

    client-go checks the Status cause type, the cause message and the top-level message, because
    servers 1.17-1.18.5 put the marker in different places; so do we.
    """
    if not isinstance(exc, APIError) or exc.code != 504:
        return False
    marker = "Too large resource version"
    if marker in exc.message:
        return True
    details = exc.status.get("details") or {}
    for cause in (details.get("causes") or []) if isinstance(details, Mapping) else []:
        if not isinstance(cause, Mapping):
            continue
        if cause.get("reason") == "ResourceVersionTooLarge" or marker in str(cause.get("message", "")):
            return True
    return False


def is_hard_failure(exc: BaseException) -> bool:
    """401/403/404: retrying soon will not help; a sync wait should fail fast on these."""
    return isinstance(exc, (Unauthorized, Forbidden, ResourceNotFound))


def retry_after_of(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (Retry-After), if it did."""
    return getattr(exc, "retry_after", None) if isinstance(exc, APIError) else None
