"""Many reader threads against the cache while the server applies a burst of events."""

from __future__ import annotations

import random
import threading
from typing import Any

from cluster_support import Recorder

from cloudcoil_cache.errors import ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer

READERS = 8
EVENTS = 500
INITIAL = 20


def _pod(name: str, gen: int) -> dict[str, Any]:
    # Small pods keep the burst fast; the consistency check needs only labels and annotations.
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"gen": str(gen)},
            "annotations": {"gen": str(gen)},
        },
        "spec": {"containers": [{"name": "app", "image": f"registry.example.com/app:{gen}"}]},
    }


def _consistent(pod: Any) -> str | None:
    """Why a read object is torn, or None: label `gen` and annotation `gen` are written together."""
    labels, annotations = pod.metadata.labels or {}, pod.metadata.annotations or {}
    if labels.get("gen") != annotations.get("gen"):
        return f"{pod.metadata.name}: label gen={labels.get('gen')} annotation gen={annotations.get('gen')}"
    if pod.metadata.namespace != "default" or not pod.metadata.resource_version:
        meta = pod.metadata
        return f"{meta.name}: bad metadata {meta.namespace!r} {meta.resource_version!r}"
    return None


def _burst(server: FakeAPIServer, rng: random.Random) -> dict[str, int]:
    """~EVENTS creates/updates/deletes through the direct object API; returns the final name → gen."""
    live = {f"seed-{i}": 0 for i in range(INITIAL)}
    created = 0
    for step in range(EVENTS):
        roll = rng.random()
        if roll < 0.25 or len(live) < 5:
            name = f"new-{created}"
            created += 1
            server.create("pods", _pod(name, step))
            live[name] = step
        elif roll < 0.85:
            name = rng.choice(sorted(live))
            current = server.get("pods", name)
            current["metadata"]["labels"]["gen"] = str(step)
            current["metadata"]["annotations"]["gen"] = str(step)
            server.update("pods", current)
            live[name] = step
        else:
            name = rng.choice(sorted(live))
            server.delete("pods", name)
            del live[name]
    return live


def test_eight_readers_see_only_consistent_objects_during_a_burst_of_500_events(server, make_config):
    for i in range(INITIAL):
        server.create("pods", _pod(f"seed-{i}", 0))
    config = make_config(resources=[Pod], mode="strict")
    rec = Recorder()
    informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
    informer.on_add(lambda pod: rec.add("add", pod))
    stop = threading.Event()
    ready = threading.Barrier(READERS + 1, timeout=10)
    problems: list[str] = []
    reads_done = [0] * READERS
    lock = threading.Lock()

    def reader(index: int) -> None:
        rng = random.Random(index)
        try:
            with config:
                ready.wait()
                while not stop.is_set():
                    items = Pod.list().items
                    seen = [p.metadata.name for p in items]
                    torn = [why for why in map(_consistent, items) if why]
                    if len(seen) != len(set(seen)):
                        torn.append(f"duplicate names in one list: {sorted(seen)}")
                    if seen:
                        try:
                            got = Pod.get(rng.choice(seen))
                            why = _consistent(got)
                            if why:
                                torn.append(why)
                        except ResourceNotFound:
                            pass  # deleted between the list and the get
                    reads_done[index] += 1
                    if torn:
                        with lock:
                            problems.extend(torn)
        except Exception as exc:  # reported by the main thread
            with lock:
                problems.append(f"reader {index} raised {type(exc).__name__}: {exc}")

    with config:
        threads = [threading.Thread(target=reader, args=(i,), name=f"test-reader-{i}") for i in range(READERS)]
        for thread in threads:
            thread.start()
        try:
            ready.wait()
            expected = _burst(server, random.Random(42))
            server.create("pods", _pod("final", 0))
            expected["final"] = 0
            rec.wait(lambda ev: "final" in [p.metadata.name for _, p in ev], timeout=30)
        finally:
            stop.set()
            for thread in threads:
                thread.join(10)
        cached = {p.metadata.name: int(p.metadata.labels["gen"]) for p in Pod.list()}
    assert not [t.name for t in threads if t.is_alive()]
    assert problems == []
    assert all(n > 0 for n in reads_done), reads_done
    assert cached == expected
