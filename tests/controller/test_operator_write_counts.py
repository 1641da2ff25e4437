"""API writes per object of an operator reconciling 100 Widgets with status updates (counts, not timings):
a first pass writes what is missing, a pass where nothing changed writes nothing."""

from __future__ import annotations

from typing import Any

from _operator_support import WIDGETS, Passes, conditions, install_widgets, writes, writes_by_kind
from test_operator_story import widget_operator

from cloudcoil_cache.testing import FakeAPIServer

COUNT = 100  # 25 objects per worker: passes overlap, and per-object figures are exact counts


def test_100_widgets_writes_per_object_and_none_when_nothing_changed(
    fake_api_server: FakeAPIServer, config: Any
) -> None:
    install_widgets(fake_api_server)
    for i in range(COUNT):
        fake_api_server.create(WIDGETS, {"metadata": {"name": f"w{i:03d}"}, "spec": {"size": i}}, "default")
    ctl, _ = widget_operator(config)
    ctl.workers = 4
    ctl.observer = passes = Passes()

    def all_ready() -> bool:
        items = fake_api_server.list(WIDGETS, "default")
        return len(items) == COUNT and all(conditions(w).get("Ready", ("",))[0] == "True" for w in items)

    fake_api_server.clear_requests()
    with ctl.start():
        passes.wait_for(all_ready, timeout=240)
        # every object's first pass wrote its Event last (after its status)
        passes.wait_for(lambda: len(writes(fake_api_server.requests)) >= 4 * COUNT, timeout=60)
        mark = len(fake_api_server.requests)
        before = passes.total()
        for i in range(COUNT):
            ctl.enqueue(f"default/w{i:03d}")
        passes.wait_for(lambda: passes.total() >= before + COUNT, timeout=240)
        requests = fake_api_server.requests
    counts = writes_by_kind(requests)
    per_object = {kind: n / COUNT for kind, n in counts.items()}
    print(f"writes per object: {per_object} ({sum(counts.values()) / COUNT:g} in all), passes: {passes.total()}")
    # one finalizer patch, one server-side apply of the ConfigMap, one status write, one Event;
    # the passes that the controller's own writes brought about wrote nothing
    assert counts == {"widgets": COUNT, "configmaps": COUNT, "widgets/status": COUNT, "events": COUNT}
    assert writes(requests[mark:]) == []  # 100 more passes with nothing changed: no write at all
