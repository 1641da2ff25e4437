"""``AdmissionWebhook``: the registered handlers, their lifecycle, and the ``Endpoint`` the HTTPS server calls."""

from __future__ import annotations

import contextvars
import logging
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, TypeVar

from cloudcoil_cache._clock import ClockLike, as_clock
from cloudcoil_cache.admission._answer import Answerer
from cloudcoil_cache.admission._asgi import Receive, Scope, Send, serve_asgi
from cloudcoil_cache.admission._cached import AdmissionCache
from cloudcoil_cache.admission._exchange import Answer, Endpoint, Exchange
from cloudcoil_cache.admission._install import Installation, wait_effective
from cloudcoil_cache.admission._install import uninstall as uninstall_configurations
from cloudcoil_cache.admission._metrics import AdmissionMetrics
from cloudcoil_cache.admission._registrations import client_config, configuration_documents
from cloudcoil_cache.admission._routes import Route, RouteKind, make_route, marked
from cloudcoil_cache.admission._run import HandlerRunner
from cloudcoil_cache.client import Config

__all__ = ["AdmissionWebhook"]

log = logging.getLogger("cloudcoil_cache.admission")

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024


class AdmissionWebhook:
    """Mutating and validating handlers (sync or async) served by a ``WebhookServer`` (or ASGI).

    A handler takes one ``AdmissionRequest``: a validator returns None (allowed) or raises
    ``AdmissionDenied``; a mutator returns an edited resource (answered as a JSON Patch of what it
    changed) or None. ``request.cached(Kind)`` reads ``config``'s cache (``Cache(resources=[...])``).
    Sync handlers run on at most ``max_concurrency`` threads, coroutines on one event-loop thread.
    """

    def __init__(
        self,
        *,
        config: Config | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_concurrency: int = 64,
        clock: ClockLike | None = None,
    ) -> None:
        if config is not None and not isinstance(config, Config):
            raise TypeError(f"config: expected a cloudcoil_cache.client.Config, got {type(config).__name__}")
        for option, value in (("max_body_bytes", max_body_bytes), ("max_concurrency", max_concurrency)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{option}={value!r}: expected a positive integer")
        self.config = config
        self._max_body_bytes = max_body_bytes
        self.max_concurrency = max_concurrency
        self._clock = as_clock(clock)
        self._metrics = AdmissionMetrics()
        self._cache = AdmissionCache(config, self._metrics.cached_read)
        self._routes: dict[str, Route] = {}
        self._lock = threading.Lock()  # guards _routes
        self._lifecycle = threading.Lock()  # one start/stop at a time (held while the cache syncs)
        self._context: contextvars.Context | None = None
        self._runner = HandlerRunner(
            "cloudcoil-admission", max_concurrency, self._clock, self._metrics.handler_abandoned
        )
        self._answerer = Answerer(
            lambda: self._routes,
            self._runner,
            self._metrics,
            self._clock,
            max_body_bytes,
            self._request_extras,
            self._handler_context,
        )

    def __repr__(self) -> str:
        return f"<AdmissionWebhook {len(self._routes)} route(s)>"

    # ------------------------------------------------------------ registration
    @property
    def routes(self) -> list[Route]:
        """The registered routes, in registration order."""
        return list(self._routes.values())

    def _add(self, routes: Iterable[Route]) -> None:
        routes = list(routes)
        with self._lock:
            paths = [r.path for r in routes]
            taken = sorted({p for p in paths if p in self._routes or paths.count(p) > 1})
            if taken:
                raise ValueError(f"admission path(s) {taken} already registered: give path= to tell them apart")
            self._routes.update((r.path, r) for r in routes)

    def register(self, *models: Any) -> AdmissionWebhook:
        """Register the ``@mutating()``/``@validating()`` methods of resource classes (all or none)."""
        self._add([route for model in models for route in marked(model)])
        return self

    def _decorator(self, kind: RouteKind, model: Any, options: dict[str, Any]) -> Callable[[F], F]:
        # bad options fail here, not when the function is decorated
        make_route(kind, model, _check_options, {**options, "path": options.get("path") or "/check"})

        def decorate(func: F) -> F:
            self._add([make_route(kind, model, func, options)])
            return func

        return decorate

    def mutating(
        self,
        model: Any,
        *,
        operations: Sequence[str] = ("CREATE", "UPDATE"),
        timeout_seconds: int = 5,
        failure_policy: str = "Fail",
        reinvocation_policy: str = "Never",
        **options: Any,
    ) -> Callable[[F], F]:
        """Decorate ``def f(request) -> resource | None`` (or ``async def``) as ``model``'s mutator.

        Options: ``target``, ``resource``, ``path``, ``operations``, ``subresource``, ``scope``,
        ``namespace_selector``, ``object_selector``, ``timeout_seconds`` (1-30), ``failure_policy``
        ("Fail"/"Ignore"), ``side_effects`` ("None"/"NoneOnDryRun"), ``reinvocation_policy``
        ("Never"/"IfNeeded"), ``match_policy`` ("Exact"/"Equivalent")."""
        options.update(
            operations=operations,
            timeout_seconds=timeout_seconds,
            failure_policy=failure_policy,
            reinvocation_policy=reinvocation_policy,
        )
        return self._decorator("mutate", model, options)

    def validating(
        self,
        model: Any,
        *,
        operations: Sequence[str] = ("CREATE", "UPDATE"),
        timeout_seconds: int = 5,
        failure_policy: str = "Fail",
        **options: Any,
    ) -> Callable[[F], F]:
        """Decorate ``def f(request) -> None`` (or ``async def``; raise ``AdmissionDenied``) as ``model``'s
        validator; the options of ``mutating`` (but ``reinvocation_policy``)."""
        if "reinvocation_policy" in options:
            raise TypeError("reinvocation_policy applies to mutating webhooks only")
        options.update(operations=operations, timeout_seconds=timeout_seconds, failure_policy=failure_policy)
        return self._decorator("validate", model, options)

    # -------------------------------------------------------------- registering
    def configurations(
        self,
        *,
        name: str,
        service_name: str | None = None,
        service_namespace: str | None = None,
        ca_bundle: bytes | str | None,
        service_port: int = 443,
        url: str | None = None,
    ) -> list[dict[str, Any]]:
        """The Mutating-/ValidatingWebhookConfiguration documents (those with routes) naming every route,
        through a Service (``service_name``/``service_namespace``/``service_port``) or ``url``."""
        service = None
        if service_name is not None or service_namespace is not None:
            service = (service_namespace or "", service_name or "", service_port)
        client = client_config(url=url, service=service, ca_bundle=ca_bundle)
        documents = configuration_documents(self.routes, name=name, client=client)
        return [doc for doc in documents.values() if doc is not None]

    def install(
        self,
        config: Config,
        *,
        name: str,
        server: Any = None,
        url: str | None = None,
        service: tuple[str, str, int] | None = None,
        ca_bundle: bytes | str | None = None,
        field_manager: str = "cloudcoil-cache-admission",
        exclude_namespaces: Iterable[str] = ("kube-system",),
        wait: float = 10.0,
    ) -> None:
        """Server-side apply both configurations (a kind with no routes is deleted), retried on
        conflict; with ``server=`` its ``url`` and ``ca_bundle``, re-applied when its CA bundle changes.

        Routes without a ``namespace_selector`` get ``kubernetes.io/metadata.name NotIn
        [exclude_namespaces..., the service's namespace]``. Returns when both are readable (``wait`` s).
        """
        installation = Installation(
            config,
            self.routes,
            name=name,
            server=server,
            url=url,
            service=service,
            ca_bundle=ca_bundle,
            field_manager=field_manager,
            exclude_namespaces=exclude_namespaces,
        )
        if server is not None:  # first: a bundle changed while the first apply runs is applied after it
            server.add_ca_bundle_listener(installation.reapply)
        installation.apply()
        installation.wait_readable(wait)

    @staticmethod
    def uninstall(config: Config, name: str) -> None:
        """Delete both configurations named ``name`` (delete them before the serving workload)."""
        uninstall_configurations(config, name)

    @staticmethod
    def wait_effective(probe: Callable[[], bool], timeout: float = 5.0) -> None:
        """After ``install``: until ``probe()`` (say, a dry-run create the webhook denies) returns True."""
        wait_effective(probe, timeout)

    # ------------------------------------------------------------------ Endpoint
    @property
    def max_body_bytes(self) -> int:
        return self._max_body_bytes

    @property
    def metrics(self) -> AdmissionMetrics:
        return self._metrics

    def start(self, sync_timeout: float) -> None:
        """Enter the Config scope, wait until the admission informers serve, start the handler threads.

        Entering the scope itself waits as the Config's Cache says (``wait_for_sync``, its
        ``sync_timeout``); ``sync_timeout`` bounds the wait for the admission informers after it.
        Raises ``CacheSyncTimeout`` (or the informers' hard failure), leaving nothing started."""
        with self._lifecycle:
            if self._runner.started:
                return
            context = contextvars.Context()
            if self.config is not None:
                context.run(self.config.activate)
            try:
                self._cache.wait_synced(sync_timeout)
                self._runner.start()
            except BaseException:
                if self.config is not None:
                    context.run(self.config.deactivate)
                raise
            self._context = context

    def stop(self, timeout: float) -> None:
        """Stop the handler threads (joined, up to ``timeout``) and leave the Config scope."""
        with self._lifecycle:
            context, self._context = self._context, None
            self._runner.stop(timeout)
            if context is not None and self.config is not None:
                context.run(self.config.deactivate)

    def readiness(self) -> str | None:
        """None when every request can be answered; else why not."""
        if not self._runner.started:
            return "admission webhook not started"
        return self._cache.readiness()

    def answer(self, exchange: Exchange, disconnected: threading.Event) -> Answer:
        """The answer to one request (the status contract of cloudcoil 0.8, see the package docs)."""
        return self._answerer.answer(exchange, disconnected)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """ASGI: the lifespan starts and stops the webhook; requests are answered off the event loop."""
        await serve_asgi(self, scope, receive, send)

    # ---------------------------------------------------------------- internals
    def _handler_context(self) -> contextvars.Context:
        return self._context if self._context is not None else contextvars.Context()

    def _request_extras(self) -> dict[str, Any]:
        reader = self._cache.reader if self._cache.cache is not None else None
        return {"config": self.config, "reader": reader}

    def __enter__(self) -> AdmissionWebhook:
        self.start(30.0)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop(10.0)


def _check_options(request: Any) -> None:
    """Stands in for the handler while ``mutating()``/``validating()`` checks its options."""


if TYPE_CHECKING:  # the seam the HTTPS server calls: checked by mypy
    _endpoint: type[Endpoint] = AdmissionWebhook
