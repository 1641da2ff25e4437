"""An operator: each Widget (a custom resource) gets an owned ConfigMap with its size, a status with
``Ready`` and a ``Synced`` condition, Events, and a finalizer that cleans up before it goes.

    python examples/operator.py                                # the embedded fake API server
    KUBECONFIG=~/.kube/config python examples/operator.py      # a real cluster (creates the Widget CRD)
    python examples/operator.py --manifests [--shard widgets]  # the RBAC (and webhook) it needs, as YAML
    python examples/operator.py --run --shard widgets --identity r1   # one sharded replica, until SIGTERM

It creates a Widget, changes its size, deletes it, and prints what the operator did at each step.
Without ``KUBECONFIG`` it starts the embedded fake API server. A Widget whose ``spec.size`` is not a
whole number fails its reconcile: ``Ready=False`` with the error, a Warning Event (one series however
often the key is retried) and retries with the queue's backoff.

``--run`` runs the operator as a long-lived process against ``KUBECONFIG`` (the replicas of a deployment):
with ``--shard RING`` it is one active replica of a ring (``Ring(RING, identity=--identity)``) that
reconciles only the Widgets assigned to it, so several processes share the work. Two environment
variables serve the sharding tests and benchmark: ``OPERATOR_PASS_LOG=<file>`` appends a JSON line at the
start and at the end of every pass (``{"key", "replica", "start", "end"}``, wall-clock ns, ``end`` null on
the start line; SIGUSR1 adds a line with the process's VmRSS after a collection), and
``OPERATOR_PASS_WAIT=<seconds>`` turns each pass into that fixed wait, writing nothing (an I/O-bound
reconcile, benchmark only). With ``PYTHONTRACEMALLOC=<frames>`` and ``OPERATOR_TRACEMALLOC_DIR=<dir>``,
each SIGUSR1 also dumps a tracemalloc snapshot there (``<replica>-<n>.tracemalloc``; where memory goes).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import logging
import os
import signal
import sys
import threading
import time
import tracemalloc
from typing import Any, Iterator

import yaml

from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.application import Application
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, get_condition
from cloudcoil_cache.errors import Forbidden, ResourceConflict
from cloudcoil_cache.models.kubernetes.apiextensions.v1 import CustomResourceDefinition
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap
from cloudcoil_cache.models.kubernetes.events.v1 import Event
from cloudcoil_cache.resources import GenericResource

Widget = GenericResource.define(api_version="example.com/v1", kind="Widget", plural="widgets", namespaced=True)

WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }
        ],
    },
}


class PassLog:
    """Every pass's start and end per key, as JSON lines appended to a file (``OPERATOR_PASS_LOG``), and the
    benchmark's fixed wait per pass (``OPERATOR_PASS_WAIT``). Each line is one ``write``: processes that
    share the file never mix their lines, and a killed process leaves its started passes open."""

    def __init__(self, path: str, replica: str, wait: float = 0.0) -> None:
        self.replica = replica
        self.wait = wait
        self._file = open(path, "a", buffering=1, encoding="utf-8")  # line-buffered: one write per line
        self._lock = threading.Lock()
        self._snapshots = 0
        self._idle = threading.Event()  # never set: the fixed wait is a wait on it

    @classmethod
    def from_env(cls, replica: str) -> PassLog | None:
        path = os.environ.get("OPERATOR_PASS_LOG")
        wait = float(os.environ.get("OPERATOR_PASS_WAIT") or 0)
        return cls(path or os.devnull, replica, wait) if path or wait else None

    @contextlib.contextmanager
    def record(self, key: str) -> Iterator[None]:
        start = time.time_ns()  # wall clock: the replicas are separate processes
        self._write({"key": key, "replica": self.replica, "start": start, "end": None})
        try:
            if self.wait:
                self._idle.wait(self.wait)  # stands for a pass's I/O (benchmark only)
            yield
        finally:
            self._write({"key": key, "replica": self.replica, "start": start, "end": time.time_ns()})

    def report_memory(self, *_: Any) -> None:
        """On SIGUSR1 (benchmark only): collect, hand the freed heap back to the system, and log VmRSS
        (``{"replica", "rss_kb", "time"}``): the process's live memory, not what its allocator kept."""
        gc.collect()
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).malloc_trim(0)  # glibc
        where = os.environ.get("OPERATOR_TRACEMALLOC_DIR")  # (with PYTHONTRACEMALLOC: a snapshot per reading)
        if where and tracemalloc.is_tracing():
            self._snapshots += 1
            tracemalloc.take_snapshot().dump(f"{where}/{self.replica}-{self._snapshots}.tracemalloc")
        with contextlib.suppress(OSError), open("/proc/self/status", encoding="ascii") as status:
            rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
            self._write({"replica": self.replica, "rss_kb": rss, "time": time.time_ns()})

    def _write(self, line: dict[str, Any]) -> None:
        with self._lock:
            self._file.write(json.dumps(line) + "\n")

    def close(self) -> None:
        with self._lock:
            self._file.close()


def widget_operator(cleaned: list[str], passes: PassLog | None = None, **options: Any) -> Controller:
    """The operator: ``report_status=True`` keeps ``Ready`` from each pass's outcome. ``options`` go to
    ``Controller()`` (``config``, ``label_selector``, ``workers``, ...). With ``passes``, every pass is
    recorded there (and with its ``wait``, is that wait only)."""
    ctl = Controller(Widget, report_status=True, **options).owns(ConfigMap)

    @ctl.reconcile()
    def reconcile(widget: Any, ctx: Any) -> None:
        if passes is None:
            return apply(widget, ctx)
        with passes.record(f"{widget.metadata.namespace}/{widget.name}"):
            if not passes.wait:
                apply(widget, ctx)

    def apply(widget: Any, ctx: Any) -> None:
        wanted = widget.spec.get("size", 1)
        if isinstance(wanted, bool) or not isinstance(wanted, int) or wanted < 0:
            raise ValueError(f"spec.size must be a whole number >= 0, got {wanted!r}")  # Ready=False, a Warning
        size = str(wanted)
        before = ctx.cached(ConfigMap).get(widget.name)
        # server-side apply (field manager "widget"), owned by the widget; no write when it is as desired
        child = ctx.ensure(ConfigMap(metadata=ObjectMeta(name=widget.name), data={"size": size}))
        ctx.set_status(size=wanted, configMap=child.name)  # one status write per pass, only on a change
        ctx.condition("Synced", True, reason="ChildApplied", message=f"ConfigMap {child.name} has size {size}")
        if before is None or (before.data or {}).get("size") != size:
            ctx.event("ChildApplied", f"ConfigMap {child.name} has size {size}")

    @ctl.finalize("example.com/cleanup")
    def cleanup(widget: Any, ctx: Any) -> None:
        cleaned.append(widget.name)  # release what the widget held outside the cluster
        ctx.event("CleanedUp", "released the widget's resources")

    return ctl


def application(ctl: Controller, **options: Any) -> Application:
    """The operator packaged to deploy: ``manifests()`` grants exactly what it uses (the Widgets'
    list/watch and patch for the finalizer, ``widgets/status`` patch, ConfigMaps list/watch and
    create/patch by server-side apply, Events create/patch, the Lease)."""
    return Application("widgets", ctl, crds=[WIDGET_CRD], **options)


def install_crd(config: Config) -> None:
    crds = CustomResourceDefinition.client(config)
    with contextlib.suppress(ResourceConflict):
        crd = crds.create(CustomResourceDefinition.from_dict(WIDGET_CRD))
        crds.wait_for(crd, {"established": lambda _, obj: _established(obj)}, timeout=60)


def _established(crd: Any) -> bool:
    status = crd.to_dict().get("status") or {}
    return any(c["type"] == "Established" and c["status"] == "True" for c in status.get("conditions") or ())


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--manifests", action="store_true", help="print the manifests (RBAC) and exit")
    parser.add_argument("--run", action="store_true", help="run the operator against KUBECONFIG until SIGTERM")
    parser.add_argument("--shard", metavar="RING", help="with --run: one replica of this ring (active-active)")
    parser.add_argument("--identity", help="with --shard: this replica's name in the ring (default: host-pid-hex)")
    parser.add_argument("--lease-duration", type=float, default=15.0, help="with --shard: its Lease's seconds")
    parser.add_argument("--workers", type=int, default=1, help="with --run: reconciles at once")
    parser.add_argument("--resync-period", type=float, default=300, help="with --run: seconds (0: never)")
    parser.add_argument("--health-port", type=int, default=None, help="with --run: /healthz and /readyz port")
    parser.add_argument("--tokens", type=int, default=400, help="with --shard: virtual nodes per replica")
    parser.add_argument("--ring-resync", type=float, default=300.0, help="with --shard: Ring(resync_period=)")
    parser.add_argument("--webhook-port", type=int, default=0, help="with --shard: the ring's webhook (0: any)")
    parser.add_argument("--webhook-cert-dir", help="with --shard: tls.crt and tls.key of the webhook")
    args = parser.parse_args(argv)
    if args.manifests:  # with --shard: the ring's (its Leases, labels and webhook) instead of a leader's
        if args.shard:
            from cloudcoil_cache.controller import Ring

            app = application(widget_operator([]), sharding=Ring(args.shard, identity="replica"))
        else:
            app = application(widget_operator([]), leader_election=True)
        docs = app.manifests(namespace=args.namespace)
        sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False))
        return {"manifests": docs}
    if args.run:
        run(args)
        return {}
    from _fake_cluster import cluster  # the examples' folder is on sys.path when run as a script

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    ns = args.namespace
    result: dict[str, Any] = {}
    cleaned: list[str] = []
    with cluster(pods={}):
        config = Config(namespace=ns)
        install_crd(config)
        widgets = Widget.client(config)
        with widget_operator(cleaned).start(config):
            created = widgets.create(
                Widget.from_dict({"metadata": {"name": "demo", "namespace": ns}, "spec": {"size": 2}})
            )
            ready = widgets.wait_for_match(created, {"ready": lambda _, w: _ready(w, 1)}, timeout=30)[1]
            result["created"] = _report(config, ready)
            print(f"created: {result['created']}", flush=True)

            changed = widgets.patch("demo", {"spec": {"size": 5}}, namespace=ns)
            followed = widgets.wait_for_match(changed, {"followed": lambda _, w: _ready(w, 2)}, timeout=30)[1]
            result["changed"] = _report(config, followed)
            print(f"changed: {result['changed']}", flush=True)

            gone = widgets.delete("demo", ns)  # kept by the finalizer until the cleanup ran
            widgets.wait_for(gone, {"deleted": lambda event, _: event == "DELETED"}, timeout=30)
            result["cleaned up"] = list(cleaned)
            print(f"deleted after cleanup of {cleaned}", flush=True)
        result["events"] = sorted(f"{e.type} {e.reason}: {e.note}" for e in Event.client(config).live_list(ns).items)
        for line in result["events"]:
            print(f"event {line}", flush=True)
        config.close()
    return result


def run(args: argparse.Namespace) -> None:
    """One long-lived replica (``--run``): the CRD installed if missing, then the Application until SIGTERM."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    options: dict[str, Any] = {}
    identity = args.identity or os.uname().nodename
    if args.shard:
        from cloudcoil_cache.admission import AdmissionWebhook, WebhookServer
        from cloudcoil_cache.controller import Ring

        ring = Ring(
            args.shard,
            identity=args.identity,  # None: <hostname>-<pid>-<hex>
            lease_duration=args.lease_duration,
            renew_deadline=args.lease_duration * 2 / 3,
            retry_period=min(2.0, args.lease_duration / 5),
            tokens=args.tokens,
            resync_period=args.ring_resync,
        )
        # the ring's mutating webhook (labels new Widgets) on this port; self-signed without a cert dir
        tls = args.webhook_cert_dir
        files = {"certfile": f"{tls}/tls.crt", "keyfile": f"{tls}/tls.key"} if tls else {}
        options["webhooks"] = WebhookServer(AdmissionWebhook(), host="127.0.0.1", port=args.webhook_port, **files)
        options["sharding"] = ring
        identity = ring.identity
    config = Config(namespace=args.namespace)
    passes = PassLog.from_env(identity)
    if passes is not None and hasattr(signal, "SIGUSR1"):
        signal.signal(signal.SIGUSR1, passes.report_memory)
    try:
        with contextlib.suppress(Forbidden):  # a replica bound to the printed Role only: an admin installed it
            install_crd(config)
        resync = args.resync_period or None
        ctl = widget_operator([], passes, config=config, workers=args.workers, resync_period=resync)
        app = application(ctl, namespace=args.namespace, config=config, health_port=args.health_port, **options)
        app.run()
    finally:
        if passes is not None:
            passes.close()
        config.close()


def _ready(widget: Any, generation: int) -> bool:
    ready = get_condition(widget, "Ready")
    status = widget.status or {}
    return ready is not None and ready["status"] == "True" and status.get("observedGeneration") == generation


def _report(config: Config, widget: Any) -> dict[str, Any]:
    child = ConfigMap.client(config).live_get(widget.name, widget.metadata.namespace)
    return {
        "finalizers": list(widget.metadata.finalizers or []),
        "status.size": widget.status["size"],
        "conditions": {c["type"]: c["status"] for c in widget.status["conditions"]},
        "configmap": dict(child.data or {}),
    }


if __name__ == "__main__":
    main()
