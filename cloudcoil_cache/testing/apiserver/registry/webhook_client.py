"""The HTTPS call to an admission webhook, failing with the error text kube-apiserver's client gives."""

from __future__ import annotations

import base64
import binascii
import http.client
import json
import socket
import ssl
import threading
import time
import urllib.parse
from typing import Any

import yaml

__all__ = ["OpenCalls", "WebhookCallError", "post_review"]

# client-go's rest.NewGenericServerResponse: the message for an answer that is not a Status.
_GENERIC = {
    400: "the server rejected our request for an unknown reason",
    401: "the server has asked for the client to provide credentials",
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    409: "the server reported a conflict",
    422: "the server rejected our request due to an error in our request",
    429: "the server has received too many requests and has asked us to try again later",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be processing the request",
}
_MAX_TEXT = 2048  # client-go's maxUnstructuredResponseTextBytes


class WebhookCallError(Exception):
    """The call failed before a review came back; ``str()`` is what follows "failed to call webhook: "."""


class OpenCalls:
    """The connections of the calls in flight, so that a stopping server can cut them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[http.client.HTTPSConnection] = set()
        self._closed = False

    def add(self, conn: http.client.HTTPSConnection) -> None:
        with self._lock:
            if self._closed:
                raise WebhookCallError("the server is stopping")
            self._open.add(conn)

    def discard(self, conn: http.client.HTTPSConnection) -> None:
        with self._lock:
            self._open.discard(conn)

    def reopen(self) -> None:
        with self._lock:
            self._closed = False

    def abort_all(self) -> None:
        """Cut every call in flight (each fails as a broken connection) and refuse new ones."""
        with self._lock:
            self._closed = True
            conns = list(self._open)
        for conn in conns:
            sock = conn.sock
            if sock is not None:
                try:
                    # The plain socket's shutdown: SSLSocket.shutdown drops its TLS state first, and
                    # the call's thread then read the webhook's TLS records as its status line
                    # (BadStatusLine('\x17\x03\x03...')) instead of a broken connection.
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)
                except OSError:
                    pass


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the strings seen here (JSON escaping is the same for printable text)."""
    return json.dumps(text, ensure_ascii=False)


def _tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    """Verify against ``caBundle`` (base64 PEM) or, without one, the system roots."""
    if not ca_bundle:
        return ssl.create_default_context()
    try:
        pem = base64.b64decode(ca_bundle, validate=True).decode()
        return ssl.create_default_context(cadata=pem)
    except (binascii.Error, ValueError, ssl.SSLError) as exc:
        raise WebhookCallError(f"could not load caBundle: {exc}") from None


def _tls_reason(exc: ssl.SSLError, host: str) -> str:
    """Go's wording for a refused certificate (the common cases; others keep OpenSSL's text)."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        code = exc.verify_code
        if code in (18, 19, 20, 21):  # self-signed / unknown issuer
            return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        if code == 10:
            return "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
        if code == 62:
            return f"tls: failed to verify certificate: x509: certificate is not valid for {host}"
        return f"tls: failed to verify certificate: {exc.verify_message}"
    return f"remote error: {exc.reason or exc}"


def _status_message(code: int, content_type: str, body: bytes) -> str:
    """The error client-go makes of a non-2xx answer: a Failure Status's message, else the generic text."""
    if body and "json" in content_type:
        try:
            decoded = json.loads(body)
        except ValueError:
            decoded = None
        if isinstance(decoded, dict) and decoded.get("kind") == "Status" and decoded.get("status") == "Failure":
            return str(decoded.get("message", ""))
    is_text = not content_type or content_type.startswith("text/")
    server_message = body[:_MAX_TEXT].decode(errors="replace").strip() if is_text else "unknown"
    if code == 403:
        return server_message
    if code in _GENERIC:
        return _GENERIC[code]
    if code >= 500:
        return f"an error on the server ({_go_quote(server_message)}) has prevented the request from succeeding"
    return f"the server responded with the status code {code} but did not return more information"


def post_review(
    url: str, ca_bundle: str | None, review: dict[str, Any], timeout: int, calls: OpenCalls
) -> dict[str, Any]:
    """POST ``review`` to ``url?timeout=Ns`` within ``timeout`` seconds; the decoded answer.

    Raises ``WebhookCallError`` with client-go's wording (``Post "<url>": ...`` for transport
    errors, the Status-derived text for non-2xx answers).
    """
    parts = urllib.parse.urlsplit(url)
    query = f"{parts.query}&" if parts.query else ""
    target = urllib.parse.urlunsplit(parts._replace(query=f"{query}timeout={timeout}s"))
    where = f"Post {_go_quote(target)}"
    if parts.scheme != "https" or not parts.hostname:
        raise WebhookCallError(f'{where}: unsupported protocol scheme "{parts.scheme}"')
    host, port = parts.hostname, parts.port or 443
    context = _tls_context(ca_bundle)
    deadline = time.monotonic() + timeout
    path = parts.path or "/"
    path += f"?{query}timeout={timeout}s"
    conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
    calls.add(conn)
    try:
        try:
            conn.connect()
        except ssl.SSLError as exc:
            raise WebhookCallError(f"{where}: {_tls_reason(exc, host)}") from None
        except ConnectionRefusedError:
            raise WebhookCallError(f"{where}: dial tcp {host}:{port}: connect: connection refused") from None
        conn.request("POST", path, json.dumps(review).encode(), {"Content-Type": "application/json"})
        if conn.sock is not None:
            conn.sock.settimeout(max(0.001, deadline - time.monotonic()))
        response = conn.getresponse()
        body = response.read()
    except (TimeoutError, socket.timeout):
        raise WebhookCallError(f"{where}: context deadline exceeded") from None
    except OSError as exc:
        raise WebhookCallError(f"{where}: {exc.strerror or exc}") from None
    finally:
        calls.discard(conn)
        conn.close()
    content_type = (response.getheader("Content-Type") or "").split(";")[0].strip()
    if not 200 <= response.status <= 206:
        raise WebhookCallError(_status_message(response.status, content_type, body))
    return _decoded(body)


def _decoded(body: bytes) -> dict[str, Any]:
    """The answer as client-go's decoder reads it (YAML is accepted too: it converts to JSON first)."""
    try:
        decoded = json.loads(body)
    except ValueError:
        try:
            decoded = yaml.safe_load(body)
        except yaml.YAMLError as exc:
            raise WebhookCallError(f"couldn't get version/kind; json parse error: {exc}") from None
    if not isinstance(decoded, dict):
        raise WebhookCallError(
            "couldn't get version/kind; json parse error: json: cannot unmarshal "
            f"{_go_type(decoded)} into Go value of type struct {{ APIVersion string "
            '"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
        )
    return decoded


def _go_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "null"
