"""WATCH for the fake server: option validation, registration and the chunked stream writer."""

from __future__ import annotations

import random
import time
from typing import Any, Mapping, Protocol

from ..machinery import status as _status
from ..machinery.resources import ResourceType
from ..storage.watchers import Watcher, event_line
from .context import ServerContext
from .list import parse_filters, parse_rv, wait_not_too_large
from .partial import PARTIAL, partial_event
from .tables import table_event


class StreamTarget(Protocol):
    """Where a watch response goes: the HTTP handler of the request's connection."""

    def start_stream(self) -> None:
        """Send the 200 status and the headers of a chunked JSON stream."""

    def write_raw(self, data: bytes) -> None:
        """Write bytes to the connection (raises ``OSError`` when it broke)."""

    def abort(self) -> None:
        """End the connection without the terminating chunk."""

    def client_gone(self) -> bool:
        """Whether the client has closed its end (checked while the stream is idle)."""


__all__ = ["serve_watch"]

_MALFORMED = b'{"type":"MODIFIED","object":{"kind":garbage!!\n'
#: How often an idle watch checks that its client is still there (a thread and a socket each
#: until then: the real server notices a closed stream at once).
_CLIENT_CHECK_INTERVAL = 2.0


class _Ended(Exception):
    """The stream is over: ``clean`` says whether it ended with the terminating chunk."""

    def __init__(self, clean: bool) -> None:
        self.clean = clean
        super().__init__("clean" if clean else "abrupt")


def _bool_param(query: Mapping[str, str], name: str) -> bool | None:
    if name not in query:
        return None
    return query[name].lower() in ("true", "1")


def _validate(ctx: ServerContext, query: Mapping[str, str]) -> bool | None:
    """Check watch options (422 like the real server); returns the sendInitialEvents value."""
    if ctx.settings.watch_list_unknown:  # a server before the parameters existed: a plain watch
        return None
    send_initial = _bool_param(query, "sendInitialEvents")
    rvm = query.get("resourceVersionMatch", "")
    if send_initial is not None and not ctx.settings.watch_list_enabled:
        raise _status.invalid_options(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
        )
    if rvm and send_initial is None:
        raise _status.invalid_options(
            "resourceVersionMatch",
            "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        )
    if send_initial is not None:
        if not rvm:
            raise _status.invalid_options(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )
        if rvm != "NotOlderThan":
            raise _status.invalid_options(
                "resourceVersionMatch",
                f'"{rvm}": supported values: "NotOlderThan"',
                cause_reason="FieldValueNotSupported",
                prefix="Unsupported value",
            )
    return send_initial


def _timeout(ctx: ServerContext, query: Mapping[str, str]) -> float:
    text = query.get("timeoutSeconds", "")
    if not text:
        low, high = ctx.settings.watch_timeout_range
        return random.uniform(low, high)
    try:
        value = float(text)
    except ValueError:
        raise _status.bad_request(f'invalid timeoutSeconds "{text}": must be a number') from None
    if value <= 0:  # like the apiserver: 0 means "pick the default"
        low, high = ctx.settings.watch_timeout_range
        return random.uniform(low, high)
    return value


def serve_watch(
    out: StreamTarget,
    ctx: ServerContext,
    rtype: ResourceType,
    namespace: str | None,
    name: str | None,
    query: Mapping[str, str],
    *,
    table: bool = False,
    partial: str | None = None,
) -> None:
    """Answer a watch request: validate, register, then stream until timeout, fault or stop
    (``table``: events carry server-side tables; ``partial``, a meta.k8s.io version: their
    objects are PartialObjectMetadata)."""
    send_initial = _validate(ctx, query)
    filters = parse_filters(rtype, namespace, query, name)
    timeout = _timeout(ctx, query)
    rv_text = query.get("resourceVersion", "")
    legacy = rv_text in ("", "0")
    since = None if legacy else parse_rv(rv_text)
    # A resourceVersion the server has not reached: kube-apiserver's watch cache accepts the watch and
    # sends nothing at or below it, events nor bookmarks, until the revision passes it ("silent"; after
    # an etcd restore that is never); "too_large" waits briefly for it, then answers 504.
    ahead = ctx.settings.future_watch_mode == "silent"
    if since is not None and not ahead:
        wait_not_too_large(ctx, since)
    initial = send_initial if send_initial is not None else legacy
    allow_bookmarks = _bool_param(query, "allowWatchBookmarks") is True
    end_bookmark = send_initial is True or (
        ctx.settings.watch_list_defaulting and legacy and send_initial is None and allow_bookmarks
    )
    watcher = Watcher(rtype, namespace, filters.label_match, filters.field_match)
    store = ctx.store
    try:
        store.add_watcher(
            watcher, initial=initial, since=None if initial else since, end_marker=end_bookmark, ahead=ahead
        )
    except _status.StatusError as exc:
        if ctx.settings.expired_watch_mode == "http" or exc.code != 410:
            raise
        stream = _Stream(out, ctx, watcher, allow_bookmarks=False, table=table, partial=partial)
        stream.start()
        stream.finish_with_error(exc.body)
        return
    try:
        ctx.watches.started(watcher)
        stream = _Stream(out, ctx, watcher, allow_bookmarks=allow_bookmarks, table=table, partial=partial)
        stream.start()
        stream.run(timeout)
    finally:
        store.remove_watcher(watcher)
        ctx.watches.ended(watcher)


class _Stream:
    """Writes one watch response: a chunk per event, bookmarks, faults, then its end."""

    def __init__(
        self,
        out: StreamTarget,
        ctx: ServerContext,
        watcher: Watcher,
        *,
        allow_bookmarks: bool,
        table: bool,
        partial: str | None = None,
    ) -> None:
        self.out = out
        self.ctx = ctx
        self.watcher = watcher
        self.allow_bookmarks = allow_bookmarks
        rtype = watcher.rtype
        self._bookmark_head = {"kind": rtype.kind, "apiVersion": rtype.api_version}
        if partial is not None:
            self._bookmark_head = {"kind": PARTIAL, "apiVersion": f"meta.k8s.io/{partial}"}
        self.table = table
        self.partial = partial

    def start(self) -> None:
        self.out.start_stream()

    # -- writing -------------------------------------------------------------------------------

    def _send(self, data: bytes) -> None:
        try:
            self.out.write_raw(data)
        except OSError:
            raise _Ended(clean=False) from None

    def _write_lines(self, lines: list[bytes]) -> None:
        faults = self.ctx.faults
        size, pause = faults.split_bytes, faults.split_pause
        if not size:
            self._send(b"".join(b"%x\r\n%s\r\n" % (len(line), line) for line in lines))
            return
        for line in lines:
            for i in range(0, len(line), size):
                piece = line[i : i + size]
                self._send(b"%x\r\n%s\r\n" % (len(piece), piece))
                if pause and self.ctx.stopping.wait(pause):
                    raise _Ended(clean=False)

    def _bookmark_line(self, rv: int, *, initial_end: bool = False) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        return event_line("BOOKMARK", {**self._bookmark_head, "metadata": meta})

    def _write_items(self, items: list[tuple[str, Any]]) -> None:
        lines: list[bytes] = []
        for kind, payload in items:
            if kind == "event":
                if self.table:
                    payload = table_event(payload, self.watcher.rtype)
                elif self.partial is not None:
                    payload = partial_event(payload, self.partial)
                lines.append(payload)
            elif kind == "initial-end":
                lines.append(self._bookmark_line(payload, initial_end=True))
            elif kind == "malformed":
                lines.append(_MALFORMED)
            elif kind == "error":
                lines.append(event_line("ERROR", payload))
                self._write_lines(lines)
                raise _Ended(clean=True)
        if lines:
            self._write_lines(lines)

    def _bookmark(self) -> None:
        faults = self.ctx.faults
        items, rv = self.ctx.store.drain_for_bookmark(self.watcher, lambda: faults.stalled)
        self._write_items(items)
        if rv is None:
            return
        if self.allow_bookmarks:
            self._write_lines([self._bookmark_line(rv)])

    def _cut(self, mid_object: bool) -> None:
        if mid_object:
            with self.watcher.cond:
                pending = next((p for k, p in self.watcher.items if k == "event"), None)
            line = pending or self._bookmark_line(self.ctx.store.revision)
            half = line[: max(1, len(line) // 2)]
            self._send(b"%x\r\n%s\r\n" % (len(half), half))
        raise _Ended(clean=False)

    # -- the loop ------------------------------------------------------------------------------

    def finish_with_error(self, status: dict[str, Any]) -> None:
        self._finish(lambda: self._write_items([("error", status)]))

    def run(self, timeout: float) -> None:
        self._finish(lambda: self._loop(timeout))

    def _finish(self, body: Any) -> None:
        try:
            body()
        except _Ended as end:
            if end.clean:
                try:
                    self.out.write_raw(b"0\r\n\r\n")
                except OSError:
                    end = _Ended(clean=False)
            if not end.clean:
                self.out.abort()

    def _loop(self, timeout: float) -> None:
        interval = self.ctx.settings.bookmark_interval
        deadline = time.monotonic() + timeout
        next_bookmark = time.monotonic() + interval if self.allow_bookmarks else float("inf")
        next_check = time.monotonic() + _CLIENT_CHECK_INTERVAL
        while True:
            command, batch = self._wait(min(deadline, next_bookmark, next_check))
            if command is not None:
                self._cut(mid_object=bool(command[1]))
            self._write_items(batch)
            now = time.monotonic()
            if now >= deadline:
                self._bookmark()
                raise _Ended(clean=True)
            if now >= next_bookmark:
                self._bookmark()
                next_bookmark = now + interval
            if now >= next_check:
                if self.out.client_gone():
                    raise _Ended(clean=False)
                next_check = now + _CLIENT_CHECK_INTERVAL

    def _wait(self, until: float) -> tuple[Any, list[tuple[str, Any]]]:
        """An urgent command, or the queued items, or nothing once ``until`` (monotonic) passed."""
        w, faults = self.watcher, self.ctx.faults
        with w.cond:
            while True:
                if w.closed:
                    raise _Ended(clean=False)
                if w.urgent:
                    return w.urgent.popleft(), []
                if faults.stalled:
                    w.cond.wait()
                    continue
                if w.items:
                    batch = list(w.items)
                    w.items.clear()
                    return None, batch
                now = time.monotonic()
                if now >= until:
                    return None, []
                w.cond.wait(until - now)
