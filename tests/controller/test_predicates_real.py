"""Predicates against a real kube-apiserver + etcd (the real tier; skipped without binaries): what bumps
``metadata.generation`` there (the default predicates rest on it), and one pass per spec change for a
controller writing its own status."""

from __future__ import annotations

from typing import Any

import pytest
from _operator_support import Widget
from test_operator_real import real_config  # noqa: F401 (the fixture: the Widget CRD and a namespace)
from test_predicates_flow import PassLog

from cloudcoil_cache.client import Config
from cloudcoil_cache.controller import Controller

pytestmark = pytest.mark.real
MERGE = "application/merge-patch+json"


def path(ns: str, name: str = "", sub: str = "") -> str:
    return f"/apis/example.com/v1/namespaces/{ns}/widgets" + (f"/{name}" if name else "") + (f"/{sub}" if sub else "")


def send(real: Any, method: str, url: str, body: Any, content_type: str = "application/json") -> dict[str, Any]:
    status, obj = real.request(method, url, body, content_type=content_type)
    assert status in (200, 201), obj
    return dict(obj)


def test_what_bumps_the_generation_on_a_real_server(real_api_server: Any, real_config: Config) -> None:  # noqa: F811
    ns = real_config.namespace
    assert ns
    body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "g"}, "spec": {"size": 1}}
    assert send(real_api_server, "POST", path(ns), body)["metadata"]["generation"] == 1
    status = send(real_api_server, "PATCH", path(ns, "g", "status"), {"status": {"size": 1}}, MERGE)
    assert status["metadata"]["generation"] == 1  # a status write: GenerationChanged() refuses it
    finalizer = send(real_api_server, "PATCH", path(ns, "g"), {"metadata": {"finalizers": ["example.com/x"]}}, MERGE)
    assert finalizer["metadata"]["generation"] == 1  # hence finalizer changes always pass
    assert send(real_api_server, "PATCH", path(ns, "g"), {"spec": {"size": 2}}, MERGE)["metadata"]["generation"] == 2
    marked = send(real_api_server, "DELETE", path(ns, "g"), None)
    assert marked["metadata"]["deletionTimestamp"] and marked["metadata"]["generation"] == 3  # the deletion mark
    send(real_api_server, "PATCH", path(ns, "g"), {"metadata": {"finalizers": None}}, MERGE)


def test_one_pass_per_spec_change_with_a_status_write_on_a_real_server(
    real_api_server: Any,
    real_config: Config,  # noqa: F811
) -> None:
    ns = real_config.namespace
    assert ns
    ctl = Controller(Widget, config=real_config, workers=1)
    ctl.observer = log = PassLog()

    @ctl.reconcile()
    def reconcile(widget: Any, ctx: Any) -> None:
        log.start(widget.name, widget.spec["size"])
        if widget.name != "marker":
            ctx.set_status(size=widget.spec["size"])

    for name in ("a", "marker"):
        body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": 1}}
        send(real_api_server, "POST", path(ns), body)
    with ctl.start():
        log.wait("finished", ("a", 1), timeout=60)
        for size in (2, 3):
            send(real_api_server, "PATCH", path(ns, "marker"), {"spec": {"size": size}}, MERGE)
            log.wait("started", ("marker", size), timeout=60)  # a's first passes are done
            send(real_api_server, "PATCH", path(ns, "a"), {"spec": {"size": size}}, MERGE)
            log.wait("finished", ("a", size), timeout=60)
        send(real_api_server, "PATCH", path(ns, "marker"), {"spec": {"size": 4}}, MERGE)
        log.wait("started", ("marker", 4), timeout=60)  # its event follows a's last status write's
        counts = {size: log.count(("a", size)) for size in (2, 3)}
    assert counts == {2: 1, 3: 1}
