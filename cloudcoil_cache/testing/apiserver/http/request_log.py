"""The fake server's request log: every request as a ``RecordedRequest``, with a wait helper."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ....errors import WaitTimeout

__all__ = ["RecordedRequest", "RequestLog"]

_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake server received.

    ``query`` keeps the first value of each parameter; ``verb`` is the Kubernetes verb
    (get/list/watch/create/update/patch/delete/deletecollection); ``time`` is ``time.monotonic()``;
    ``body`` is the raw request body; ``user`` the authenticated user (a client certificate's CN,
    ``"token-user"`` for the expected bearer token, ``""`` when unauthenticated).
    It is logged when it arrives; ``served`` is set once the server has finished with it (answered,
    failed, or the connection broke): a write's effect is in the store from then on.
    Its repr hides credential headers and the body (the fields themselves keep them for assertions).
    """

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str] = field(repr=False)
    time: float
    verb: str
    body: bytes = field(default=b"", repr=False)
    user: str = ""
    served: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)
    #: the client's ``(host, port)``: which connection, so which process, sent it
    client: tuple[str, int] = ("", 0)

    def json(self) -> Any:
        """The body parsed as JSON (``None`` when empty)."""
        return json.loads(self.body) if self.body.strip() else None

    def __repr__(self) -> str:
        shown = {k: ("<redacted>" if k.lower() in _SECRET_HEADERS else v) for k, v in self.headers.items()}
        return (
            f"RecordedRequest(method={self.method!r}, path={self.path!r}, query={self.query!r}, "
            f"verb={self.verb!r}, user={self.user!r}, time={self.time:.3f}, headers={shown!r})"
        )


class RequestLog:
    """Thread-safe append-only list of requests with a Condition to wait on."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._items: list[RecordedRequest] = []

    def record(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        headers: dict[str, str],
        verb: str,
        body: bytes = b"",
        user: str = "",
        client: tuple[str, int] = ("", 0),
    ) -> RecordedRequest:
        req = RecordedRequest(method, path, query, headers, time.monotonic(), verb, body, user, client=client)
        with self._cond:
            self._items.append(req)
            self._cond.notify_all()
        return req

    def snapshot(self) -> list[RecordedRequest]:
        with self._cond:
            return list(self._items)

    def clear(self) -> None:
        with self._cond:
            self._items.clear()

    def wait_for(
        self, predicate: Callable[[RecordedRequest], bool], timeout: float, served: bool = False
    ) -> RecordedRequest:
        """The first recorded request (already logged or arriving within ``timeout``) matching;
        with ``served``, once the server has also finished with it."""
        deadline = time.monotonic() + timeout
        found = self._wait_arrived(predicate, timeout, deadline)
        if served and not found.served.wait(max(0.0, deadline - time.monotonic())):
            raise WaitTimeout(f"{found.method} {found.path} arrived but was not served within {timeout} s")
        return found

    def _wait_arrived(
        self, predicate: Callable[[RecordedRequest], bool], timeout: float, deadline: float
    ) -> RecordedRequest:
        seen = 0
        with self._cond:
            while True:
                for req in self._items[seen:]:
                    if predicate(req):
                        return req
                seen = len(self._items)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise WaitTimeout(f"no matching request arrived within {timeout} s ({seen} requests recorded)")
                self._cond.wait(remaining)
