"""A 503 blip on the watch: how many cached reads are served, raised and sent to the API while it lasts.

8 request threads call ``Pod.list(namespace="default")`` (one every 10 ms each, like web workers) on a
``set_default()`` Config whose cache watches Pods in all namespaces with client-go's timing. Then one
watch is dropped and its re-watch answered 503 (``fail_next(1, 503, verb="watch")`` +
``drop_watches()``): the reflector backs off (0.8-1.6 s), relists and watches again. The blip is the
time from the drop to that new watch. Run once with strict reads, once with fallback reads:

    .venv/bin/python benchmarks/blip.py                 # this checkout
    PYTHONPATH=/tmp/before .venv/bin/python benchmarks/blip.py   # another checkout (prints which)

Only the public API common to every version since the informer cache exists is used.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

import cloudcoil_cache
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CacheUnavailableError
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod

READ_PATH = "/api/v1/namespaces/default/pods"  # a fallback read; the informer watches /api/v1/pods


def blip(server: FakeAPIServer, config: Config, mode: str, threads: int, pace: float) -> dict[str, float]:
    cache = config.cache
    assert cache is not None
    stop = threading.Event()
    outcomes: list[tuple[float, str]] = []
    lock = threading.Lock()

    def reader() -> None:
        scope = cache.strict_mode() if mode == "strict" else cache.fallback_mode()
        with scope:
            while not stop.is_set():
                began = time.monotonic()
                try:
                    Pod.list(namespace="default")
                    outcome = "ok"
                except CacheUnavailableError:
                    outcome = "raised"
                except Exception as exc:  # noqa: BLE001 - counted and shown, the reader goes on
                    outcome = f"error {type(exc).__name__}: {exc}"[:200]
                with lock:
                    outcomes.append((began, outcome))
                stop.wait(pace)

    # the current watch must be older than min_watch_duration (1 s), or its end is "very short"
    opened = server.wait_for_request(lambda r: r.verb == "watch" and r.path == "/api/v1/pods")
    stop.wait(max(0.0, opened.time + 1.2 - time.monotonic()))
    workers = [threading.Thread(target=reader, name=f"blip-reader-{i}") for i in range(threads)]
    for w in workers:
        w.start()
    stop.wait(0.2)  # readers in full swing before the blip
    server.clear_requests()
    start = time.monotonic()
    server.fail_next(1, 503, verb="watch")
    server.drop_watches()
    rejected = server.wait_for_request(lambda r: r.verb == "watch" and r.path == "/api/v1/pods", timeout=10)
    server.wait_for_request(
        lambda r: r.verb == "watch" and r.path == "/api/v1/pods" and r.time > rejected.time, timeout=30
    )
    while cache.status().errors and time.monotonic() - start < 30:  # its error cleared: over
        stop.wait(0.005)
    end = time.monotonic()
    stop.set()
    for w in workers:
        w.join()
    inside = [o for t, o in outcomes if start <= t <= end]
    # reads are counted by when they began; a fallback read's LIST arrives just after that
    api_lists = [r for r in server.requests if r.verb == "list" and r.path == READ_PATH and r.time <= end]
    relists = [r for r in server.requests if r.verb == "list" and r.path == "/api/v1/pods" and r.time <= end]
    ok = inside.count("ok")
    for other in sorted({o for o in inside if o.startswith("error")}):
        print(f"  {inside.count(other)} reads failed with {other}")
    served = ok if mode == "strict" else max(0, ok - len(api_lists))
    return {
        "blip_s": end - start,
        "reads": len(inside),
        "served": served,
        "raised": inside.count("raised"),
        "api_lists": len(api_lists),
        "informer_relists": len(relists),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=100)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--pace", type=float, default=0.01, help="seconds each thread waits between reads")
    args = parser.parse_args()
    print(f"cloudcoil_cache from {Path(cloudcoil_cache.__file__).parent}")
    for mode in ("strict", "fallback"):
        with FakeAPIServer() as server, tempfile.TemporaryDirectory() as tmp:
            try:
                server.create("namespaces", {"metadata": {"name": "default"}})
            except Exception:  # noqa: BLE001 - already there, or a fake without namespaces
                pass
            for i in range(args.pods):
                server.create("pods", make_pod(f"pod-{i}", "default", index=i), "default")
            kubeconfig = server.write_kubeconfig(Path(tmp) / "kubeconfig")
            cache = Cache(resources=[Pod], resync_period=None)
            config = Config(kubeconfig=str(kubeconfig), cache=cache)
            config.set_default()
            try:
                view = cache.get_informer(Pod, sync=True)
                assert view is not None and view.wait_for_sync(30)
                figures = blip(server, config, mode, args.threads, args.pace)
            finally:
                config.close()
        print(
            f"{mode:8s} blip {figures['blip_s']:.2f}s: {figures['reads']} reads, {figures['served']} served "
            f"from the cache, {figures['raised']} raised, {figures['api_lists']} API LISTs by readers "
            f"(informer relists: {figures['informer_relists']})"
        )


if __name__ == "__main__":
    main()
