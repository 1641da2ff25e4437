"""An operator: each Widget (a custom resource) gets an owned ConfigMap with its size, a status with
``Ready`` and a ``Synced`` condition, Events, and a finalizer that cleans up before it goes.

    python examples/operator.py                                # the embedded fake API server
    KUBECONFIG=~/.kube/config python examples/operator.py      # a real cluster (creates the Widget CRD)
    python examples/operator.py --manifests                    # the RBAC it needs, as YAML

It creates a Widget, changes its size, deletes it, and prints what the operator did at each step.
Without ``KUBECONFIG`` it starts the embedded fake API server. A Widget whose ``spec.size`` is not a
whole number fails its reconcile: ``Ready=False`` with the error, a Warning Event (one series however
often the key is retried) and retries with the queue's backoff.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from typing import Any

import yaml

from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.application import Application
from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller, get_condition
from cloudcoil_cache.errors import ResourceConflict
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


def widget_operator(cleaned: list[str], **options: Any) -> Controller:
    """The operator: ``report_status=True`` keeps ``Ready`` from each pass's outcome. ``options`` go to
    ``Controller()`` (``config``, ``label_selector``, ...)."""
    ctl = Controller(Widget, report_status=True, **options).owns(ConfigMap)

    @ctl.reconcile()
    def reconcile(widget: Any, ctx: Any) -> None:
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
    args = parser.parse_args(argv)
    if args.manifests:
        docs = application(widget_operator([]), leader_election=True).manifests(namespace=args.namespace)
        sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False))
        return {"manifests": docs}
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
