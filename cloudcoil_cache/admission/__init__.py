"""Admission webhooks whose handlers read the informer cache (``request.cached``), served over HTTPS on threads."""

from cloudcoil_cache.admission._certs import SelfSignedCertificates
from cloudcoil_cache.admission._exchange import Answer, Endpoint, Exchange
from cloudcoil_cache.admission._metrics import AdmissionMetrics
from cloudcoil_cache.admission._routes import Route, mutating, validating
from cloudcoil_cache.admission._server import WebhookServer
from cloudcoil_cache.admission._types import AdmissionRequest, Operation, UserInfo
from cloudcoil_cache.admission._webhook import AdmissionWebhook
from cloudcoil_cache.errors import AdmissionDenied

__all__ = [
    "AdmissionDenied",
    "AdmissionMetrics",
    "AdmissionRequest",
    "AdmissionWebhook",
    "Answer",
    "Endpoint",
    "Exchange",
    "Operation",
    "Route",
    "SelfSignedCertificates",
    "UserInfo",
    "WebhookServer",
    "mutating",
    "validating",
]
