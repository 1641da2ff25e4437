"""One admission request answered: the HTTP status contract, the handler's outcome as a review, its metrics."""

from __future__ import annotations

import contextvars
import inspect
import logging
import re
import threading
from typing import Any, Callable, Mapping

from cloudcoil_cache._clock import Clock
from cloudcoil_cache.admission._exchange import Answer, Exchange
from cloudcoil_cache.admission._metrics import AdmissionMetrics
from cloudcoil_cache.admission._patch import mutation_patch
from cloudcoil_cache.admission._review import BadReview, Review, http_error, parse_review, review_answer
from cloudcoil_cache.admission._routes import Route
from cloudcoil_cache.admission._run import Abandoned, Busy, Cancelled, HandlerRunner
from cloudcoil_cache.admission._types import AdmissionRequest, Notes, UserInfo
from cloudcoil_cache.errors import AdmissionDenied, DecodeError

__all__ = ["Answerer", "deadline_of"]

log = logging.getLogger("cloudcoil_cache.admission")

#: Taken off the deadline so that our 504 reaches kube-apiserver before its own deadline.
DEADLINE_MARGIN = 0.25
_GO_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def _go_duration(text: str) -> float | None:
    """Seconds of a Go duration (``10s``, ``1m30s``, ``1.5s``), None when it is not one."""
    parts = _GO_DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNITS[u] for n, u in parts)


def deadline_of(route: Route, query: Mapping[str, str]) -> float:
    """Seconds the handler gets: min(the route's timeoutSeconds, kube-apiserver's ``?timeout=``) − 250 ms."""
    seconds = float(route.timeout_seconds)
    asked = _go_duration(query.get("timeout", ""))
    if asked is not None and asked > 0:
        seconds = min(seconds, asked)
    return max(seconds - DEADLINE_MARGIN, 0.05)


def _json_content(headers: Mapping[str, str]) -> bool:
    return headers.get("content-type", "").split(";")[0].strip().lower() == "application/json"


def _failure(exc: BaseException) -> bytes:
    return http_error(f"Admission webhook failed: {type(exc).__name__}")


class Answerer:
    """Answers exchanges for a set of routes (the webhook's ``answer``)."""

    def __init__(
        self,
        routes: Callable[[], Mapping[str, Route]],
        runner: HandlerRunner,
        metrics: AdmissionMetrics,
        clock: Clock,
        max_body_bytes: int,
        request_extras: Callable[[], dict[str, Any]],
        context: Callable[[], contextvars.Context],
    ) -> None:
        self._routes = routes
        self._runner = runner
        self._metrics = metrics
        self._clock = clock
        self._max_body_bytes = max_body_bytes
        self._extras = request_extras
        self._context = context

    def answer(self, exchange: Exchange, disconnected: threading.Event) -> Answer:
        if exchange.path == "/healthz" and exchange.method in ("GET", "HEAD"):
            return Answer(200, b"ok", "text/plain; charset=utf-8")
        route = self._routes().get(exchange.path)
        if route is None:
            return Answer(404, http_error("Not Found"))
        self._metrics.request_started(route.path)
        started = self._clock.now()
        answer = Answer(500, _failure(RuntimeError()))
        try:
            answer = self._checked(route, exchange, disconnected)
        finally:
            self._metrics.request_finished(route.path, answer.status, self._clock.now() - started)
        return answer

    def _checked(self, route: Route, exchange: Exchange, disconnected: threading.Event) -> Answer:
        if exchange.method != "POST":
            return Answer(405, http_error("Method Not Allowed"), headers=(("Allow", "POST"),))
        if not _json_content(exchange.headers):
            return Answer(415, http_error("Unsupported Media Type: expected application/json"))
        if len(exchange.body) > self._max_body_bytes:
            return Answer(413, http_error(f"Request Entity Too Large: over {self._max_body_bytes} bytes"))
        return self._review(route, exchange, disconnected)

    def _review(self, route: Route, exchange: Exchange, disconnected: threading.Event) -> Answer:
        try:
            review = parse_review(exchange.body, route)
        except BadReview as exc:
            return Answer(400, http_error(f"Bad Request: {exc}"))
        if not self._runner.started:
            return Answer(503, http_error("Service Unavailable: the webhook is not started"))
        notes = Notes()
        try:
            request = self._request(route, review, notes)
        except DecodeError as exc:
            self._metrics.decision(route.path, "invalid")
            return self._invalid(review, route, exc)
        try:
            result = self._runner.call(
                route.handler,
                request,
                is_async=route.is_async,
                timeout=deadline_of(route, exchange.query),
                disconnected=disconnected,
                context=self._context(),
            )
        except AdmissionDenied as exc:
            self._metrics.decision(route.path, "denied")
            warnings, audit = notes.snapshot()
            status = {"status": "Failure", "code": exc.code, "reason": exc.reason, "message": exc.message}
            return Answer(200, review_answer(review.uid, allowed=False, status=status, warnings=warnings, audit=audit))
        except (Abandoned, Cancelled, Busy) as exc:
            return self._not_answered(route, exc)
        except Exception as exc:  # a handler's failure: failurePolicy decides; its text never leaves
            return self._error(route, exc)
        return self._allowed(route, review, request, result, notes)

    def _request(self, route: Route, review: Review, notes: Notes) -> AdmissionRequest[Any]:
        target = route.target
        return AdmissionRequest(
            uid=review.uid,
            operation=review.operation,
            resource=None if review.object is None else target.from_dict(review.object),
            old_resource=None if review.old_object is None else target.from_dict(review.old_object),
            name=review.name,
            namespace=review.namespace,
            subresource=review.subresource,
            dry_run=review.dry_run,
            user_info=UserInfo.from_wire(review.user_info),
            options=review.options,
            raw_object=review.object,
            raw_old_object=review.old_object,
            notes=notes,
            **self._extras(),
        )

    def _invalid(self, review: Review, route: Route, exc: DecodeError) -> Answer:
        message = f"{route.target.kind} is invalid: {exc}"
        status = {
            "status": "Failure",
            "code": 422,
            "reason": "Invalid",
            "message": message,
            "details": {
                "name": review.name,
                "kind": route.target.kind,
                "causes": [{"reason": "FieldValueInvalid", "message": str(exc)}],
            },
        }
        return Answer(200, review_answer(review.uid, allowed=False, status=status))

    def _not_answered(self, route: Route, exc: Exception) -> Answer:
        if isinstance(exc, Busy):
            self._metrics.decision(route.path, "error")
            return Answer(503, http_error("Service Unavailable: every admission handler is busy"))
        self._metrics.decision(route.path, "timeout")
        if isinstance(exc, Cancelled):
            return Answer(499, http_error("Client Closed Request"))
        log.warning("admission %s: the handler did not answer in time", route.path)
        return Answer(504, http_error("Gateway Timeout: the admission handler did not answer in time"))

    def _error(self, route: Route, exc: Exception) -> Answer:
        self._metrics.decision(route.path, "error")
        self._metrics.panic()
        log.error("admission %s: the handler failed", route.path, exc_info=exc)
        return Answer(500, _failure(exc))

    def _allowed(
        self, route: Route, review: Review, request: AdmissionRequest[Any], result: Any, notes: Notes
    ) -> Answer:
        if inspect.isawaitable(result):  # a sync wrapper around a coroutine function: never awaited here
            if inspect.iscoroutine(result):
                result.close()
            return self._error(route, TypeError("a sync handler returned an awaitable: declare it async def"))
        patch: list[dict[str, Any]] = []
        if route.kind == "mutate" and result is not None and review.object is not None:
            # the kind's model class: a class-form target (``class Checked(ConfigMap)`` holding the
            # handler) decodes to the kind it subclasses, and ``request.resource`` is one
            if not isinstance(result, getattr(route.target, "__editable_class__", route.target)):
                return self._error(route, TypeError(f"a mutator returned {type(result).__name__}"))
            try:
                before = route.target.from_dict(review.object).to_dict()
                patch = mutation_patch(before, result.to_dict(), subresource=route.subresource)
            except ValueError as exc:
                return self._error(route, exc)
        self._metrics.decision(route.path, "patched" if patch else "allowed")
        warnings, audit = notes.snapshot()
        if notes.dropped:
            log.warning("admission %s: %d warnings over the limit were dropped", route.path, notes.dropped)
        return Answer(200, review_answer(review.uid, allowed=True, patch=patch, warnings=warnings, audit=audit))
