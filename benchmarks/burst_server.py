"""The benchmark's API server: the fake API server plus a watch-event burst the harness triggers.

Run (by ``run.py``/``peers.py``; any client library can be pointed at it)::

    .venv/bin/python benchmarks/burst_server.py --kubeconfig /tmp/kc --pods 10000

It serves ``cloudcoil_cache.testing.FakeAPIServer`` (LIST pages, discovery, writes, watches) seeded
with ``--pods`` realistic pods, prints its URL, then reads commands on stdin:

- ``prepare N``: serialise N MODIFIED events (existing pods, one label changed, resourceVersions
  above the server's); answers ``prepared N``. Building 5,000 lines of 6.7 KB takes the server
  about a second: it is done before the client's clock starts.
- ``fire``: queue the prepared events at once on every open pod watch, so that the server writes
  them as fast as the socket takes them: what is measured is how fast each client applies a burst,
  not how fast the fake server handles writes (~1,000 PATCH/s). Answers ``sent N <watches> <seconds>``.
- ``burst N``: ``prepare N`` then ``fire`` (one answer, ``sent ...``).
- ``trickle RATE SECONDS``: the same, spread evenly: RATE events per second for SECONDS (in
  batches every 50 ms). Answers ``trickled N <seconds>`` when the last batch is queued.
- ``watches``: answers ``watches <count of open watch streams>``.
- ``quit``.

The events bypass the fake server's store (its history never sees them), so a client that re-watches
after a burst may be told its resourceVersion is too new: a benchmark burst ends a run.
"""

from __future__ import annotations

import argparse
import gc
import json
import signal
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cloudcoil_cache.testing import FakeAPIServer, seed_pods  # noqa: E402


def burst_lines(server: FakeAPIServer, count: int, generation: int) -> list[bytes]:
    """``count`` MODIFIED watch lines over the stored pods, round robin, resourceVersions ascending."""
    rtype = server.registry.resolve("pods")
    pods = [stored.obj for stored in server._store.all_objects(rtype)]
    pods.sort(key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]))
    rv = server.revision + 1_000_000 * generation
    lines = []
    for n in range(count):
        pod = pods[n % len(pods)]
        meta = dict(pod["metadata"])
        meta["labels"] = {**meta.get("labels", {}), "bench-burst": f"{generation}-{n}"}
        meta["resourceVersion"] = str(rv + n + 1)
        lines.append(
            json.dumps({"type": "MODIFIED", "object": {**pod, "metadata": meta}}, separators=(",", ":")).encode()
            + b"\n"
        )
    return lines


def _push(server: FakeAPIServer, lines: list[bytes]) -> int:
    watchers = [w for w in server._watchers() if w.rtype.plural == "pods"]
    for watcher in watchers:
        with watcher.cond:
            watcher.items.extend(("event", x) for x in lines)
            watcher.cond.notify_all()
    return len(watchers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--pods", type=int, default=0)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server = FakeAPIServer(bookmark_interval=3600)
    generation = 0
    prepared: list[bytes] = []
    with server:
        seed_pods(server, args.pods)
        gc.collect()
        gc.freeze()  # the seeded store is permanent: keep collections off it
        server.write_kubeconfig(args.kubeconfig)
        print(server.url, flush=True)
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            if words[0] in ("prepare", "burst"):
                generation += 1
                prepared = burst_lines(server, int(words[1]), generation)
                if words[0] == "prepare":
                    print(f"prepared {len(prepared)}", flush=True)
                    continue
            if words[0] in ("fire", "burst"):
                started = time.perf_counter()
                watchers = _push(server, prepared)
                print(f"sent {len(prepared)} {watchers} {time.perf_counter() - started:.3f}", flush=True)
                prepared = []
            elif words[0] == "trickle":
                generation += 1
                rate, seconds = float(words[1]), float(words[2])
                lines = burst_lines(server, int(rate * seconds), generation)
                step = max(1, int(rate / 20))
                started = time.perf_counter()
                for k in range(0, len(lines), step):
                    delay = started + k / rate - time.perf_counter()
                    if delay > 0:
                        time.sleep(delay)  # pacing the events is this command's purpose
                    _push(server, lines[k : k + step])
                print(f"trickled {len(lines)} {time.perf_counter() - started:.3f}", flush=True)
            elif words[0] == "watches":
                print(f"watches {len([w for w in server._watchers() if w.rtype.plural == 'pods'])}", flush=True)
            elif words[0] == "quit":
                break


if __name__ == "__main__":
    main()
