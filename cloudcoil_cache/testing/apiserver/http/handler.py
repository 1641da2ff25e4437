"""The fake server's HTTP request handler: logging, injected faults, discovery and CRUD."""

from __future__ import annotations

import email.utils
import json
import logging
import socket
import ssl
import time

import yaml
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ..registry import status as _status
from ..registry.admission import request_context
from ..endpoints.list import list_body, parse_filters, parse_rv, wait_not_too_large
from .protobuf import ProtobufError, decode_body
from .request_log import RequestLog
from ..endpoints.context import ServerContext
from ..endpoints.reviews import review
from ..registry.schema import definition_for
from ..endpoints.routing import Route, derive_verb, parse_route, subresource_ok
from ..endpoints.scale import get_scale, patch_scale, update_scale
from ..storage.store import APPLY_PATCH
from ..registry.status import StatusError
from ..endpoints.tables import to_table, wants_table
from ..endpoints.watch import serve_watch


__all__ = ["Handler"]

log = logging.getLogger(__name__)

_WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})


def _method_not_allowed() -> StatusError:
    return StatusError(
        405,
        _status.status_body(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        ),
    )


class Handler(BaseHTTPRequestHandler):
    """One connection's requests (HTTP/1.1 keep-alive), served from ``server.context``."""

    protocol_version = "HTTP/1.1"
    streaming = False  # set once a watch response's headers went out
    server_version = "cloudcoil-fake-apiserver"
    sys_version = ""

    @property
    def ctx(self) -> ServerContext:
        return self.server.context  # type: ignore[attr-defined,no-any-return]

    @property
    def request_log(self) -> RequestLog:
        return self.server.request_log  # type: ignore[attr-defined,no-any-return]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
        log.debug("%s " + format, self.address_string(), *args)

    def date_time_string(self, timestamp: float | None = None) -> str:
        skewed = (time.time() if timestamp is None else timestamp) + self.ctx.settings.clock_skew
        return email.utils.formatdate(skewed, usegmt=True)

    def do_GET(self) -> None:  # noqa: N802 (stdlib naming)
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._dispatch("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch("DELETE")

    # -- responses -----------------------------------------------------------------------------

    def send_bytes(
        self,
        code: int,
        body: bytes,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        self.send_response(code)
        for warning in getattr(self, "warnings", ()):
            self.send_header("Warning", '299 - "' + warning.replace('"', '\\"') + '"')
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache, private")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def start_stream(self) -> None:
        """The head of a watch response (a chunked JSON stream)."""
        self.streaming = True
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()

    def write_raw(self, data: bytes) -> None:
        self.wfile.write(data)

    def abort(self) -> None:
        """Close the connection without ending the response (a cut watch)."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def send_obj(self, code: int, obj: Any) -> None:
        self.send_bytes(code, json.dumps(obj, separators=(",", ":")).encode())

    def send_status(self, exc: StatusError) -> None:
        headers = dict(exc.headers)
        if exc.code == 429:
            headers.setdefault("X-Kubernetes-PF-FlowSchema-UID", "fake-flowschema")
            headers.setdefault("X-Kubernetes-PF-PriorityLevel-UID", "fake-prioritylevel")
        self.send_bytes(exc.code, json.dumps(exc.body, separators=(",", ":")).encode(), headers)

    # -- dispatch ------------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():  # trailers
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _dispatch(self, method: str) -> None:
        ctx = self.ctx
        self.streaming = False
        self.table = False
        self.warnings: list[str] = []
        split = urlsplit(self.path)
        path = unquote(split.path)
        query = {k: v[0] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        route = parse_route(path, ctx.registry)
        verb = derive_verb(method, route, query)
        body = self._read_body()
        user = self._user()
        self.request_log.record(method, path, query, dict(self.headers.items()), verb, body, user or "")
        try:
            if ctx.faults.delay > 0 and ctx.stopping.wait(ctx.faults.delay):
                self.close_connection = True
                return
            self._check_auth_and_faults(verb, path, route, user)
            if route is None:
                raise StatusError(
                    404,
                    _status.status_body(
                        404, "NotFound", "the server could not find the requested resource"
                    ),
                )
            self.table = wants_table(self.headers.get("Accept", ""))
            if route.discovery == "openapi":
                self._openapi(route.group)
                return
            if not self._accepts_json() and not self.table:
                raise StatusError(
                    406,
                    _status.status_body(
                        406,
                        "NotAcceptable",
                        "only the following media types are accepted: application/json",
                    ),
                )
            if route.discovery is not None:
                self._discovery(route)
            else:
                self._resource(method, verb, route, query, body)
        except StatusError as exc:
            self.send_status(exc)
        except OSError:
            raise  # the connection broke; nothing can be answered
        except Exception as exc:  # a bug in the fake: answer like the real server's panic handler
            log.exception("fake API server: %s %s failed", method, path)
            if self.streaming:
                raise
            self.send_status(
                StatusError(
                    500,
                    _status.status_body(
                        500,
                        "InternalError",
                        f"Internal error occurred: {type(exc).__name__}: {exc}",
                    ),
                )
            )

    def _openapi(self, which: str) -> None:
        """``/openapi/v2`` (JSON only: 406 to a protobuf-only Accept) and ``/openapi/v3[/gv]``."""
        ctx = self.ctx
        if which == "v2":
            if not self._accepts_json():
                raise StatusError(406, _status.status_body(
                    406, "NotAcceptable",
                    "only the following media types are accepted: application/json"))
            self.send_bytes(200, ctx.openapi.v2())
        elif which == "v3":
            self.send_obj(200, ctx.openapi.v3_root())
        else:
            doc = ctx.openapi.v3(which[len("v3/"):])
            if doc is None:
                raise StatusError(404, _status.status_body(
                    404, "NotFound", "the server could not find the requested resource"))
            self.send_bytes(200, doc)

    def _accepts_json(self) -> bool:
        """Whether plain JSON is acceptable. Media types with parameters asking for another shape
        (``;as=APIGroupDiscoveryList`` aggregated discovery, ``;as=Table``) are not plain JSON: a
        client that accepts only those gets 406, as from a server without them, and falls back."""
        accept = self.headers.get("Accept", "")
        if not accept:
            return True
        for media in accept.split(","):
            media = media.strip()
            if "as=" in media:
                continue
            if any(m in media for m in ("json", "*/*", "application/*")):
                return True
        return False

    def _user(self) -> str | None:
        """Who sent the request: the client certificate's CN, else the token's user, else None."""
        ctx = self.ctx
        if ctx.settings.client_ca is not None and isinstance(self.connection, ssl.SSLSocket):
            cert = self.connection.getpeercert()
            if cert:
                subject: Any = cert.get("subject", ())
                for rdn in subject:
                    for key, value in rdn:
                        if key == "commonName":
                            return str(value)
        if ctx.settings.expected_token is not None:
            if self.headers.get("Authorization", "") == f"Bearer {ctx.settings.expected_token}":
                return "token-user"
        return None

    def _check_auth_and_faults(
        self, verb: str, path: str, route: Route | None, user: str | None
    ) -> None:
        ctx = self.ctx
        if (ctx.settings.expected_token is not None or ctx.settings.client_ca is not None) and user is None:
            raise StatusError(401, _status.status_body(401, "Unauthorized", "Unauthorized"))
        rule = ctx.faults.take_rule(verb, path)
        if rule is not None:
            raise _status.for_code(
                rule.code,
                verb=verb,
                rtype=route.rtype if route else None,
                namespace=route.namespace if route else None,
                message=rule.message,
                retry_after=rule.retry_after,
            )

    def _discovery(self, route: Route) -> None:
        ctx = self.ctx
        kind = route.discovery
        if kind in ("/healthz", "/livez", "/readyz"):
            self.send_bytes(200, b"ok", content_type="text/plain; charset=utf-8")
        elif kind == "/version":
            self.send_obj(
                200,
                {
                    "major": "1",
                    "minor": "30",
                    "gitVersion": "v1.30.2",
                    "gitCommit": "fake",
                    "gitTreeState": "clean",
                    "buildDate": "2024-06-11T00:00:00Z",
                    "goVersion": "go1.22.4",
                    "compiler": "gc",
                    "platform": "linux/amd64",
                },
            )
        elif kind == "/api":
            port = self.server.server_address[1]  # type: ignore[index]
            self.send_obj(200, ctx.registry.api_versions(f"127.0.0.1:{port}"))
        elif kind == "/apis":
            self.send_obj(200, ctx.registry.group_list())
        elif kind == "group":
            group = next(
                (g for g in ctx.registry.group_list()["groups"] if g["name"] == route.group), None
            )
            if group is None:
                raise StatusError(
                    404,
                    _status.status_body(
                        404, "NotFound", "the server could not find the requested resource"
                    ),
                )
            self.send_obj(200, {"kind": "APIGroup", "apiVersion": "v1", **group})
        else:
            doc = ctx.registry.resource_list(route.group, route.version)
            if doc is None:
                raise StatusError(
                    404,
                    _status.status_body(
                        404, "NotFound", "the server could not find the requested resource"
                    ),
                )
            self.send_obj(200, doc)

    def _manager(self, query: dict[str, str]) -> str:
        """The field manager of a write: ``fieldManager``, else the User-Agent's product name."""
        manager = query.get("fieldManager", "")
        if manager:
            return manager
        agent = (self.headers.get("User-Agent") or "").split("/")[0]
        return "".join(ch for ch in agent if ch.isprintable())[:128] or "unknown"

    def _content_type(self) -> str:
        return (self.headers.get("Content-Type") or "").split(";")[0].strip()

    def _parse_yaml(self, body: bytes) -> Any:
        try:
            return yaml.safe_load(body or b"null")
        except yaml.YAMLError as exc:
            raise _status.bad_request(f"the request body is not valid YAML: {exc}") from None

    def _scale(self, verb: str, route: Route, body: bytes) -> None:
        store = self.ctx.store
        rtype, name, ns = route.rtype, route.name, route.namespace
        assert rtype is not None and name is not None
        if verb == "get":
            self.send_obj(200, get_scale(store, rtype, name, ns))
        elif verb == "update":
            self.send_obj(200, update_scale(store, rtype, name, ns, self._parse_json(body)))
        elif verb == "patch":
            ctype = self._content_type()
            self.send_obj(
                200, patch_scale(store, rtype, name, ns, ctype, self._parse_json(body))
            )
        else:
            raise _method_not_allowed()

    def _parse_json(self, body: bytes) -> Any:
        ctype = self._content_type()
        if ctype == "application/vnd.kubernetes.protobuf":
            try:
                return decode_body(body, definition_for)
            except ProtobufError as exc:
                raise StatusError(415, _status.status_body(
                    415, "UnsupportedMediaType",
                    f"the body of the request was in an unknown format - accepted media types "
                    f"include: application/json, application/yaml ({exc})")) from None
        if ctype in ("application/yaml", "application/x-yaml") and self.command in ("POST", "PUT"):
            return self._parse_yaml(body)
        try:
            return json.loads(body or b"null")
        except ValueError as exc:
            raise _status.bad_request(f"the request body is not valid JSON: {exc}") from None

    def _check_body_type(self, method: str) -> None:
        """415 for a body the fake cannot decode (protobuf, CBOR), as content negotiation does."""
        ctype = self._content_type()
        if method in ("POST", "PUT", "PATCH") and (
                ctype in ("application/cbor", "application/apply-patch+cbor")
                or (method == "PATCH" and "protobuf" in ctype)):
            raise StatusError(415, _status.status_body(
                415, "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types "
                "include: application/json, application/yaml"))

    def _resource(
        self, method: str, verb: str, route: Route, query: dict[str, str], body: bytes
    ) -> None:
        store = self.ctx.store
        if route.subresource is not None and route.rtype is not None and not subresource_ok(
                route.subresource, route.rtype):
            # a custom resource's subresource its CRD does not declare (kube-apiserver's CRD handler)
            raise _status.not_found(route.rtype, route.name or "")
        self._check_body_type(method)
        if route.subresource is not None and verb not in ("get", "update", "patch"):
            raise _method_not_allowed()
        dry_run = query.get("dryRun")
        if dry_run is not None and dry_run != "All":
            raise _status.bad_request(
                f'Invalid dryRun: Unsupported value: "{dry_run}": supported values: "All"'
            )
        if verb in ("delete", "deletecollection") and body.strip():
            options = self._parse_json(body)  # DeleteOptions may carry dryRun too
            if isinstance(options, dict) and "All" in (options.get("dryRun") or ()):
                dry_run = "All"
        validation = query.get("fieldValidation", "")
        if validation not in ("", "Ignore", "Warn", "Strict"):
            raise _status.bad_request(
                f'fieldValidation parameter unsupported: "{validation}". Supported values are: '
                '"Ignore", "Warn", "Strict"'
            )
        with request_context(validation) as warnings:
            self.warnings = warnings if validation != "Ignore" else []
            if dry_run and verb in _WRITES:
                with store.dry_run():
                    self._serve_resource(verb, route, query, body)
            else:
                self._serve_resource(verb, route, query, body)

    def _serve_resource(self, verb: str, route: Route, query: dict[str, str], body: bytes) -> None:
        ctx, store = self.ctx, self.ctx.store
        rtype = route.rtype
        assert rtype is not None
        ns, name = route.namespace, route.name
        if route.subresource is None and verb not in rtype.served_verbs:
            raise _method_not_allowed()
        if verb == "create" and rtype.verbs == ("create",):
            self.send_obj(201, review(ctx, rtype, self._parse_json(body), ns,
                                      self._user() or "system:admin"))
            return
        if route.subresource == "scale":
            self._scale(verb, route, body)
        elif verb == "watch":
            serve_watch(self, ctx, rtype, ns, name, query, table=self.table)
        elif verb == "list":
            data = list_body(ctx, rtype, ns, query)
            if self.table:
                listed = json.loads(data)
                self.send_obj(200, to_table(rtype.group, rtype.kind, rtype.builtin,
                                            listed.get("items") or [], listed.get("metadata", {}),
                                            query.get("includeObject", "Metadata")))
                return
            self.send_bytes(200, data)
        elif verb == "get":
            assert name is not None
            if query.get("resourceVersion", "") not in ("", "0"):
                wait_not_too_large(ctx, parse_rv(query["resourceVersion"]))
            entry = store.get(rtype, name, ns)
            if self.table and route.subresource is None:
                self.send_obj(200, to_table(
                    rtype.group, rtype.kind, rtype.builtin, [entry.obj],
                    {"resourceVersion": entry.obj["metadata"].get("resourceVersion", "")},
                    query.get("includeObject", "Metadata")))
                return
            self.send_bytes(200, entry.full())
        elif verb == "create":
            if name is not None or (rtype.namespaced and ns is None):
                raise _method_not_allowed()
            obj = self._parse_json(body)
            if not isinstance(obj, dict):
                raise _status.bad_request("the request body must be a JSON object")
            _check_kind(rtype, obj)
            self.send_obj(201, store.create(rtype, obj, ns, manager=self._manager(query),
                                            reset_status=True))
        elif verb == "update":
            obj = self._parse_json(body)
            if not isinstance(obj, dict):
                raise _status.bad_request("the request body must be a JSON object")
            _check_kind(rtype, obj)
            assert name is not None
            self.send_obj(200, store.replace(rtype, name, ns, obj, subresource=route.subresource,
                                             manager=self._manager(query)))
        elif verb == "patch":
            assert name is not None
            ctype = self._content_type()
            force = query.get("force")
            if ctype == APPLY_PATCH:
                manager = query.get("fieldManager", "")
                if not manager:
                    raise _status.field_manager_required()
                obj, created = store.apply(
                    rtype, name, ns, self._parse_yaml(body), manager, route.subresource,
                    force=force in ("true", "1"),
                )
                self.send_obj(201 if created else 200, obj)
                return
            if force is not None:
                raise _status.invalid_options(
                    "force", "may not be specified for non-apply patch", kind="PatchOptions"
                )
            result = store.patch(rtype, name, ns, ctype, self._parse_json(body), route.subresource,
                                 manager=self._manager(query))
            self.send_obj(200, result)
        elif verb == "delete":
            assert name is not None
            options = self._parse_json(body) if body.strip() else {}
            if not isinstance(options, dict):
                raise _status.bad_request("DeleteOptions must be a JSON object")
            policy = options.get("propagationPolicy")
            if policy is not None and policy not in ("Foreground", "Background", "Orphan"):
                raise _status.bad_request(
                    f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported '
                    f'value: "{policy}": supported values: "Foreground", "Background", "Orphan"'
                )
            preconditions = options.get("preconditions")
            result = store.delete(
                rtype, name, ns, preconditions if isinstance(preconditions, dict) else None,
                grace_period=_grace_period(options, query), kubelet=ctx.settings.kubelet,
            )
            self.send_obj(200, _deleted_answer(rtype, result, store.exists(rtype, name, ns)
                                               and not query.get("dryRun")))
        elif verb == "deletecollection":
            # kube-apiserver answers the <Kind>List of the objects it deleted, as it listed them
            # before deleting (no deletionTimestamp yet), also for a dry run and when none matched
            filters = parse_filters(rtype, ns, query)
            with_kind = ctx.settings.list_items_have_kind or not rtype.builtin
            with store.lock:
                revision = store.revision
                matched = sorted(
                    (e for e in store.all_objects(rtype)
                     if (ns is None or e.obj["metadata"].get("namespace") == ns) and filters.matches(e.obj)),
                    key=lambda e: (e.obj["metadata"].get("namespace") or "", e.obj["metadata"]["name"]))
                items = [json.loads(e.full() if with_kind else e.bare()) for e in matched]
                for entry in matched:
                    meta = entry.obj["metadata"]
                    store.delete(rtype, meta["name"], meta.get("namespace"),
                                 grace_period=_grace_period({}, query), kubelet=ctx.settings.kubelet)
            self.send_obj(200, {"kind": f"{rtype.kind}List", "apiVersion": rtype.api_version,
                                "metadata": {"resourceVersion": str(revision)}, "items": items})
        else:
            raise _method_not_allowed()


def _grace_period(options: dict[str, Any], query: dict[str, str]) -> int | None:
    """``gracePeriodSeconds`` from DeleteOptions or the query (None: the object's default)."""
    value = options.get("gracePeriodSeconds", query.get("gracePeriodSeconds"))
    if value is None or value == "":
        return None
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        raise _status.bad_request(f"invalid gracePeriodSeconds {value!r}") from None


# Kinds whose registry answers a DELETE with the deleted object (others answer a Status).
_RETURN_DELETED = frozenset({("", "Pod"), ("", "Service"), ("", "Namespace")})


def _deleted_answer(rtype: Any, obj: dict[str, Any], kept: bool) -> dict[str, Any]:
    """What a DELETE answers: the object when it is kept (finalizers, graceful termination) or
    its kind returns deleted objects, else a success Status naming it."""
    # Custom resources: kube-apiserver answers a Status too; the object is kept for now
    # (KNOWN_DIFFERENCES.md).
    if kept or not rtype.builtin or (rtype.group, rtype.kind) in _RETURN_DELETED:
        return obj
    details: dict[str, Any] = {"name": obj["metadata"].get("name", "")}
    if rtype.group:
        details["group"] = rtype.group
    details["kind"] = rtype.plural
    details["uid"] = obj["metadata"].get("uid", "")
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": details}


def _check_kind(rtype: Any, obj: dict[str, Any]) -> None:
    """400 for a body of another kind than the URL's (the real decoder cannot convert it)."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if not rtype.builtin or not kind or (kind == rtype.kind and api_version in (
            None, "", rtype.api_version)):
        return
    version = str(api_version or rtype.api_version).rsplit("/", 1)[-1]
    internal = (rtype.group or "core").split(".")[0]
    raise _status.bad_request(
        f'{kind} in version "{version}" cannot be handled as a {rtype.kind}: converting '
        f"({version}.{kind}) to ({internal}.{rtype.kind}): unknown conversion")
