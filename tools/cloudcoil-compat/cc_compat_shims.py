"""Stand-ins for third-party/private names cloudcoil's tests import and this project does not have.

Each name is the real one when it can be imported; otherwise a documented stand-in (CHANGES.md).
Tests that depend on these are classified "internals" in REPORT.md whatever their outcome.
"""

from __future__ import annotations

from typing import Any

try:  # pydantic is not a dependency of cloudcoil_cache
    from pydantic import ValidationError
except ImportError:  # pydantic's ValidationError is a ValueError subclass: hold the library to that
    ValidationError = ValueError  # type: ignore[misc,assignment]

try:  # httpx is not a dependency of cloudcoil_cache; only test_config's MockTransport uses Response
    from httpx import Response
except ImportError:

    class Response:  # type: ignore[no-redef]
        """Stand-in for httpx.Response (status code only)."""

        def __init__(self, status_code: int, **kwargs: Any) -> None:
            self.status_code = status_code
            self.kwargs = kwargs


try:  # cloudcoil's private informer classes; test_utils uses them only in annotations
    from cloudcoil_cache.caching._informer import AsyncInformer, SyncInformer  # type: ignore[attr-defined]
except ImportError:
    AsyncInformer = Any  # type: ignore[misc,assignment]
    SyncInformer = Any  # type: ignore[misc,assignment]


class _MissingScheme:
    """Stand-in for cloudcoil.resources._Scheme when the library has none: every use names what is missing."""

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"cc_compat: cloudcoil_cache.resources has no _Scheme (cloudcoil internals), so _Scheme.{name} is missing"
        )


try:  # cloudcoil's private scheme registry (test_resources.py's test_scheme*)
    from cloudcoil_cache.resources import _Scheme  # type: ignore[attr-defined]
except ImportError:
    _Scheme = _MissingScheme()  # type: ignore[assignment]

__all__ = ["AsyncInformer", "Response", "SyncInformer", "ValidationError", "_Scheme"]
