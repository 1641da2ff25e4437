"""A tiny stdlib HTTPS admission webhook for tests (trustme CA), and webhook configurations for it.

``AdmissionServer`` serves one behaviour per path: ``/allow``; ``/canary`` (allows: tests wait for it
to know a configuration is in effect); ``/deny`` (no status code); ``/deny-403`` and ``/deny-422``
(code and reason set); ``/patch`` (adds a label); ``/warn`` (two warnings); ``/slow`` (answers after
``release`` is set or the server stops); ``/500`` (empty body); ``/504``; ``/garbage`` (200, not
JSON); ``/uid`` (another uid); ``/read`` (GETs ConfigMaps from the fake first, then allows);
``/bump`` (on its first UPDATE, annotates the object through the fake, then allows). Every review
it gets is kept in ``reviews``.
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import trustme

Answer = tuple[int, bytes, str]

MUTATED_LABEL = "probe/mutated"


def allowed(request: dict[str, Any], **response: Any) -> Answer:
    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": request["uid"], "allowed": True, **response},
    }
    return 200, json.dumps(body).encode(), "application/json"


def denied(request: dict[str, Any], status: dict[str, Any]) -> Answer:
    return allowed(request, allowed=False, status=status)


def label_patch(obj: dict[str, Any]) -> list[dict[str, Any]]:
    if (obj.get("metadata") or {}).get("labels"):
        return [{"op": "add", "path": "/metadata/labels/probe~1mutated", "value": "true"}]
    return [{"op": "add", "path": "/metadata/labels", "value": {MUTATED_LABEL: "true"}}]


class AdmissionServer:
    """An HTTPS webhook on 127.0.0.1 with a trustme certificate; a context manager."""

    def __init__(self, ca: trustme.CA | None = None, read_url: str | None = None) -> None:
        self.ca = ca or trustme.CA()
        self.read_url = read_url  # the fake's URL, for /read
        self.release = threading.Event()
        self.reviews: list[tuple[str, dict[str, Any]]] = []
        self.read_status: list[int] = []
        self.bumped: list[str] = []
        self.lock = threading.Condition()
        self._routes: dict[str, Callable[[dict[str, Any]], Answer]] = {
            "/allow": allowed,
            "/canary": allowed,
            "/deny": lambda r: denied(r, {"message": "no thanks"}),
            "/deny-403": lambda r: denied(r, {"code": 403, "reason": "Forbidden", "message": "no thanks"}),
            "/deny-422": lambda r: denied(r, {"code": 422, "reason": "Invalid", "message": "bad value"}),
            "/patch": self._patch,
            "/warn": lambda r: allowed(r, warnings=["probe warning one", "probe warning two"]),
            "/slow": self._slow,
            "/500": lambda r: (500, b"", ""),
            "/504": lambda r: (504, b"", ""),
            "/garbage": lambda r: (200, b"not json", "application/json"),
            "/uid": lambda r: allowed({**r, "uid": "not-the-uid"}),
            "/read": self._read,
            "/bump": self._bump,
        }
        leaf = self.ca.issue_cert("127.0.0.1")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        leaf.configure_cert(context)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                review = json.loads(self.rfile.read(length))
                route = self.path.split("?")[0]
                with server.lock:
                    server.reviews.append((self.path, review))
                    server.lock.notify_all()
                code, body, ctype = server._routes[route](review["request"])
                self.send_response(code)
                if ctype:
                    self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = False
        self._httpd.block_on_close = True
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self._thread: threading.Thread | None = None

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.ca.cert_pem.bytes()).decode()

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self._httpd.server_address[1]}{path}"

    def __enter__(self) -> AdmissionServer:
        # shutdown() waits for serve_forever's next poll: 0.05 s, not the default 0.5 s, per stop
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="test-admission-webhook", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving (the port then refuses connections) and join every thread."""
        if self._thread is None:
            return
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)
        self._thread = None

    def wait_for(self, predicate: Callable[[str, dict[str, Any]], bool], timeout: float, since: int = 0) -> bool:
        """Wait until a review (path without query, request) matching ``predicate`` came, among
        those from index ``since`` on."""
        with self.lock:
            return self.lock.wait_for(
                lambda: any(predicate(p.split("?")[0], r["request"]) for p, r in self.reviews[since:]), timeout
            )

    def paths(self) -> list[str]:
        with self.lock:
            return [path.split("?")[0] for path, _ in self.reviews]

    def _patch(self, request: dict[str, Any]) -> Answer:
        patch = label_patch(request.get("object") or {})
        return allowed(request, patchType="JSONPatch", patch=base64.b64encode(json.dumps(patch).encode()).decode())

    def _slow(self, request: dict[str, Any]) -> Answer:
        self.release.wait(10)
        return allowed(request)

    def _read(self, request: dict[str, Any]) -> Answer:
        assert self.read_url is not None
        url = f"{self.read_url}/api/v1/namespaces/{request['namespace']}/configmaps"
        with urllib.request.urlopen(url, timeout=5) as answer:  # noqa: S310 (loopback http)
            self.read_status.append(answer.status)
        return allowed(request)

    def _bump(self, request: dict[str, Any]) -> Answer:
        """On the first UPDATE: annotate the object being updated (through the fake), then allow."""
        assert self.read_url is not None
        if request["operation"] == "UPDATE" and not self.bumped:
            self.bumped.append(request["name"])
            url = f"{self.read_url}/api/v1/namespaces/{request['namespace']}/configmaps/{request['name']}"
            patch = json.dumps({"metadata": {"annotations": {"probe/bumped": "true"}}}).encode()
            bump = urllib.request.Request(url, data=patch, method="PATCH")
            bump.add_header("Content-Type", "application/merge-patch+json")
            with urllib.request.urlopen(bump, timeout=5) as answer:  # noqa: S310 (loopback http)
                self.read_status.append(answer.status)
        return allowed(request)


def configuration(
    kind: str,
    name: str,
    url: str,
    ca_bundle: str | None,
    *,
    resources: tuple[str, ...] = ("configmaps",),
    operations: tuple[str, ...] = ("CREATE", "UPDATE"),
    failure_policy: str = "Fail",
    timeout: int | None = None,
    side_effects: str = "None",
    namespace_selector: dict[str, Any] | None = None,
    object_selector: dict[str, Any] | None = None,
    scope: str | None = None,
    api_groups: tuple[str, ...] = ("",),
) -> dict[str, Any]:
    """A one-webhook Mutating/ValidatingWebhookConfiguration (``kind``) for ``url``."""
    rule: dict[str, Any] = {
        "apiGroups": list(api_groups),
        "apiVersions": ["v1"],
        "operations": list(operations),
        "resources": list(resources),
    }
    if scope is not None:
        rule["scope"] = scope
    client: dict[str, Any] = {"url": url}
    if ca_bundle is not None:
        client["caBundle"] = ca_bundle
    hook: dict[str, Any] = {
        "name": name,
        "clientConfig": client,
        "rules": [rule],
        "failurePolicy": failure_policy,
        "sideEffects": side_effects,
        "admissionReviewVersions": ["v1"],
        "matchPolicy": "Exact",
    }
    if timeout is not None:
        hook["timeoutSeconds"] = timeout
    if namespace_selector is not None:
        hook["namespaceSelector"] = namespace_selector
    if object_selector is not None:
        hook["objectSelector"] = object_selector
    if kind == "MutatingWebhookConfiguration":
        hook["reinvocationPolicy"] = "Never"
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": [hook],
    }
