"""Command-line errors: one line saying what is wrong and what to do (no traceback without --debug)."""

from __future__ import annotations

from typing import Any, Callable

from cloudcoil_cache.errors import (
    APIError,
    BadRequest,
    CacheSyncTimeout,
    CacheUnavailableError,
    CloudcoilError,
    ConfigError,
    ConnectError,
    Forbidden,
    ReadTimeout,
    ResourceNotFound,
    TransportError,
    Unauthorized,
)

__all__ = ["CliError", "explain"]

_CLUSTER_HINT = "pass --kubeconfig PATH or --context NAME, set KUBECONFIG, or try --fake for the embedded cluster"


class CliError(Exception):
    """An error the command line reports as one line (``message``) and exit status ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def _config_text(exc: ConfigError) -> str:
    text = str(exc).split(". Pass server=", 1)[0].rstrip(".")  # the library's own hint is for code
    return f"{text}; {_CLUSTER_HINT}"


def _connect_text(exc: ConnectError) -> str:
    return (
        f"cannot reach the API server ({exc}); check that the cluster is running and that "
        f"the kubeconfig points at it, or {_CLUSTER_HINT.split(', or ')[-1]}"
    )


# The first row whose class ``exc`` is an instance of explains it: (class, message for it, exit status).
# Subclasses come before their bases (ReadTimeout before TransportError, Forbidden before APIError).
_EXPLANATIONS: tuple[tuple[type[BaseException], Callable[[Any], str], int], ...] = (
    (ConfigError, _config_text, 1),
    (ConnectError, _connect_text, 1),
    (
        ReadTimeout,
        lambda exc: f"the API server did not answer in time ({exc}); check the cluster's health and retry",
        1,
    ),
    (TransportError, lambda exc: f"the connection to the API server failed ({exc}); retry, or check the network", 1),
    (
        Unauthorized,
        lambda exc: (
            f"the API server rejected the credentials ({_api_text(exc)}); log in again or pick another --context"
        ),
        1,
    ),
    (
        Forbidden,
        lambda exc: (
            f"forbidden: {_api_text(exc)}; ask for list and watch permission on this resource, "
            "or pick a namespace you may read (-n)"
        ),
        1,
    ),
    (BadRequest, lambda exc: f"the API server refused the request: {_api_text(exc)}; check the selectors", 1),
    (ResourceNotFound, lambda exc: f"not found: {_api_text(exc)}", 1),
    (APIError, lambda exc: f"the API server answered {exc}; retry, or check the cluster's health", 1),
    (
        CacheSyncTimeout,
        lambda exc: f"{exc}; the cluster may be slow or the kind very large: retry with a larger --timeout",
        1,
    ),
    (CacheUnavailableError, str, 1),
    (CloudcoilError, str, 1),
    (ValueError, str, 2),  # bad selectors and options are ValueErrors naming the input
)


def explain(exc: BaseException) -> tuple[str, int]:
    """The one-line message and exit status for ``exc``, with what to do about it."""
    if isinstance(exc, CliError):
        return exc.message, exc.code
    for cls, text, code in _EXPLANATIONS:
        if isinstance(exc, cls):
            return text(exc), code
    return f"{type(exc).__name__}: {exc} (run again with --debug for the traceback)", 1


def _api_text(exc: APIError) -> str:
    return exc.message or str(exc)
