"""Admission webhooks whose handlers read the informer cache (``request.cached``), served over HTTPS on threads."""

from cloudcoil_cache.admission._exchange import Answer, Endpoint, Exchange

__all__ = ["Answer", "Endpoint", "Exchange"]
