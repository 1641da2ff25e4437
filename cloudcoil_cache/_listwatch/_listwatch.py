"""ListWatch: LIST pages and WATCH streams of one resource class in one scope, decoded into objects."""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Generator, Generic, Iterator, Protocol, TypeVar, runtime_checkable

import attrs

from cloudcoil_cache import _gc, _json
from cloudcoil_cache._http._interrupt import Interrupter
from cloudcoil_cache._listwatch._admit import Admit, identity_check
from cloudcoil_cache._listwatch._decode import Refused, WatchEvent, decode_event
from cloudcoil_cache._listwatch._request import collection_path, list_params, watch_params
from cloudcoil_cache._listwatch._split import ListSplitter
from cloudcoil_cache.errors import DecodeError, ProtocolError

__all__ = [
    "METADATA_LIST_ACCEPT",
    "METADATA_WATCH_ACCEPT",
    "ListPage",
    "ListWatch",
    "ListerWatcher",
    "ParsedPage",
    "PrefetchingListerWatcher",
    "StreamingListerWatcher",
    "WatchStream",
]

T = TypeVar("T")

log = logging.getLogger(__name__)

#: The Accept of a metadata-only LIST and WATCH (client-go's ``metadata`` client, JSON only): kube-apiserver
#: answers a PartialObjectMetadataList (a watch: events of PartialObjectMetadata); the plain JSON last,
#: for a server without them (whole objects, of which only the metadata is kept).
METADATA_LIST_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
METADATA_WATCH_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

#: Refusals logged at WARNING per ListWatch; later ones at DEBUG (a hostile server must not flood the log).
_LOUD_REFUSALS = 5


class _LineStream(Protocol):
    def __iter__(self) -> Iterator[bytes]: ...
    def close(self) -> None: ...


class _Transport(Protocol):
    """The part of ``_http.Transport`` this layer uses."""

    def request(self, method: str, path: str, *, params: Any = None, **kw: Any) -> Any: ...
    def stream(
        self,
        path: str,
        *,
        params: Any = None,
        read_timeout: float | None = None,
        interrupter: Any = None,
        line_timeout: float | None = None,
        headers: Any = None,
    ) -> Any: ...


@attrs.frozen(slots=True)
class ListPage(Generic[T]):
    """One page of a LIST: its objects, the snapshot's resourceVersion, the continue token, the
    server's ``remainingItemCount`` (None when it sent none), and the length of the response body
    in bytes (0: not known), from which the reflector sizes its next page."""

    items: list[T]
    resource_version: str
    continue_: str | None
    remaining_item_count: int | None = None
    body_bytes: int = 0


@attrs.define(slots=True)
class ParsedPage:
    """One LIST body parsed but not yet structured (``ListWatch.parse_page``): what decides the
    next page's request is known before the items are structured."""

    raw_items: list[Any]
    resource_version: str
    continue_: str | None
    remaining_item_count: int | None
    body_bytes: int

    @property
    def count(self) -> int:
        """Items in the page (after refusals)."""
        return len(self.raw_items) if self.raw_items.__class__ is list else 0


class WatchStream(Generic[T]):
    """An open watch: iterate it for ``WatchEvent``s; ``close()`` may be called from any thread."""

    def __init__(
        self,
        lines: _LineStream,
        structure: Callable[[dict[str, Any]], T],
        on_close: Callable[[], None] | None = None,
        admit: Admit | None = None,
        on_refused: Callable[[str], None] | None = None,
    ) -> None:
        self._lines = lines
        self._structure = structure
        self._on_close = on_close
        self._admit = admit
        self._on_refused = on_refused or (lambda reason: None)
        self._closed = threading.Event()

    def __iter__(self) -> Iterator[WatchEvent[T]]:
        structure, admit = self._structure, self._admit
        if admit is None:
            for line in self._lines:
                yield decode_event(line, structure)
            return
        for line in self._lines:
            try:
                event = decode_event(line, structure, admit)
            except Refused as refused:  # skipped: neither stored nor taken as the stream's position
                self._on_refused(refused.reason)
                continue
            yield event

    def close(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            self._lines.close()
            if self._on_close is not None:
                self._on_close()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def __enter__(self) -> WatchStream[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ListerWatcher(Protocol[T]):
    """What a reflector needs from its source (the real ``ListWatch``, or a test double).

    ``interrupt()`` may be called from any thread: it aborts the request in flight (a LIST being
    read, or an open watch) and makes every later request fail at once.
    """

    def interrupt(self) -> None: ...

    def list_page(self, *, resource_version: str | None, limit: int | None, continue_: str | None) -> ListPage[T]: ...

    def watch(
        self,
        *,
        resource_version: str,
        timeout_seconds: int,
        read_timeout: float | None,
        allow_bookmarks: bool = True,
        line_timeout: float | None = None,
        send_initial_events: bool = False,
    ) -> WatchStream[T]: ...


@runtime_checkable
class PrefetchingListerWatcher(ListerWatcher[T], Protocol):
    """A source whose LIST pages split into request, parse and structuring (the real ``ListWatch``):
    the reflector requests the next page while it structures this one."""

    def fetch_page(self, *, resource_version: str | None, limit: int | None, continue_: str | None) -> bytes: ...
    def parse_page(self, raw: bytes) -> ParsedPage: ...
    def structure_page(self, parsed: ParsedPage) -> ListPage[T]: ...


@runtime_checkable
class StreamingListerWatcher(ListerWatcher[T], Protocol):
    """A source that decodes an unpaginated LIST while it reads it (the real ``ListWatch``)."""

    def stream_list(self, *, resource_version: str | None, batch_bytes: int) -> Generator[ParsedPage, None, None]: ...
    def structure_page(self, parsed: ParsedPage) -> ListPage[T]: ...


class ListWatch(Generic[T]):
    """LIST and WATCH one resource class, in one namespace (or all), with fixed server-side selectors."""

    def __init__(
        self,
        transport: _Transport,
        cls: Any,
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        structure: Callable[[dict[str, Any]], T] | None = None,
        refuse_mismatched: bool = False,
        line_timeouts: bool = False,
        max_list_bytes: int | None = None,
        metadata_only: bool = False,
    ) -> None:
        """``metadata_only``: LIST and WATCH ask for ``PartialObjectMetadata`` (the ``Accept`` of
        ``METADATA_LIST_ACCEPT`` / ``METADATA_WATCH_ACCEPT``) and admit it; ``refuse_mismatched``:
        skip (and count in ``refused``) objects whose kind or identity does not match this kind and
        scope (``_admit``); ``line_timeouts``: a watch's read timeout also bounds the wait for a
        complete line (a trickling stream is a stall); ``max_list_bytes``: a LIST body longer
        than this is refused while read (``errors.BodyTooLarge``)."""
        self.transport = transport
        self.cls = cls
        self.namespace = namespace if cls.namespaced else None
        self.label_selector = label_selector or ""
        self.field_selector = field_selector or ""
        self.path = collection_path(cls, self.namespace)
        self._structure: Callable[[dict[str, Any]], T] = structure or cls.from_dict_sealed
        self._lock = threading.Lock()  # guards _inflight and _interrupted
        self._inflight: _LineStream | None = None
        self._interrupted = False
        self._interrupter = Interrupter()  # aborts a request still waiting for its headers
        self.metadata_only = metadata_only
        self._admit: Admit | None = (
            identity_check(cls, self.namespace, metadata_only=metadata_only) if refuse_mismatched else None
        )
        self._line_timeouts = line_timeouts
        self.max_list_bytes = max_list_bytes
        #: objects refused by the identity check (LIST items and watch events), for status()
        self.refused = 0

    def interrupt(self) -> None:
        """Abort the request in flight and refuse later ones (the reflector is stopping)."""
        with self._lock:
            self._interrupted = True
            inflight = self._inflight
        self._interrupter.interrupt()
        if inflight is not None:
            inflight.close()

    def _refuse(self, reason: str) -> None:
        self.refused += 1  # only the reflector thread counts (LIST and watch run on it)
        level = logging.WARNING if self.refused <= _LOUD_REFUSALS else logging.DEBUG
        log.log(level, "GET %s: %s; skipped (%d refused so far)", self.path, reason, self.refused)

    def _open(
        self,
        params: dict[str, str],
        read_timeout: float | None,
        *,
        watch: bool = False,
        line_timeout: float | None = None,
    ) -> Any:
        """Open a streaming GET registered for ``interrupt()``; the caller must ``_done()`` it."""
        if self._interrupted:
            raise ProtocolError(f"GET {self.path}: interrupted")
        extra: dict[str, Any] = {"line_timeout": line_timeout} if watch and self._line_timeouts else {}
        if self.metadata_only:
            extra["headers"] = {"Accept": METADATA_WATCH_ACCEPT if watch else METADATA_LIST_ACCEPT}
        try:
            stream = self.transport.stream(
                self.path, params=params, read_timeout=read_timeout, interrupter=self._interrupter, **extra
            )
        finally:
            self._interrupter.detach()
        with self._lock:
            if not self._interrupted:
                self._inflight = stream
                return stream
        stream.close()
        raise ProtocolError(f"GET {self.path}: interrupted")

    def _done(self, stream: Any) -> None:
        with self._lock:
            if self._inflight is stream:
                self._inflight = None

    def list_page(self, *, resource_version: str | None, limit: int | None, continue_: str | None) -> ListPage[T]:
        """One LIST request: ``fetch_page``, then ``parse_page`` and ``structure_page``."""
        raw = self.fetch_page(resource_version=resource_version, limit=limit, continue_=continue_)
        with _gc.paused():  # parsing + structuring a page: see _gc for the numbers
            parsed = self.parse_page(raw)
            del raw
            return self.structure_page(parsed)

    def _list_params(self, resource_version: str | None, limit: int | None, continue_: str | None) -> dict[str, str]:
        params = list_params(
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            resource_version=resource_version,
            limit=limit,
            continue_=continue_,
        )
        if limit and resource_version not in (None, "", "0"):
            # A relist from the last RV, paginated: "not older than" (with a limit and no match
            # the API server would read exactly that RV, from etcd, often 410 by now).
            params["resourceVersionMatch"] = "NotOlderThan"
        return params

    def fetch_page(self, *, resource_version: str | None, limit: int | None, continue_: str | None) -> bytes:
        """The body of one LIST request, unparsed (may run on another thread than the parse: at
        most one request of a ListWatch is in flight at a time). A continued page carries no
        resourceVersion (kubernetes#85221)."""
        stream = self._open(self._list_params(resource_version, limit, continue_), None)
        try:
            raw: bytes = stream.read_all(self.max_list_bytes) if self.max_list_bytes is not None else stream.read_all()
            return raw
        finally:
            self._done(stream)
            stream.close()

    def parse_page(self, raw: bytes) -> ParsedPage:
        """Parse a LIST body (collection paused by the caller): its metadata, and its items still
        as JSON, the refused ones (``refuse_mismatched``) left out."""
        body = _json.loads(raw)
        try:
            metadata = body.get("metadata") or {}
            raw_items = body.get("items") or []
        except AttributeError as exc:
            raise DecodeError(f"LIST {self.path}: the response is not a list object") from exc
        return self._parsed(raw_items, metadata, len(raw))

    def _parsed(self, raw_items: Any, metadata: Any, body_bytes: int) -> ParsedPage:
        """A ``ParsedPage`` of ``raw_items`` (the refused ones left out) and the list's ``metadata``."""
        admit = self._admit
        if admit is not None and raw_items.__class__ is list:
            admitted = []
            for item in raw_items:
                reason = admit(item) if item.__class__ is dict else None  # not an object: a DecodeError later
                if reason is None:
                    admitted.append(item)
                else:
                    self._refuse(f"list item refused: {reason}")
            raw_items = admitted
        if metadata.__class__ is not dict:
            raise DecodeError(f"LIST {self.path}: the list's metadata is not an object")
        remaining = metadata.get("remainingItemCount")
        return ParsedPage(
            raw_items,
            str(metadata.get("resourceVersion") or ""),
            metadata.get("continue") or None,
            remaining if remaining.__class__ is int and remaining >= 0 else None,
            body_bytes,
        )

    def stream_list(self, *, resource_version: str | None, batch_bytes: int) -> Generator[ParsedPage, None, None]:
        """One unpaginated LIST, decoded while it is read (``_split``): ``ParsedPage``s of its items
        in order, each about ``batch_bytes`` of JSON, parsed as soon as it has arrived; only the
        last carries the list's metadata (resourceVersion, continue). Collection should be paused
        by the caller around each ``next()``. Closing the iterator early closes the request.
        ``max_list_bytes`` bounds the bytes held unparsed, not the body (it is never held whole).

        Raises:
            DecodeError: the body is not a list object; BodyTooLarge: see ``ListSplitter``.
        """
        where = f"LIST {self.path}"
        splitter = ListSplitter(where, batch_bytes=batch_bytes, max_buffer=self.max_list_bytes)
        stream = self._open(self._list_params(resource_version, None, None), None)
        try:
            for piece in stream.iter_body():
                if splitter.feed(piece):
                    # not kept here: structure_page frees the raw items as soon as they are structured
                    yield self._parsed(splitter.take(), {}, 0)
            items, rest = splitter.finish()
        finally:
            self._done(stream)
            stream.close()
        yield self._parsed(items, rest.get("metadata") or {}, splitter.bytes_read)

    def structure_page(self, parsed: ParsedPage) -> ListPage[T]:
        """The page's objects, structured (collection paused by the caller)."""
        structure = self._structure
        try:
            items = [structure(item) for item in parsed.raw_items]
        except Exception as exc:
            raise DecodeError(f"LIST {self.path}: cannot structure an item: {exc}") from exc
        page = ListPage(
            items, parsed.resource_version, parsed.continue_, parsed.remaining_item_count, parsed.body_bytes
        )
        # Freed now, before the collection that re-enabling triggers walks it, and one item at a time:
        # freeing a whole batch's JSON is one C call that holds the GIL (an unchanged relisted item is
        # dropped whole: no part of it is kept).
        raw, parsed.raw_items = parsed.raw_items, []
        pop = raw.pop
        while raw:
            pop()
        return page

    def watch(
        self,
        *,
        resource_version: str,
        timeout_seconds: int,
        read_timeout: float | None,
        allow_bookmarks: bool = True,
        line_timeout: float | None = None,
        send_initial_events: bool = False,
    ) -> WatchStream[T]:
        """Open a WATCH from ``resource_version`` (events strictly after it); with
        ``send_initial_events``, a streaming list (see ``watch_params``).

        ``read_timeout`` bounds a socket read that gets nothing; with ``line_timeouts``,
        ``line_timeout`` (default: ``read_timeout``) bounds how long a started line may take to
        complete (a trickle is a stall).
        """
        params = watch_params(
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            resource_version=resource_version,
            timeout_seconds=timeout_seconds,
            allow_bookmarks=allow_bookmarks,
            send_initial_events=send_initial_events,
        )
        lines = self._open(
            params, read_timeout, watch=True, line_timeout=read_timeout if line_timeout is None else line_timeout
        )
        return WatchStream(
            lines, self._structure, on_close=lambda: self._done(lines), admit=self._admit, on_refused=self._refuse
        )
