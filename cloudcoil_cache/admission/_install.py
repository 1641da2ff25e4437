"""``install``/``uninstall``: the configurations server-side applied (or deleted) through the library's client."""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Iterable, Mapping

from cloudcoil_cache.admission._registrations import client_config, configuration_documents
from cloudcoil_cache.admission._routes import Route
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import ResourceConflict, ResourceNotFound, WaitTimeout
from cloudcoil_cache.models.kubernetes.admissionregistration.v1 import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)

__all__ = ["Installation", "namespace_selector", "uninstall", "wait_effective"]

log = logging.getLogger("cloudcoil_cache.admission")

CLASSES: dict[str, Any] = {
    "MutatingWebhookConfiguration": MutatingWebhookConfiguration,
    "ValidatingWebhookConfiguration": ValidatingWebhookConfiguration,
}
_CONFLICT_RETRIES = 5


def namespace_selector(exclude: Iterable[str]) -> Mapping[str, Any] | None:
    """``kubernetes.io/metadata.name NotIn [exclude...]`` (None when nothing is excluded)."""
    values = sorted({n for n in exclude if n})
    if not values:
        return None
    return {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": values}]}


class Installation:
    """Applies a webhook's configurations (again when the server's CA bundle changes)."""

    def __init__(
        self,
        config: Config,
        routes: Iterable[Route],
        *,
        name: str,
        server: Any = None,
        url: str | None = None,
        service: tuple[str, str, int] | None = None,
        ca_bundle: bytes | str | None = None,
        field_manager: str = "cloudcoil-cache-admission",
        exclude_namespaces: Iterable[str] = ("kube-system",),
    ) -> None:
        if sum(x is not None for x in (server, url, service)) != 1:
            raise ValueError("install() needs exactly one of server=, url= or service=(namespace, name, port)")
        if isinstance(exclude_namespaces, str):
            raise ValueError("exclude_namespaces: expected a sequence of namespace names, not a string")
        if not isinstance(field_manager, str) or not field_manager:
            raise ValueError("field_manager: expected a non-empty string")
        self.config = config
        self.routes = list(routes)
        self.name = name
        self.server = server
        self.url = url
        self.service = service
        self.ca_bundle = ca_bundle
        self.field_manager = field_manager
        serving = [service[0]] if service is not None else []
        self.selector = namespace_selector([*exclude_namespaces, *serving])
        self._lock = threading.Lock()  # one apply at a time (install, and the server's CA bundle changes)

    def documents(self) -> dict[str, dict[str, Any] | None]:
        if self.server is not None:
            url, ca_bundle = self.server.url, self.server.ca_bundle
        else:
            url, ca_bundle = self.url, self.ca_bundle
        client = client_config(url=url, service=self.service, ca_bundle=ca_bundle)
        return configuration_documents(
            self.routes, name=self.name, client=client, default_namespace_selector=self.selector
        )

    def apply(self) -> None:
        """Server-side apply each configuration with routes, delete the one without (retried on conflict)."""
        with self._lock:
            for kind, document in self.documents().items():
                client = self.config.client_for(CLASSES[kind], cached=False)
                for attempt in range(_CONFLICT_RETRIES):
                    try:
                        if document is None:
                            _delete(client, self.name)
                        else:
                            client.patch(
                                self.name, document, patch_type="apply", field_manager=self.field_manager, force=True
                            )
                        break
                    except ResourceConflict:
                        if attempt == _CONFLICT_RETRIES - 1:
                            raise

    def reapply(self, *_: Any) -> None:
        """The server's CA bundle changed (its listener): apply again; a failure is logged."""
        try:
            self.apply()
        except Exception:
            log.exception("admission: re-applying configurations %r after a CA bundle change failed", self.name)

    def wait_readable(self, timeout: float) -> None:
        """Until every configuration applied can be read back (``WaitTimeout`` after ``timeout``)."""
        wanted = [kind for kind, doc in self.documents().items() if doc is not None]
        stop = threading.Event()
        delay = 0.05
        remaining = float(timeout)
        while True:
            missing = [k for k in wanted if not _readable(self.config, k, self.name)]
            if not missing or remaining <= 0:
                break
            stop.wait(min(delay, remaining))
            remaining -= delay
            delay = min(delay * 2, 1.0)
        if missing:
            raise WaitTimeout(f"admission configurations {missing} named {self.name!r} not readable after {timeout:g}s")


def _readable(config: Config, kind: str, name: str) -> bool:
    try:
        config.client_for(CLASSES[kind], cached=False).get(name)
    except ResourceNotFound:
        return False
    return True


def _delete(client: Any, name: str) -> None:
    try:
        client.delete(name)
    except ResourceNotFound:
        pass


def uninstall(config: Config, name: str) -> None:
    """Delete both configurations named ``name`` (an absent one is fine)."""
    if not isinstance(name, str) or not name:
        raise ValueError("uninstall(): name must be a non-empty string")
    for cls in CLASSES.values():
        _delete(config.client_for(cls, cached=False), name)


def wait_effective(probe: Callable[[], bool], timeout: float = 5.0) -> None:
    """Call ``probe()`` until it returns True (kube-apiserver applies a new configuration to later
    requests only: e.g. a dry-run create that the webhook denies); ``WaitTimeout`` after ``timeout``.
    An exception from ``probe`` propagates."""
    stop = threading.Event()
    delay, waited = 0.02, 0.0
    while not probe():
        if waited >= timeout:
            raise WaitTimeout(f"the admission webhook did not take effect within {timeout:g}s")
        stop.wait(min(delay, timeout - waited))
        waited += min(delay, timeout - waited)
        delay = min(delay * 2, 0.5)
