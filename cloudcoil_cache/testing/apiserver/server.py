"""FakeAPIServer: an in-process kube-apiserver on 127.0.0.1, with fault injection and a log."""

from __future__ import annotations

import base64
import logging
import os
import ssl
import threading
from typing import Any, Callable, Generic, TypeVar, cast

import yaml

from ...errors import WaitTimeout
from .._files import write_private
from .endpoints.context import OpenWatches, ServerContext, Settings
from .endpoints.faults import FaultState
from .endpoints.openapi import OpenAPI
from .fault_api import FaultInjection
from .http.httpserver import HTTPServer
from .http.request_log import RecordedRequest, RequestLog
from .machinery.resources import ResourceRegistry, ResourceType
from .object_api import ObjectAPI
from .registry.admission import Admission
from .registry.bootstrap import preload_cluster
from .registry.crds import commit_listener
from .registry.webhooks import WebhookCall, Webhooks
from .storage.store import Store
from .storage.watchers import Watcher

__all__ = ["FakeAPIServer"]

log = logging.getLogger(__name__)

_JOIN_SECONDS = 5.0


def _pem(value: bytes | str | os.PathLike[str] | None, what: str) -> bytes | None:
    """PEM bytes from bytes, PEM text or a file path."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    if isinstance(value, str) and "-----BEGIN" in value:
        return value.encode()
    try:
        with open(value, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise ValueError(f"{what}: cannot read {os.fspath(value)!r}: {exc.strerror}") from None


_T = TypeVar("_T")


class _Setting(Generic[_T]):
    """A ``FakeAPIServer`` attribute kept in its context's ``Settings`` (read there per request)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, server: FakeAPIServer, owner: type | None = None) -> _T:
        return cast(_T, getattr(server._context.settings, self._name))

    def __set__(self, server: FakeAPIServer, value: _T) -> None:
        setattr(server._context.settings, self._name, value)


def _check_tls_options(
    ssl_context: ssl.SSLContext | None,
    certfile: str | os.PathLike[str] | None,
    keyfile: str | os.PathLike[str] | None,
    client_ca: bytes | str | os.PathLike[str] | None,
    require_client_cert: bool,
) -> None:
    if ssl_context is not None and certfile is not None:
        raise ValueError("pass either ssl_context or certfile/keyfile, not both")
    if keyfile is not None and certfile is None:
        raise ValueError("keyfile needs a certfile")
    if (client_ca is not None or require_client_cert) and (ssl_context is None and certfile is None):
        raise ValueError("client certificates need HTTPS: pass certfile/keyfile or ssl_context")
    if require_client_cert and client_ca is None:
        raise ValueError("require_client_cert needs client_ca")


def _assemble(settings: Settings, max_history: int) -> ServerContext:
    """Storage, then the registry above it (admission handed down, the CRD controllers listening
    to commits), the bootstrap objects, and the context the endpoints get."""
    registry = ResourceRegistry()
    store = Store(max_history=max_history)
    admission = Admission(store, registry, namespace_lifecycle=settings.namespace_lifecycle)
    store.set_admission(admission.admit)
    store.add_commit_listener(commit_listener(store, registry))
    preload_cluster(store, registry, namespaces=settings.namespace_lifecycle)
    stopping = threading.Event()
    webhooks = Webhooks(store, registry, lambda: settings.webhooks)
    return ServerContext(
        settings=settings,
        store=store,
        registry=registry,
        openapi=OpenAPI(registry),
        faults=FaultState(),
        watches=OpenWatches(stopping),
        stopping=stopping,
        webhooks=webhooks,
    )


class FakeAPIServer(FaultInjection, ObjectAPI):
    """A threaded fake kube-apiserver for tests, on ``127.0.0.1`` at a random port.

    Serves discovery, CRUD (with optimistic concurrency, patches, ``/status``, and ``/scale``
    of Deployments, ReplicaSets, StatefulSets and custom resources whose CRD declares it), LIST
    (selectors, ``limit``/``continue`` from consistent snapshots, resourceVersion rules) and WATCH
    (resume from history, bookmarks, ``sendInitialEvents``, selector transitions, timeouts) for the
    built-in kinds and for custom resources added with ``register_resource``. One global integer
    revision is shared by all kinds, like etcd's.

    Also: fault injection (``drop_watches``, ``send_malformed_line``, ``send_error_event``,
    ``fail_next``, ``stall_watches``/``resume_watches``, ``split_events``, ``set_delay``/``delay``,
    ``compact``, ``restart``; see ``FaultInjection``), a direct object API without HTTP
    (``create``/``update``/``patch``/``delete``/``get``/``list``; see ``ObjectAPI``), a request
    log (``requests``, ``wait_for_request``) and ``write_kubeconfig``.

    HTTPS: pass ``certfile``/``keyfile`` (PEM) or a server-side ``ssl_context``, and ``ca_cert``
    (the CA that signed the server certificate; ``write_kubeconfig`` writes it as
    ``certificate-authority-data``). ``client_ca`` (PEM or path) makes the server verify client
    certificates signed by that CA (``require_client_cert=True`` fails handshakes without one);
    the certificate's CN is the request's user (``RecordedRequest.user``).

    Authentication: when ``expected_token`` or ``client_ca`` is set, a request must carry the
    bearer token or a verified client certificate, else 401.

    Patches: JSON merge, JSON patch, strategic merge (built-in kinds; lists merged by the
    patch-merge keys of the 1.30 schema, ``$patch: delete/replace``; 415 for custom resources as
    on the real server) and server-side apply (``application/apply-patch+yaml``).

    Like kube-apiserver, writes are validated (names, labels, the 1.30 schema's types and required
    fields, per-kind rules, immutable fields; 422 ``Invalid`` with a cause per field), defaulted
    (pod, container, deployment, service, job, ... defaults) and record ``managedFields``
    (``fieldManager``, else the ``User-Agent``). Server-side apply models field ownership:
    conflicts between managers (409 unless ``force``) and removal of the fields a manager stops
    applying. Objects with finalizers get a ``deletionTimestamp`` and stay until the last one is
    removed; a pod on a node is deleted gracefully (``kubelet=False`` keeps it terminating); a
    deleted namespace terminates and removes its content. Discovery, CRUD, ``/openapi/v2``,
    ``/openapi/v3`` and server-side tables cover every kind of the 1.30 spec; creating a
    CustomResourceDefinition serves its kind (the POST answers it without conditions, then two
    status writes, MODIFIED events, accept its names and make it ``Established``, as
    kube-apiserver's controllers do). The ``default/kubernetes`` Service exists from the start.
    ``dryRun=All`` answers a write without storing it.

    Admission webhooks (``webhooks=True``, the default, as kube-apiserver): creates, updates,
    patches and deletes over HTTP call the ``clientConfig.url`` webhooks of the stored
    ``admissionregistration.k8s.io/v1`` Mutating/ValidatingWebhookConfigurations that match
    (rules, scope, ``namespaceSelector``, ``objectSelector``), over HTTPS verified against
    ``caBundle``, with ``timeoutSeconds`` and ``failurePolicy``; mutating ones first (their
    JSONPatch applied, the result validated again), then validating ones; denials, failures and
    warnings come back with kube-apiserver's wordings. No webhook is called with the store's lock
    held. ``webhook_calls`` records each call. The direct object API (``server.create()``, ...)
    does not call them (it seeds state). ``webhooks=False`` stores configurations without calling.
    ``cloudcoil_cache/testing/KNOWN_DIFFERENCES.md`` lists what still differs, and why.

    Constructor options beyond the settings below: ``namespace_lifecycle`` (default False: objects
    may be created in namespaces that do not exist; True: 404/403 like the NamespaceLifecycle
    admission plugin, and the four system namespaces exist from the start) and ``kubelet``
    (default True: terminating pods on nodes are removed at once after their MODIFIED event).

    Settings (plain attributes, change them at any time):

    - ``bookmark_interval`` (s, default 60.0; the pytest fixture uses 1.0): period of BOOKMARKs
      on watches with ``allowWatchBookmarks=true``; one more is sent just before a timeout.
    - ``watch_timeout_range`` (s, default (1800.0, 3600.0), as the real server's
      ``--min-request-timeout``): a watch without ``timeoutSeconds`` ends cleanly after a random
      time in this range (the pytest fixture uses 5-10 s).
    - ``too_large_wait`` (s, default 0.1): how long a request for a future resourceVersion waits
      for it before the 504 "Too large resource version" (the real watch cache waits ~3 s).
    - ``expired_watch_mode``: ``"event"`` (default: 200 + ERROR event code 410, like the watch
      cache) or ``"http"`` (an HTTP 410 response) for watches from a compacted resourceVersion.
    - ``future_watch_mode``: a watch from a resourceVersion the server has not reached (a client
      resuming after ``restart(revision=lower)``, an etcd restore): ``"too_large"`` (default: it
      waits ``too_large_wait`` for it, then 504 "Too large resource version") or ``"silent"``, what
      kube-apiserver 1.33 does (measured): 200 at once, then nothing at or below that
      resourceVersion, neither events nor bookmarks, until the revision passes it; the watch ends
      at its timeout (kubernetes#107457).
    - ``continue_ttl`` (s or None): continue tokens older than this expire with 410 (they also
      expire on ``compact()``).
    - ``list_items_have_kind`` (default False): built-in LIST items carry kind/apiVersion.
    - ``ignore_limit_for_rv0`` (default False): LIST with resourceVersion=0 ignores ``limit``,
      as the watch cache does.
    - ``watch_list_enabled`` (default True): accept ``sendInitialEvents``; when False such
      watches get the 422 a server with the WatchList gate off gives.
    - ``watch_list_defaulting`` (default False): legacy watches (RV ""/"0") with bookmarks get
      the initial-events-end bookmark, as 1.34+ servers rewrite them to watch-list requests.
    - ``watch_list_unknown`` (default False): ``sendInitialEvents`` and ``resourceVersionMatch``
      on a watch are ignored (a plain watch, no initial-events-end bookmark), as by a server
      from before they existed (kube-apiserver < 1.27).
    - ``expected_token`` (default None): when set, requests without ``Authorization: Bearer
      <token>`` get 401 (change it to simulate credential rotation).
    - ``clock_skew`` (s, default 0.0): added to the ``Date`` response header.
    - ``max_history`` (events, default 100_000): older events are compacted away.
    - ``webhooks`` (default True): HTTP writes call the stored configurations' admission
      webhooks; False stores configurations without calling them.
    """

    def __init__(
        self,
        *,
        port: int = 0,
        bookmark_interval: float = 60.0,
        watch_timeout_range: tuple[float, float] = (1800.0, 3600.0),
        too_large_wait: float = 0.1,
        expired_watch_mode: str = "event",
        future_watch_mode: str = "too_large",
        continue_ttl: float | None = None,
        list_items_have_kind: bool = False,
        ignore_limit_for_rv0: bool = False,
        watch_list_enabled: bool = True,
        watch_list_defaulting: bool = False,
        watch_list_unknown: bool = False,
        expected_token: str | None = None,
        max_history: int = 100_000,
        certfile: str | os.PathLike[str] | None = None,
        keyfile: str | os.PathLike[str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
        ca_cert: bytes | str | os.PathLike[str] | None = None,
        client_ca: bytes | str | os.PathLike[str] | None = None,
        require_client_cert: bool = False,
        namespace_lifecycle: bool = False,
        kubelet: bool = True,
        webhooks: bool = True,
    ) -> None:
        if expired_watch_mode not in ("event", "http"):
            raise ValueError(f"expired_watch_mode must be 'event' or 'http', got {expired_watch_mode!r}")
        if future_watch_mode not in ("too_large", "silent"):
            raise ValueError(f"future_watch_mode must be 'too_large' or 'silent', got {future_watch_mode!r}")
        _check_tls_options(ssl_context, certfile, keyfile, client_ca, require_client_cert)
        settings = Settings(
            bookmark_interval=bookmark_interval,
            watch_timeout_range=watch_timeout_range,
            too_large_wait=too_large_wait,
            expired_watch_mode=expired_watch_mode,
            future_watch_mode=future_watch_mode,
            continue_ttl=continue_ttl,
            list_items_have_kind=list_items_have_kind,
            ignore_limit_for_rv0=ignore_limit_for_rv0,
            watch_list_enabled=watch_list_enabled,
            watch_list_defaulting=watch_list_defaulting,
            watch_list_unknown=watch_list_unknown,
            expected_token=expected_token,
            kubelet=kubelet,
            namespace_lifecycle=namespace_lifecycle,
            ca_cert=_pem(ca_cert, "ca_cert"),
            client_ca=_pem(client_ca, "client_ca"),
            webhooks=webhooks,
        )
        self._context = _assemble(settings, max_history)
        self.registry = self._context.registry
        self.openapi = self._context.openapi
        self._store = self._context.store
        self._faults = self._context.faults
        self._stopping = self._context.stopping
        self._ssl_context = self._build_ssl_context(ssl_context, certfile, keyfile, require_client_cert)
        self._tls_failures: list[str] = []
        self._tls_failed = threading.Condition()
        self._log = RequestLog()
        self._requested_port = port
        self._httpd: HTTPServer | None = None
        self._thread: threading.Thread | None = None

    bookmark_interval = _Setting[float]()
    watch_timeout_range = _Setting[tuple[float, float]]()
    too_large_wait = _Setting[float]()
    expired_watch_mode = _Setting[str]()
    future_watch_mode = _Setting[str]()
    continue_ttl = _Setting["float | None"]()
    list_items_have_kind = _Setting[bool]()
    ignore_limit_for_rv0 = _Setting[bool]()
    watch_list_enabled = _Setting[bool]()
    watch_list_defaulting = _Setting[bool]()
    watch_list_unknown = _Setting[bool]()
    expected_token = _Setting["str | None"]()
    clock_skew = _Setting[float]()
    kubelet = _Setting[bool]()
    namespace_lifecycle = _Setting[bool]()
    ca_cert = _Setting["bytes | None"]()
    client_ca = _Setting["bytes | None"]()
    webhooks = _Setting[bool]()

    @property
    def context(self) -> ServerContext:
        """What the endpoints are handed: settings, storage, registry, faults, open watches."""
        return self._context

    def _build_ssl_context(
        self,
        context: ssl.SSLContext | None,
        certfile: str | os.PathLike[str] | None,
        keyfile: str | os.PathLike[str] | None,
        require_client_cert: bool,
    ) -> ssl.SSLContext | None:
        if context is None and certfile is None:
            return None
        if context is None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            try:
                context.load_cert_chain(certfile, keyfile)  # type: ignore[arg-type]
            except (OSError, ssl.SSLError) as exc:
                raise ValueError(f"cannot load the server certificate/key: {exc}") from None
        if self._context.settings.client_ca is not None:
            context.load_verify_locations(cadata=self._context.settings.client_ca.decode())
            context.verify_mode = ssl.CERT_REQUIRED if require_client_cert else ssl.CERT_OPTIONAL
        return context

    @property
    def tls(self) -> bool:
        """Whether the server speaks HTTPS."""
        return self._ssl_context is not None

    @property
    def tls_handshake_failures(self) -> list[str]:
        """Messages of the TLS handshakes that failed so far (a copy), oldest first."""
        with self._tls_failed:
            return list(self._tls_failures)

    def wait_for_tls_handshake_failures(self, count: int = 1, timeout: float = 5.0) -> list[str]:
        """Wait until ``count`` TLS handshakes have failed (or ``timeout`` passed); their messages.

        The client can see a refused handshake before the server's thread has noted it (TLS 1.3
        finishes the client's side first), so a test that asserts on failures waits here.
        """
        with self._tls_failed:
            self._tls_failed.wait_for(lambda: len(self._tls_failures) >= count, timeout)
            return list(self._tls_failures)

    def _note_tls_failure(self, message: str) -> None:
        with self._tls_failed:
            self._tls_failures.append(message)
            self._tls_failed.notify_all()

    def __repr__(self) -> str:
        state = f"url={self.url!r}" if self._httpd is not None else "stopped"
        return f"<FakeAPIServer {state} revision={self.revision}>"

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FakeAPIServer:
        """Bind 127.0.0.1 and serve in a named background thread; returns ``self``."""
        if self._httpd is not None:
            raise RuntimeError("FakeAPIServer is already started")
        self._stopping.clear()
        self._context.webhooks.resume()
        self._httpd = HTTPServer(("127.0.0.1", self._requested_port), self._context, self._log, self._note_tls_failure)
        if self._ssl_context is not None:
            self._httpd.socket = self._ssl_context.wrap_socket(
                self._httpd.socket, server_side=True, do_handshake_on_connect=False
            )
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=f"fake-apiserver-{self.port}",
            daemon=True,
        )
        self._thread.start()
        log.debug("fake API server listening on %s", self.url)
        return self

    def stop(self) -> None:
        """Close every connection (watches end abruptly), stop serving and join all threads."""
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None:
            return
        self._stopping.set()
        self._context.webhooks.abort_calls()  # a slow webhook must not hold the request threads
        self._store.wake_waiters()
        self._close_watchers()
        httpd.shutdown()
        httpd.server_close()
        httpd.cut_connections()
        self._close_watchers()
        httpd.join_connections(_JOIN_SECONDS)
        thread.join(_JOIN_SECONDS)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeAPIServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeAPIServer is not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        scheme = "https" if self._ssl_context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    @property
    def revision(self) -> int:
        """The current global resourceVersion (an int; every write adds one)."""
        return self._store.revision

    def write_kubeconfig(
        self,
        path: str | os.PathLike[str],
        *,
        namespace: str = "default",
        token: str | None = None,
        token_file: str | os.PathLike[str] | None = None,
        client_cert: tuple[bytes, bytes] | None = None,
        ca_cert: bytes | None = None,
    ) -> str:
        """Write a kubeconfig whose current context points at this server; returns the path.

        ``token`` defaults to ``expected_token`` (unless ``token_file`` is given: the user's
        ``tokenFile``, re-read by clients after a 401); ``client_cert`` is ``(cert_pem, key_pem)``,
        written as ``client-certificate-data``/``client-key-data``. For HTTPS the cluster gets
        ``certificate-authority-data`` from ``ca_cert`` (default: the server's ``ca_cert``).
        """
        if token is None and token_file is None:
            token = self.expected_token
        user: dict[str, Any] = {"token": token} if token else {}
        if token_file is not None:
            user["tokenFile"] = os.fspath(token_file)
        if client_cert is not None:
            cert_pem, key_pem = client_cert
            user["client-certificate-data"] = base64.b64encode(cert_pem).decode()
            user["client-key-data"] = base64.b64encode(key_pem).decode()
        cluster: dict[str, Any] = {"server": self.url}
        ca = ca_cert if ca_cert is not None else self.ca_cert
        if self.tls and ca is not None:
            cluster["certificate-authority-data"] = base64.b64encode(ca).decode()
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "preferences": {},
            "clusters": [{"name": "fake", "cluster": cluster}],
            "users": [{"name": "fake-user", "user": user}],
            "contexts": [
                {
                    "name": "fake",
                    "context": {"cluster": "fake", "user": "fake-user", "namespace": namespace},
                }
            ],
            "current-context": "fake",
        }
        return write_private(path, yaml.safe_dump(config, sort_keys=False))  # it holds credentials: 0600

    def register_resource(
        self,
        group: str,
        version: str,
        kind: str,
        plural: str,
        namespaced: bool = True,
        *,
        singular: str = "",
        status_subresource: bool = True,
        schema: dict[str, Any] | None = None,
        short_names: tuple[str, ...] = (),
        categories: tuple[str, ...] = (),
    ) -> ResourceType:
        """Serve a custom resource at ``/apis/{group}/{version}/...`` (LIST items carry kind).

        ``schema`` (an ``openAPIV3Schema``) makes writes validated against it (types, required,
        enums) and pruned of undeclared fields, as for a CRD. Creating a
        CustomResourceDefinition object registers its served versions the same way.
        """
        if not group or not version or not kind or not plural:
            raise ValueError("register_resource needs a non-empty group, version, kind and plural")
        rtype = ResourceType(
            group=group,
            version=version,
            kind=kind,
            plural=plural,
            namespaced=namespaced,
            singular=singular,
            has_status=status_subresource,
            builtin=False,
            has_generation=True,
            short_names=tuple(short_names),
            categories=tuple(categories),
            schema=schema,
        )
        self.registry.add(rtype)
        return rtype

    # -- watches -------------------------------------------------------------------------------

    def _watchers(self) -> list[Watcher]:
        return self._context.watches.snapshot()

    def _all_watchers(self) -> list[Watcher]:
        return self._context.watches.every()

    def _close_watchers(self) -> None:
        """Close every open watch, and every one registered in the store whose stream has not started yet
        (a request between its registration and its first byte must not outlive a restart)."""
        self._context.watches.close_all()
        for watcher in self._store.watchers():
            watcher.close()

    def _cut_connections(self) -> None:
        if self._httpd is not None:
            self._httpd.cut_connections()

    @property
    def active_watches(self) -> int:
        """How many watch streams are open now (not counting ones already closed, dropped or ended by
        an ERROR event whose thread has not finished yet)."""
        return len(self._watchers())

    def wait_for_watches(self, count: int = 1, timeout: float = 5.0) -> None:
        """Wait until at least ``count`` watch streams are open (``WaitTimeout`` otherwise)."""
        open_now = self._context.watches.wait_for(count, timeout)
        if open_now < count:
            raise WaitTimeout(f"{open_now} watches open after {timeout} s, wanted {count}")

    # -- request log ---------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far (a copy), oldest first."""
        return self._log.snapshot()

    def clear_requests(self) -> None:
        self._log.clear()

    def wait_for_request(
        self, predicate: Callable[[RecordedRequest], bool], timeout: float = 5.0, *, served: bool = False
    ) -> RecordedRequest:
        """The first logged request matching ``predicate``, waiting up to ``timeout`` s for it.

        A request is logged when it arrives, before the server acts on it; with ``served=True`` this
        also waits until the server has finished with it, so a write's effect can be read back.
        Already-logged requests count; call ``clear_requests()`` first to wait for a new one.
        Raises ``WaitTimeout``.
        """
        return self._log.wait_for(predicate, timeout, served)

    # -- admission webhook calls ---------------------------------------------------------------

    @property
    def webhook_calls(self) -> list[WebhookCall]:
        """Every admission webhook call so far (a copy), oldest first: the review's ``request``
        sent, the ``response`` answered or the ``error`` of a failed call."""
        return self._context.webhooks.calls

    def clear_webhook_calls(self) -> None:
        self._context.webhooks.clear_calls()

    def wait_for_webhook_calls(self, count: int = 1, timeout: float = 5.0) -> list[WebhookCall]:
        """Wait until ``count`` webhook calls are recorded (``WaitTimeout`` otherwise); all of them."""
        calls = self._context.webhooks.wait_for_calls(count, timeout)
        if len(calls) < count:
            raise WaitTimeout(f"{len(calls)} webhook calls after {timeout} s, wanted {count}")
        return calls
