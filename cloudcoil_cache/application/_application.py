"""Application: controllers packaged to run, with their manifests (exact RBAC), install and a command line."""

from __future__ import annotations

import re
import sys
import threading
from typing import Any, Iterable, Sequence

from cloudcoil_cache.admission import AdmissionWebhook, WebhookServer
from cloudcoil_cache.application._command import main
from cloudcoil_cache.application._install import apply_all, wait_available, wait_established
from cloudcoil_cache.application._manifests import Layout, build_manifests, crd_document
from cloudcoil_cache.application._rbac import Need, controller_needs, extra_needs, lease_needs, ring_needs
from cloudcoil_cache.application._webhooks import CERT_DIR, Webhooks
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, LeaderElection, Manager, Ring, register_shard_webhook
from cloudcoil_cache.controller._kinds import bind_kinds, unbound
from cloudcoil_cache.errors import CloudcoilError, ConfigError

__all__ = ["Application"]

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
DEFAULT_NAMESPACE = "default"


def _check_label(value: Any, what: str) -> str:
    if not isinstance(value, str) or not _DNS_LABEL.fullmatch(value):
        raise ValueError(f"{what} must be a DNS label (lowercase letters, digits and '-', at most 63), got {value!r}")
    return value


def _caller_module(depth: int) -> str | None:
    """The importable name of the module that created the Application (``__main__`` resolved when run with -m)."""
    name = sys._getframe(depth + 1).f_globals.get("__name__")
    if name == "__main__":
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        name = getattr(spec, "name", None)
    return name if isinstance(name, str) and _MODULE.fullmatch(name) else None


class Application:
    """Controllers packaged as one deployable program.

    - ``run()`` builds a ``Manager`` of the controllers (leader election, health server on
      ``health_port``) and runs it until SIGTERM/SIGINT or ``stop`` is set, as ``Manager.run``.
    - ``manifests()`` returns the objects to install, in apply order: the Namespace (with
      ``create_namespace=True``), the ServiceAccount, a ClusterRole + ClusterRoleBinding for
      cluster-wide needs and a Role + RoleBinding per namespace with exactly the verbs the controller
      runtime uses for what the controllers declare (see ``needs()``), and, given an ``image``, the
      Deployment running ``python -m <module> run`` with probes on /healthz and /readyz; with
      ``webhooks``, also a Service and the Validating/MutatingWebhookConfigurations (last).
    - ``install()`` applies them (server-side apply, field manager = the application's name), the
      ``crds`` first.
    - ``main()`` is the command line: ``run``, ``manifests`` and ``install``
      (``if __name__ == "__main__": app.main()``).

    RBAC: informers LIST and WATCH; finalizers and status are guarded PATCHes (status through the
    ``status`` subresource); ``ctx.ensure`` server-side applies owned children (``create`` and
    ``patch``); Events are created and patched; the Lease is read, created and updated. What your
    own code does beyond that (a live ``ctx.get``, writes through ``ctx.client``, ``mutate``,
    ``ensure`` of a kind not declared with ``owns()``) is yours to declare: ``extra_rules`` takes
    PolicyRule dicts (``{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}``, granted
    in the application's namespace) or ``Need`` objects (any namespace, or None: cluster-wide).

    ``webhooks``: an ``AdmissionWebhook`` (served on ``0.0.0.0:9443`` with ``tls.crt``/``tls.key``
    from ``webhook_cert_dir``, where the Deployment mounts the TLS Secret ``<name>-webhook-tls``) or a
    ``WebhookServer`` (as given; its ``tls_secret`` names the Secret). ``run()`` serves it on every
    replica through the Manager. The configurations' caBundle comes from ``ca_bundle`` (PEM) or
    ``ca_file``; without one it is left out, to be injected (e.g. by cert-manager's CA injector).
    Webhooks add no RBAC: installing the configurations is an admin's step (``install()``).

    ``leader_election``: a ``LeaderElection``, or True for one on a Lease named after the application.
    ``sharding``: a ``Ring`` (instead of ``leader_election``): every replica reconciles its share of the
    objects (docs/sharding.md); the ring's mutating webhook is added to ``webhooks`` (an
    ``AdmissionWebhook`` of its own when none is given; ``shard_webhook=False``: none, the sharder
    labels every object), and the RBAC grants its Leases and labels.
    ``module``: the module the Deployment runs (default: the module that created the Application).
    """

    def __init__(
        self,
        name: str,
        *controllers: Controller,
        namespace: str | None = None,
        config: Config | None = None,
        leader_election: LeaderElection | bool | None = None,
        webhooks: Any = None,
        extra_rules: Iterable[Any] = (),
        ca_bundle: bytes | str | None = None,
        ca_file: Any = None,
        webhook_cert_dir: str = CERT_DIR,
        image: str | None = None,
        replicas: int = 1,
        health_port: int | None = 8081,
        health_host: str = "127.0.0.1",
        module: str | None = None,
        crds: Iterable[Any] = (),
        sync_timeout: float = 30.0,
        sharding: Ring | None = None,
        shard_webhook: bool = True,
    ) -> None:
        self.name = _check_label(name, "Application(name)")
        _check_controllers(controllers)
        self.sharding = _sharding(sharding, leader_election, controllers)
        if not isinstance(shard_webhook, bool):
            raise TypeError(f"Application(shard_webhook=...) must be True or False, got {shard_webhook!r}")
        if self.sharding is not None and shard_webhook:
            webhooks = _with_shard_webhook(webhooks, self.sharding, controllers, namespace)
        if health_port is not None and (
            isinstance(health_port, bool) or not isinstance(health_port, int) or not 0 <= health_port <= 65535
        ):
            raise ValueError(f"Application(health_port=...) must be a port number or None, got {health_port!r}")
        self.webhooks = (
            None
            if webhooks is None
            else Webhooks(webhooks, name=name, cert_dir=webhook_cert_dir, ca_bundle=ca_bundle, ca_file=ca_file)
        )
        if self.webhooks is None and (ca_bundle is not None or ca_file is not None):
            raise ValueError("Application(ca_bundle=/ca_file=...) is the webhooks' CA: give webhooks= too")
        self.extra_rules = list(extra_rules) if not isinstance(extra_rules, (str, bytes, dict)) else extra_rules
        if namespace is not None:
            _check_label(namespace, "Application(namespace)")
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1:
            raise ValueError(f"Application(replicas=...) must be an int >= 1, got {replicas!r}")
        _check_image(image, "Application(image=...)")
        if module is not None and (not isinstance(module, str) or not _MODULE.fullmatch(module)):
            raise ValueError(f"Application(module=...) must be a dotted module name, got {module!r}")
        self.controllers: tuple[Controller, ...] = tuple(controllers)
        self.namespace = namespace
        self.config = config
        self.leader_election = _leader_election(leader_election, name, namespace)
        self.image = image
        self.replicas = replicas
        self.health_port = health_port
        self.health_host = health_host
        self.module = module or _caller_module(1)
        self.crds = [crd_document(crd) for crd in crds]
        self.sync_timeout = sync_timeout
        self._run_lock = threading.Lock()
        self._running: tuple[Manager, threading.Event] | None = None  # the run in progress: its Manager and stop event
        # a kind whose RBAC cannot be computed, or a bad extra rule, fails here (a kind whose plural comes
        # from discovery is checked when manifests() learns it)
        for controller in self.controllers:
            if not _discovered_kinds([controller]):
                controller_needs(controller, DEFAULT_NAMESPACE)
        extra_needs(self.extra_rules, DEFAULT_NAMESPACE)

    def __repr__(self) -> str:
        return f"<Application {self.name!r} controllers={[c.name for c in self.controllers]}>"

    # ------------------------------------------------------------ running
    def manager(
        self, config: Config | None = None, *, health_port: int | None = None, health_host: str | None = None
    ) -> Manager:
        """A new ``Manager`` of the controllers, with the application's leader election, health server
        and webhook server."""
        return Manager(
            *self.controllers,
            webhooks=self.webhooks.server() if self.webhooks is not None else None,
            config=config or self.config,
            leader_election=self.leader_election,
            sharding=self.sharding,
            health_port=self.health_port if health_port is None else health_port,
            health_host=health_host or self.health_host,
            sync_timeout=self.sync_timeout,
        )

    def run(
        self, stop: threading.Event | None = None, *, health_port: int | None = None, health_host: str | None = None
    ) -> None:
        """Run the controllers until ``stop`` is set or SIGTERM/SIGINT arrives (see ``Manager.run``).
        Without a ``config``, one is made from the environment (kubeconfig or in-cluster), in the
        application's ``namespace`` when it has one."""
        stop_event = stop if stop is not None else threading.Event()
        own = Config(namespace=self.namespace) if self.config is None and self.namespace is not None else None
        try:
            manager = self.manager(own, health_port=health_port, health_host=health_host)
            with self._run_lock:
                if self._running is not None:
                    raise RuntimeError(f"Application {self.name!r}: run() is already running")
                self._running = (manager, stop_event)
            try:
                manager.run(stop_event)
            finally:
                with self._run_lock:
                    self._running = None
        finally:
            if own is not None:
                own.close()

    def stop(self) -> None:
        """End a ``run()`` in progress, from any thread (it sets the event ``run()`` waits on); returns
        once everything the run started is stopped and joined. Nothing when not running."""
        with self._run_lock:
            running = self._running
        if running is not None:
            manager, stop_event = running
            stop_event.set()
            manager.stop()

    # ---------------------------------------------------------- manifests
    def needs(self, namespace: str | None = None, *, config: Config | None = None) -> list[Need]:
        """Every RBAC need, each with the declaration it comes from (what ``manifests()`` grants).

        A kind whose plural and scope come from discovery (``get_dynamic_resource``) learns them
        first from the API server of ``config`` (default: the application's, else one made from the
        environment); ``ConfigError`` naming the kind when no server tells them."""
        self._learn_kinds(config)
        namespace = namespace or self.namespace or DEFAULT_NAMESPACE
        needs = [
            need
            for controller in self.controllers
            for need in controller_needs(controller, namespace, config or self.config)
        ]
        election = self.leader_election
        if election is not None:
            needs += lease_needs(election.name, election.namespace or namespace)
        if self.sharding is not None:
            needs += ring_needs(self.sharding, self.controllers, namespace, config or self.config)
        return needs + extra_needs(self.extra_rules, namespace)

    def manifests(
        self,
        namespace: str | None = None,
        image: str | None = None,
        *,
        create_namespace: bool = False,
        config: Config | None = None,
    ) -> list[dict[str, Any]]:
        """The objects to install, in apply order (see the class docstring). ``namespace``: where the
        application runs (default: ``Application(namespace=)``, else ``default``). Offline, unless a
        kind's plural comes from discovery (``get_dynamic_resource``): then ``config``'s API server
        (default: the application's Config, else one from the environment) is asked, as ``needs()``.

        Raises:
            ConfigError: a dynamic kind's plural could not be learnt (no cluster reachable, or the
                server does not serve the kind), naming the kind.
        """
        if namespace is not None:
            _check_label(namespace, "manifests(namespace=...)")
        _check_image(image, "manifests(image=...)")
        namespace = namespace or self.namespace or DEFAULT_NAMESPACE
        layout = Layout(
            name=self.name,
            namespace=namespace,
            needs=self.needs(namespace, config=config),
            image=image or self.image,
            replicas=self.replicas,
            health_port=self.health_port,
            module=self.module,
            create_namespace=create_namespace,
            webhooks=self.webhooks.layout(namespace) if self.webhooks is not None else None,
        )
        return build_manifests(layout)

    def install(
        self,
        config: Config | None = None,
        *,
        namespace: str | None = None,
        image: str | None = None,
        create_namespace: bool = False,
        wait: bool = False,
        timeout: float = 300.0,
    ) -> list[Any]:
        """Server-side apply the CRDs, then ``manifests()``, in order (field manager: the application's
        name); with ``wait``, block until the Deployment's replicas are available before the webhook
        configurations are applied (admission enabled last). Returns the applied objects as the server
        answered them. Use an admin's Config: it creates RBAC and webhook configurations. When a kind's
        plural comes from discovery (``get_dynamic_resource``), the manifests are made once the CRDs
        are Established (each waited for up to ``timeout``)."""
        if namespace is not None:
            _check_label(namespace, "install(namespace=...)")
        _check_image(image, "install(image=...)")
        discovered = bool(_discovered_kinds(self.controllers))
        # offline manifests are made first: a bad argument fails before anything is applied
        docs = [] if discovered else self.manifests(namespace, image, create_namespace=create_namespace)
        own = None if (config or self.config) is not None else Config()
        use = config or self.config or own
        assert use is not None
        try:
            applied = apply_all(self.crds, use, field_manager=self.name)
            if discovered:  # a dynamic kind's plural comes from discovery: its CRD served first
                for crd in applied:
                    wait_established(crd, use, timeout=timeout)
                docs = self.manifests(namespace, image, create_namespace=create_namespace, config=use)
            hooks = [d for d in docs if str(d["kind"]).endswith("WebhookConfiguration")]
            applied += apply_all([d for d in docs if d not in hooks], use, field_manager=self.name)
            if wait:
                for obj in applied:
                    if obj.kind == "Deployment":
                        wait_available(obj, use, replicas=self.replicas, timeout=timeout)
            applied += apply_all(hooks, use, field_manager=self.name)
        finally:
            if own is not None:
                own.close()
        return applied

    def _learn_kinds(self, config: Config | None) -> None:
        """Bind each declared kind still waiting for discovery (its plural and scope) through ``config``,
        the application's Config, or one made from the environment (closed after)."""
        pending = _discovered_kinds(self.controllers)
        if not pending:
            return
        own: Config | None = None
        asking = pending
        try:
            use = config or self.config
            if use is None:
                use = own = Config()
            for kind in pending:
                asking = [kind]
                bind_kinds(asking, use)
        except CloudcoilError as exc:
            names = ", ".join(f"{k.kind} ({k.api_version})" for k in asking)
            raise ConfigError(
                f"Application {self.name!r}: the RBAC of {names} needs its plural and scope, which only the "
                f"API server's discovery tells (no plural on the class: get_dynamic_resource), and they "
                f"could not be learnt: {type(exc).__name__}: {exc} -- give manifests(config=...) a Config of "
                "the cluster that serves the kind, or declare the class with its plural "
                "(GenericResource.define(..., plural=..., namespaced=...))"
            ) from exc
        finally:
            if own is not None:
                own.close()

    # ------------------------------------------------------- command line
    def main(self, argv: Sequence[str] | None = None) -> None:
        """The command line (``run``, ``manifests``, ``install``; ``--help`` lists the options).
        Raises ``SystemExit`` with a non-zero status on failure."""
        main(self, argv)


def _check_controllers(controllers: Sequence[Any]) -> None:
    if not controllers:
        raise ValueError("Application() needs at least one Controller")
    for controller in controllers:
        if not isinstance(controller, Controller):
            raise TypeError(f"Application() takes Controllers, got {type(controller).__name__}")
    names = [c.name for c in controllers]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"Application(): controller names must be unique; repeated: {repeated}")


def _discovered_kinds(controllers: Iterable[Controller]) -> list[Any]:
    """The kinds of ``controllers`` (primary, owned, watched) still waiting for discovery, each once."""
    kinds = [k for c in controllers for k in (c.kind, *c.owned_kinds, *c.watched_kinds)]
    return [k for k in dict.fromkeys(kinds) if unbound(k)]


def _sharding(value: Any, leader_election: Any, controllers: Sequence[Controller]) -> Ring | None:
    """``sharding=``: a Ring applied to every controller (not with leader election), or None."""
    if value is None:
        return None
    if not isinstance(value, Ring):
        raise TypeError(f"Application(sharding=...) expects a Ring, got {type(value).__name__}")
    if leader_election:
        raise ValueError("Application(): sharding (active-active replicas) and leader_election exclude each other")
    for controller in controllers:
        controller._set_sharding(value)
    return value


def _with_shard_webhook(webhooks: Any, ring: Ring, controllers: Sequence[Controller], namespace: str | None) -> Any:
    """``webhooks`` (an AdmissionWebhook of its own when None) with the ring's mutating routes added."""
    if webhooks is None:
        webhooks = AdmissionWebhook()
    endpoint = webhooks.endpoint if isinstance(webhooks, WebhookServer) else webhooks
    if isinstance(endpoint, AdmissionWebhook):
        register_shard_webhook(endpoint, ring, controllers, namespace=namespace)
    return webhooks


def _leader_election(value: Any, name: str, namespace: str | None) -> LeaderElection | None:
    """``leader_election=``: a LeaderElection, True (one on a Lease named after the application) or None."""
    if value is True:
        return LeaderElection(name, namespace=namespace)
    if value is None or value is False:
        return None
    if not isinstance(value, LeaderElection):
        raise TypeError(
            f"Application(leader_election=...) expects a LeaderElection, True or None, got {type(value).__name__}"
        )
    return value


def _check_image(image: Any, what: str) -> None:
    if image is not None and (not isinstance(image, str) or not image.strip() or any(c.isspace() for c in image)):
        raise ValueError(f"{what} must be a container image reference without spaces, got {image!r}")
