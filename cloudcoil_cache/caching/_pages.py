"""Pages of a cached list: the cache's own continue tokens, and one page cut from a snapshot."""

from __future__ import annotations

import base64
from typing import Any

__all__ = ["TOKEN_PREFIX", "cut_page", "decode_token", "encode_token", "is_cache_token"]

#: What every continue token the cache hands out starts with (the API server's never do).
TOKEN_PREFIX = "cc-cache:"


def is_cache_token(token: str | None) -> bool:
    return bool(token) and str(token).startswith(TOKEN_PREFIX)


def _sort_key(obj: Any) -> tuple[str, str]:
    return (obj.metadata.namespace or "", obj.metadata.name or "")


def encode_token(key: tuple[str, str]) -> str:
    raw = f"{key[0]}/{key[1]}".encode()
    return TOKEN_PREFIX + base64.urlsafe_b64encode(raw).decode()


def decode_token(token: str | None) -> tuple[str, str] | None:
    """The (namespace, name) a cache token continues after; None for no token; ValueError if malformed."""
    if not token:
        return None
    try:  # validate: urlsafe_b64decode would drop foreign characters and read "!!!" as the first page
        text = base64.b64decode(token[len(TOKEN_PREFIX) :], altchars=b"-_", validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        text = ""
    namespace, slash, name = text.partition("/")
    if not slash or not name:
        raise ValueError("malformed cache continue token")
    return (namespace, name)


def cut_page(objs: list[Any], metadata: dict[str, Any], limit: int | None, token: str | None) -> list[Any]:
    """The page of ``objs`` after ``token`` (a cache token, checked by the policy), at most ``limit``
    long (0/None: all); sets ``continue`` and ``remainingItemCount`` in ``metadata`` when more follow."""
    start_after = decode_token(token)
    if limit or start_after is not None:
        objs.sort(key=_sort_key)
        if start_after is not None:
            objs = [o for o in objs if _sort_key(o) > start_after]
        if limit and len(objs) > limit:
            metadata["continue"] = encode_token(_sort_key(objs[limit - 1]))
            metadata["remainingItemCount"] = len(objs) - limit
            objs = objs[:limit]
    return objs
