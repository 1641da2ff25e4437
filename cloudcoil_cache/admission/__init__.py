"""Admission webhooks whose handlers read the informer cache (``request.cached``), served over HTTPS on threads."""

from cloudcoil_cache.admission._certs import SelfSignedCertificates
from cloudcoil_cache.admission._exchange import Answer, Endpoint, Exchange
from cloudcoil_cache.admission._server import WebhookServer

__all__ = ["Answer", "Endpoint", "Exchange", "SelfSignedCertificates", "WebhookServer"]
