"""One API request as the endpoints see it (``Request``), how they answer (``Responder``), and body decoding."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Protocol

import yaml

from ..machinery import status as _status
from ..machinery.schema import definition_for
from ..machinery.status import StatusError
from .protobuf import ProtobufError, decode_body
from .routing import Route

__all__ = ["Request", "Responder", "method_not_allowed"]


class Responder(Protocol):
    """Where an endpoint's answer goes: the HTTP handler of the request's connection."""

    def send_obj(self, code: int, obj: Any) -> None:
        """Answer ``obj`` as JSON."""

    def send_bytes(
        self, code: int, body: bytes, headers: dict[str, str] | None = None, content_type: str = "application/json"
    ) -> None:
        """Answer serialized JSON (or what ``content_type`` says)."""

    def set_warnings(self, warnings: list[str]) -> None:
        """Send these (filled while serving) as ``Warning`` headers with the answer."""

    def start_stream(self) -> None:
        """Send the 200 status and the headers of a chunked JSON stream (a watch)."""

    def write_raw(self, data: bytes) -> None:
        """Write bytes to the connection (raises ``OSError`` when it broke)."""

    def abort(self) -> None:
        """End the connection without the terminating chunk."""

    def client_gone(self) -> bool:
        """Whether the client has closed its end of a stream."""


@dataclass(frozen=True)
class Request:
    """A resource request: what the route, the query, the headers and the body say."""

    method: str
    verb: str
    route: Route
    query: Mapping[str, str]
    body: bytes
    content_type: str  # without parameters
    user_agent: str
    user: str | None
    table: bool  # the client asked for a server-side Table
    partial: tuple[str, str] | None = None  # PartialObjectMetadata[List] and its version (``partial``)

    def manager(self) -> str:
        """The field manager of a write: ``fieldManager``, else the User-Agent's product name."""
        manager = self.query.get("fieldManager", "")
        if manager:
            return manager
        agent = self.user_agent.split("/")[0]
        return "".join(ch for ch in agent if ch.isprintable())[:128] or "unknown"

    def yaml_body(self) -> Any:
        try:
            return yaml.safe_load(self.body or b"null")
        except yaml.YAMLError as exc:
            raise _status.bad_request(f"the request body is not valid YAML: {exc}") from None

    def json_body(self) -> Any:
        """The body decoded as its content type says (JSON, YAML on POST/PUT, or protobuf)."""
        ctype = self.content_type
        if ctype == "application/vnd.kubernetes.protobuf":
            try:
                return decode_body(self.body, definition_for)
            except ProtobufError as exc:
                raise StatusError(
                    415,
                    _status.status_body(
                        415,
                        "UnsupportedMediaType",
                        f"the body of the request was in an unknown format - accepted media types "
                        f"include: application/json, application/yaml ({exc})",
                    ),
                ) from None
        if ctype in ("application/yaml", "application/x-yaml") and self.method in ("POST", "PUT"):
            return self.yaml_body()
        try:
            return json.loads(self.body or b"null")
        except ValueError as exc:
            raise _status.bad_request(f"the request body is not valid JSON: {exc}") from None

    def object_body(self) -> dict[str, Any]:
        """The body of a create or update: a JSON object (400 otherwise)."""
        obj = self.json_body()
        if not isinstance(obj, dict):
            raise _status.bad_request("the request body must be a JSON object")
        return obj


def method_not_allowed() -> StatusError:
    return StatusError(
        405,
        _status.status_body(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        ),
    )
