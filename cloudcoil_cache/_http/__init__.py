"""HTTP layer (layer 1): transport, TLS context, credentials protocol, retry policy."""

from ._auth import ClientCertificateSource, Credentials, MergedRefresh
from ._retry import RetryPolicy, parse_retry_after
from ._tls import TLSConfig, build_ssl_context
from ._transport import DEFAULT_USER_AGENT, MAX_LINE_BYTES, LineStream, Response, Transport, normalise_server
from ._warnings import WarningHandler, WarningLog, parse_warnings

__all__ = [
    "DEFAULT_USER_AGENT",
    "MAX_LINE_BYTES",
    "ClientCertificateSource",
    "Credentials",
    "LineStream",
    "MergedRefresh",
    "Response",
    "RetryPolicy",
    "TLSConfig",
    "Transport",
    "WarningHandler",
    "WarningLog",
    "build_ssl_context",
    "normalise_server",
    "parse_retry_after",
    "parse_warnings",
]
