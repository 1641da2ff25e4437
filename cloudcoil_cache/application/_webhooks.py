"""An Application's admission webhooks: the WebhookServer it runs and the webhook side of its manifests."""

from __future__ import annotations

import os
from pathlib import PurePosixPath
from typing import Any

from cloudcoil_cache.admission import AdmissionWebhook, WebhookServer
from cloudcoil_cache.application._manifests import WebhookLayout

__all__ = ["CERT_DIR", "WEBHOOK_PORT", "Webhooks"]

#: Where the Deployment mounts the TLS Secret (cloudcoil 0.8's ``WebhookServer`` certfile/keyfile folder).
CERT_DIR = "/var/run/cloudcoil/tls"
#: The port the webhook server listens on in the pod (controller-runtime's and 0.8's default).
WEBHOOK_PORT = 9443


def _read_ca(ca_bundle: Any, ca_file: Any) -> bytes | None:
    if ca_bundle is not None and ca_file is not None:
        raise ValueError("Application: give ca_bundle= (PEM) or ca_file= (a PEM file), not both")
    if ca_file is not None:
        if not isinstance(ca_file, (str, os.PathLike)):
            raise TypeError(f"Application(ca_file=...) must be a path, got {type(ca_file).__name__}")
        try:
            with open(ca_file, "rb") as stream:
                ca_bundle = stream.read()
        except OSError as exc:
            raise ValueError(f"Application(ca_file=...): cannot read {os.fspath(ca_file)!r}: {exc.strerror}") from None
    if isinstance(ca_bundle, str):
        ca_bundle = ca_bundle.encode()
    if ca_bundle is not None and (not isinstance(ca_bundle, bytes) or b"-----BEGIN CERTIFICATE-----" not in ca_bundle):
        raise ValueError("Application(ca_bundle=...): expected PEM certificate(s) (-----BEGIN CERTIFICATE-----)")
    return ca_bundle


class Webhooks:
    """``Application(webhooks=...)``: an ``AdmissionWebhook`` (served by a ``WebhookServer`` made by
    ``server()``: on every address, port ``WEBHOOK_PORT``, with the certificate files of the mounted
    TLS Secret) or a ``WebhookServer`` (used as given: its port, ``service_port`` and ``tls_secret``)."""

    def __init__(self, value: Any, *, name: str, cert_dir: str, ca_bundle: Any = None, ca_file: Any = None) -> None:
        if isinstance(value, WebhookServer):
            if not isinstance(value.endpoint, AdmissionWebhook):
                raise TypeError("Application(webhooks=WebhookServer(...)) must serve an AdmissionWebhook")
            self.webhook: AdmissionWebhook = value.endpoint
            self._server: WebhookServer | None = value
            self.port, self.service_port = value.port, value.service_port  # port 0: no manifests
            self.tls_secret = value.tls_secret or f"{name}-webhook-tls"
        elif isinstance(value, AdmissionWebhook):
            self.webhook, self._server = value, None
            self.port, self.service_port, self.tls_secret = WEBHOOK_PORT, 443, f"{name}-webhook-tls"
        else:
            raise TypeError(
                f"Application(webhooks=...) expects an AdmissionWebhook or a WebhookServer, got {type(value).__name__}"
            )
        if not self.webhook.routes:
            raise ValueError("Application(webhooks=...): the AdmissionWebhook has no routes")
        if not isinstance(cert_dir, str) or not PurePosixPath(cert_dir).is_absolute():
            raise ValueError(f"Application(webhook_cert_dir=...) must be an absolute path, got {cert_dir!r}")
        self.name = name
        self.cert_dir = cert_dir
        self.ca_bundle = _read_ca(ca_bundle, ca_file)

    def server(self) -> WebhookServer:
        """The server ``run()`` starts: the one given, or one on ``0.0.0.0:9443`` reading
        ``tls.crt``/``tls.key`` from ``cert_dir`` (the mounted Secret; re-read when they change)."""
        if self._server is not None:
            return self._server
        return WebhookServer(
            self.webhook,
            host="0.0.0.0",
            port=self.port,
            certfile=f"{self.cert_dir}/tls.crt",
            keyfile=f"{self.cert_dir}/tls.key",
            service_port=self.service_port,
            tls_secret=self.tls_secret,
        )

    def layout(self, namespace: str) -> WebhookLayout:
        """The Service, the Secret mount and the configurations for an install in ``namespace``.
        Without ``ca_bundle``/``ca_file`` the configurations have no caBundle: inject it (cert-manager's
        CA injector, or a patch) before the API server can call the webhooks."""
        if self.port == 0:
            raise ValueError(
                "Application.manifests(): the WebhookServer listens on port 0 (any free one); the Deployment "
                "and the Service need a fixed port: give WebhookServer(port=...)"
            )
        service_name = f"{self.name}-webhook"
        configurations = self.webhook.configurations(
            name=f"{self.name}.{namespace}.cloudcoil.io",
            service_name=service_name,
            service_namespace=namespace,
            service_port=self.service_port,
            ca_bundle=self.ca_bundle,
        )
        return WebhookLayout(
            service_name=service_name,
            service_port=self.service_port,
            port=self.port,
            tls_secret=self.tls_secret,
            cert_dir=self.cert_dir,
            configurations=configurations,
        )
