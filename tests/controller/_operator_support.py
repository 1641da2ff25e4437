"""The Widget custom resource of the operator tests: its CRD on the fake server, its model, and write counting."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any, Callable

from cloudcoil_cache.controller._observe import ControllerObserver
from cloudcoil_cache.resources import GenericResource
from cloudcoil_cache.testing import FakeAPIServer, RecordedRequest

GROUP = "example.com"
Widget = GenericResource.define(api_version=f"{GROUP}/v1", kind="Widget", plural="widgets", namespaced=True)
WIDGETS = f"widgets.{GROUP}"
EVENTS = "events.events.k8s.io"
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})


def widget_crd() -> dict[str, Any]:
    """A namespaced Widget CRD with a status subresource (free-form spec and status)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": WIDGETS},
        "spec": {
            "group": GROUP,
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


def install_widgets(server: FakeAPIServer) -> None:
    """Create the Widget CRD (the fake establishes it at once)."""
    server.create("customresourcedefinitions", widget_crd())


def make_widget(server: FakeAPIServer, name: str, size: int = 1, namespace: str = "default") -> dict[str, Any]:
    return server.create(WIDGETS, {"metadata": {"name": name}, "spec": {"size": size}}, namespace)


def writes(requests: list[RecordedRequest]) -> list[RecordedRequest]:
    """The API writes among ``requests``."""
    return [r for r in requests if r.verb in WRITE_VERBS]


def writes_by_kind(requests: list[RecordedRequest]) -> Counter[str]:
    """Writes counted by what they wrote: ``widgets``, ``widgets/status``, ``configmaps``, ``events``..."""
    counts: Counter[str] = Counter()
    for r in writes(requests):
        parts = r.path.strip("/").split("/")
        tail = parts[-2:] if parts[-1] == "status" else parts[-1:]
        plural = parts[parts.index("namespaces") + 2] if "namespaces" in parts else tail[0]
        counts[plural + ("/status" if tail[-1] == "status" else "")] += 1
    return counts


def conditions(obj: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    """``{type: (status, reason, message)}`` of a server object's status."""
    return {
        c["type"]: (c["status"], c["reason"], c["message"]) for c in (obj.get("status") or {}).get("conditions") or ()
    }


class Passes(ControllerObserver):
    """Counts finished passes (after their status write and Events); ``wait_for(pred)`` re-checks
    ``pred()`` after each pass until it holds."""

    def __init__(self) -> None:
        self.results: Counter[str] = Counter()
        self._cond = threading.Condition()

    def reconciled(self, result: str, seconds: float) -> None:
        with self._cond:
            self.results[result] += 1
            self._cond.notify_all()

    def total(self) -> int:
        with self._cond:
            return sum(self.results.values())

    def wait_for(self, pred: Callable[[], bool], timeout: float = 20.0) -> None:
        with self._cond:
            if not self._cond.wait_for(pred, timeout):
                raise AssertionError(f"not reached within {timeout}s after {dict(self.results)} passes")
