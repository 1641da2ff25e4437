"""Metadata-only answers (``Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1``).

As kube-apiserver (``handlers/response.go``): the first acceptable media type of the Accept header
wins; ``as=PartialObjectMetadataList`` turns a LIST into a ``PartialObjectMetadataList`` (items of kind
``PartialObjectMetadata``, each the object's whole ``metadata``), ``as=PartialObjectMetadata`` turns a
GET's object and each WATCH event's object (bookmarks too) into a ``PartialObjectMetadata``; the other
pairings (a list asked as one object, an object as a list) are 406 Not Acceptable.
"""

from __future__ import annotations

import json
from typing import Any

from ..machinery import status as _status
from ..machinery.status import StatusError

__all__ = [
    "check_partial",
    "partial_event",
    "partial_list",
    "partial_list_kind",
    "partial_object",
    "wants_partial",
]

PARTIAL = "PartialObjectMetadata"
PARTIAL_LIST = "PartialObjectMetadataList"
_VERSIONS = ("v1", "v1beta1")


def _params(media: str) -> dict[str, str]:
    return {p.split("=", 1)[0].strip(): p.split("=", 1)[1].strip() for p in media.split(";")[1:] if "=" in p}


def wants_partial(accept: str) -> tuple[str, str] | None:
    """``(kind, version)`` when the first acceptable media type of ``accept`` asks for
    PartialObjectMetadata or PartialObjectMetadataList (meta.k8s.io); None when plain JSON (or
    anything else) comes first."""
    for media in accept.split(","):
        kind = media.split(";", 1)[0].strip()
        if kind not in ("application/json", "*/*", "application/*"):
            continue  # protobuf, yaml: not served here
        params = _params(media)
        wanted = params.get("as")
        if wanted is None:
            return None  # plain JSON first
        if wanted in (PARTIAL, PARTIAL_LIST) and params.get("g") == "meta.k8s.io" and params.get("v") in _VERSIONS:
            return wanted, params["v"]
    return None


def check_partial(partial: tuple[str, str] | None, verb: str) -> None:
    """406 for a pairing kube-apiserver refuses: a list (or watch) and an object shape that do not fit."""
    if partial is None:
        return
    wanted = PARTIAL_LIST if verb == "list" else PARTIAL
    if partial[0] != wanted or verb not in ("list", "watch", "get"):
        raise StatusError(
            406,
            _status.status_body(
                406,
                "NotAcceptable",
                f"only the following media types are accepted: application/json;as={wanted};g=meta.k8s.io;v=v1, "
                "application/json",
            ),
        )


def partial_object(obj: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    """The ``PartialObjectMetadata`` of ``obj``: its whole metadata, nothing else."""
    return {"kind": PARTIAL, "apiVersion": f"meta.k8s.io/{version}", "metadata": obj.get("metadata") or {}}


def partial_list_kind(version: str) -> tuple[str, str]:
    """``(kind, apiVersion)`` of a ``PartialObjectMetadataList``."""
    return PARTIAL_LIST, f"meta.k8s.io/{version}"


def partial_list(listed: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    """A LIST body as a ``PartialObjectMetadataList`` (the list's metadata kept)."""
    return {
        "kind": PARTIAL_LIST,
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": listed.get("metadata") or {},
        "items": [partial_object(item, version) for item in listed.get("items") or []],
    }


def partial_event(line: bytes, version: str = "v1") -> bytes:
    """A watch event line whose object becomes its ``PartialObjectMetadata`` (ERROR unchanged)."""
    event = json.loads(line)
    if event.get("type") in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK"):
        event["object"] = partial_object(event["object"], version)
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"
