"""Active-active sharding (issue 36): per-replica cache memory and I/O-bound throughput, 3 replicas vs 1.

Run (one command; ~9 min on 2 cores)::

    .venv/bin/python benchmarks/sharding.py [--widgets 3000] [--replicas 3] [--wait 0.1] [--workers 2]
                                            [--tokens 400] [--ring-resync S] [--only memory|throughput]
                                            [--no-webhook]

Every replica is ``examples/operator.py --run`` in a process of its own (``tests/real/_replicas.py``
starts and always stops them), against the real kube-apiserver + etcd (``KUBEBUILDER_ASSETS`` or the
build script's cache; ``cloudcoil_cache.testing.RealAPIServer``), else the fake API server run as a
process (``python -m cloudcoil_cache.testing serve``). Each case runs in a namespace of its own; the
replicas are started and ready (sharded: the ring's Leases all held) before the Widgets are created.

- **memory**: one unsharded replica (``--run``), then ``--replicas`` sharded ones (``--shard widgets``;
  r1 serves the ring's webhook, which labels each Widget as it is created), the operator's own reconcile
  (a ConfigMap per Widget, status, Events). Each replica's memory is read once it is ready (informers
  synced over an empty namespace; with the webhook, after 64 dry-run creates have called it: its first
  calls' cost is fixed, not the cache's), then ``--widgets`` Widgets are created and, once every pass is done
  (no pass for 3 s), again: the growth is the cache's share (the Widgets and ConfigMaps it holds, the
  sharder's on the replica elected to run it, what reconciling left). "cache MB": VmRSS the replica
  logs on SIGUSR1 after ``gc.collect()`` and glibc's ``malloc_trim(0)`` (live memory, not what the
  allocator kept after a peak); "rss growth MB": plain VmRSS read from outside.
  Target: each sharded replica's growth ≤ 0.45× the unsharded one's (3 replicas).
- **throughput**: ``OPERATOR_PASS_WAIT=--wait`` (each pass is that fixed wait and writes nothing: an
  I/O-bound reconcile; the controller still writes each pass's ``Ready`` condition, which brings a second
  pass) with ``--workers`` workers per replica. The Widgets are created already labelled as the ring
  (``--tokens``) assigns them, as the webhook would (its calls would make the creation, not the replicas,
  the bottleneck). Seconds from the first create until every pass is done ("finished"), and until every
  Widget's first pass ended. Target: 3 replicas ≥ 2.5× faster than one. The bound is the largest share:
  total / largest (3000 / 1089 = 2.75 for r1-r3 at 100 tokens in this namespace).

Prints the figures, the command and the load average (before and after), and writes
``benchmarks/results/sharding.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests" / "real")]

from _replicas import Replicas, per_replica, read_passes, ring_webhook, rss_kb, wait_until  # noqa: E402

from cloudcoil_cache.testing import RealAPIServer  # noqa: E402

RING = "widgets"
EXAMPLE_CRD = "example.com/v1/Widget/widgets"


class Server:
    """The API server of the run: ``request(method, path, body)`` and a kubeconfig per namespace."""

    kind = ""

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        raise NotImplementedError

    def kubeconfig(self, path: Path, namespace: str) -> str:
        raise NotImplementedError


class Real(Server):
    kind = "kube-apiserver + etcd"

    def __init__(self, real: RealAPIServer) -> None:
        self.real = real

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        return self.real.request(method, path, body)

    def kubeconfig(self, path: Path, namespace: str) -> str:
        return self.real.write_kubeconfig(path, namespace=namespace)


class Fake(Server):
    kind = "fake API server (python -m cloudcoil_cache.testing serve)"

    def __init__(self, workdir: Path) -> None:
        self.base = workdir / "fake-kubeconfig"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cloudcoil_cache.testing",
                "serve",
                "--kubeconfig",
                str(self.base),
                "--crd",
                EXAMPLE_CRD,
            ],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        wait_until(self.base.exists, 60, what="the fake API server's kubeconfig")
        import yaml

        doc = yaml.safe_load(self.base.read_text())
        self.url = doc["clusters"][0]["cluster"]["server"]

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        import urllib.error
        import urllib.request

        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        for attempt in range(5):  # the fake server resets a connection now and then under 16 clients
            try:
                with urllib.request.urlopen(request, timeout=30) as answer:
                    return answer.status, json.loads(answer.read())
            except urllib.error.HTTPError as exc:
                status, answer = exc.code, json.loads(exc.read() or b"{}")
                if status == 409 and attempt and method == "POST":
                    return 201, answer  # made by the attempt whose answer was lost
                return status, answer
            except ConnectionError:
                if attempt == 4:
                    raise
        raise AssertionError("unreachable")

    def kubeconfig(self, path: Path, namespace: str) -> str:
        import yaml

        doc = yaml.safe_load(self.base.read_text())
        for context in doc["contexts"]:
            context["context"]["namespace"] = namespace
        path.write_text(yaml.safe_dump(doc))
        return str(path)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def server(workdir: Path, which: str = "auto") -> Iterator[Server]:
    try:
        if which == "fake":
            raise RuntimeError("--server fake")
        real = RealAPIServer()
    except RuntimeError as exc:
        if which == "real":
            raise
        print(f"no real API server ({str(exc).splitlines()[0]}): the fake one", flush=True)
        fake = Fake(workdir)
        try:
            yield fake
        finally:
            fake.stop()
        return
    with real:
        yield Real(real)


def widgets_path(namespace: str) -> str:
    return f"/apis/example.com/v1/namespaces/{namespace}/widgets"


def create(srv: Server, namespace: str, count: int, members: list[str] | None = None, tokens: int = 400) -> None:
    """``count`` Widgets, 16 at a time; with ``members``, each created with the shard label the ring of
    those members gives it (what the webhook would set, without its call)."""
    owner = ring_of(members, namespace, tokens) if members else None

    def one(i: int) -> None:
        name = f"w{i:05d}"
        meta: dict[str, Any] = {"name": name}
        if owner is not None:
            meta["labels"] = {f"shard.cloudcoil.dev/{RING}": owner(name)}
        body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": {"size": 1}}
        status, answer = srv.request("POST", widgets_path(namespace), body)
        assert status == 201, answer

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(one, range(count)))


def warm_webhook(srv: Server, namespace: str, calls: int = 64) -> None:
    """``calls`` dry-run creates, 16 at a time, before the baseline: the webhook's first calls (its imports,
    its connections from kube-apiserver, its handler threads) are a fixed cost, not the cache's; a dry run
    calls the mutating webhook and stores nothing."""

    def one(i: int) -> None:
        body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": f"warm{i}"}, "spec": {}}
        status, answer = srv.request("POST", widgets_path(namespace) + "?dryRun=All", body)
        assert status == 201, answer
        assert answer["metadata"].get("labels", {}).get(f"shard.cloudcoil.dev/{RING}"), answer  # the webhook ran

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(one, range(calls)))


def ring_of(members: list[str], namespace: str, tokens: int) -> Callable[[str], str | None]:
    from cloudcoil_cache.controller._ring import HashRing, hash_key

    ring = HashRing(members, tokens)
    return lambda name: ring.owner(hash_key("example.com", "Widget", namespace, name))


def run_case(
    srv: Server,
    workdir: Path,
    namespace: str,
    replicas: int,
    count: int,
    workers: int,
    wait: float,
    lease: float,
    webhook: bool,
    tokens: int = 400,
    ring_resync: float | None = None,
) -> dict[str, Any]:
    """One case in a fresh namespace: ``replicas`` processes (sharded when more than one), ``count``
    Widgets created once they are ready; RSS before and after, seconds to every first pass."""
    status, body = srv.request(
        "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    )
    assert status in (201, 409), body
    case_dir = workdir / namespace
    case_dir.mkdir()
    kubeconfig = srv.kubeconfig(case_dir / "kubeconfig", namespace)
    args = ["--namespace", namespace, "--workers", str(workers), "--resync-period", "0"]  # (no resync's passes)
    hook = None
    identities = [f"r{i + 1}" for i in range(replicas)]
    if replicas > 1:
        args += ["--shard", RING, "--lease-duration", str(lease), "--tokens", str(tokens)]
        args += ["--ring-resync", str(ring_resync)] if ring_resync else []
    if replicas > 1 and webhook:  # the ring's webhook, served by r1, labels the Widgets as they are created
        hook = ring_webhook(case_dir, namespace, RING)
        status, body = srv.request("POST", hook.path, hook.document)
        assert status == 201, body
    env = {"OPERATOR_PASS_WAIT": str(wait)} if wait else {}
    with Replicas(case_dir, kubeconfig, args, env) as started:
        for i, identity in enumerate(identities):
            started.start(identity, hook.args if hook is not None and i == 0 else ())
        for replica in started.started:
            replica.wait_ready(120)
        if replicas > 1:
            wait_until(lambda: members(srv, namespace) >= replicas, 60, what=f"{replicas} members in the ring")
        if hook is not None:
            warm_webhook(srv, namespace)
        before = {r.identity: rss_kb(r.pid) for r in started.started}
        live_before = {r.identity: r.memory_kb() for r in started.started}
        t0 = time.time_ns()
        create(srv, namespace, count, identities if replicas > 1 and not webhook else None, tokens)
        created_s = (time.time_ns() - t0) / 1e9
        keys = {f"{namespace}/w{i:05d}" for i in range(count)}

        def all_done() -> bool:
            done = set().union(*per_replica(read_passes(started.pass_logs())).values())
            return keys <= done

        wait_until(all_done, 900, interval=0.5, what=f"{count} Widgets reconciled")
        passes = read_passes(started.pass_logs())
        first_end: dict[str, int] = {}
        for p in passes:
            if p.end is not None and (p.key not in first_end or p.end < first_end[p.key]):
                first_end[p.key] = p.end
        seconds = (max(first_end.values()) - t0) / 1e9
        quiet(started, 3.0)  # every pass done (the status each first pass writes brings a second one)
        passes = read_passes(started.pass_logs())
        finished = (max(p.end or 0 for p in passes) - t0) / 1e9
        after = {r.identity: rss_kb(r.pid) for r in started.started}
        live_after = {r.identity: r.memory_kb() for r in started.started}
        keys_by = {r: len(k) for r, k in per_replica(passes).items()}
        codes = started.stop_all()
    if hook is not None:
        srv.request("DELETE", f"{hook.path}/{hook.name}")
    return {
        "replicas": replicas,
        "seconds to every first pass": round(seconds, 1),
        "seconds to the last pass (finished)": round(finished, 1),
        "seconds creating": round(created_s, 1),
        "passes": len(passes),
        "keys per replica": keys_by,
        "rss MB before": {r: round(kb / 1024, 1) for r, kb in before.items()},
        "rss MB after": {r: round(kb / 1024, 1) for r, kb in after.items()},
        "rss growth MB": {r: round((after[r] - before[r]) / 1024, 1) for r in before},
        "cache MB": {r: round((live_after[r] - live_before[r]) / 1024, 1) for r in before},
        "exit codes": codes,
    }


def members(srv: Server, namespace: str) -> int:
    """Leases of the ring held now (labelled ``cloudcoil.dev/ring=<ring>``)."""
    status, body = srv.request(
        "GET", f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases?labelSelector=cloudcoil.dev%2Fring%3D{RING}"
    )
    return len(body.get("items", [])) if status == 200 else 0


def quiet(started: Replicas, seconds: float) -> None:
    """Until no pass started or ended for ``seconds`` (the pass logs stopped growing)."""
    sizes: dict[str, Any] = {"last": None, "since": time.monotonic()}

    def still() -> bool:
        now = tuple(p.stat().st_size if p.exists() else 0 for p in started.pass_logs())
        if now != sizes["last"]:
            sizes["last"], sizes["since"] = now, time.monotonic()
        return time.monotonic() - sizes["since"] >= seconds

    wait_until(still, 900, interval=0.25, what="the replicas idle")


def ratio(sharded: dict[str, Any], single: dict[str, Any], key: str, pick: Callable[[list[float]], float]) -> float:
    one = list(single[key].values())[0]
    return round(pick(list(sharded[key].values())) / one, 3) if one else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widgets", type=int, default=3000)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--wait", type=float, default=0.1, help="seconds each pass waits in the throughput case")
    parser.add_argument("--workers", type=int, default=2, help="workers per replica")
    parser.add_argument("--lease", type=float, default=5.0, help="the shard Leases' duration")
    parser.add_argument("--tokens", type=int, default=400, help="virtual nodes per replica (Ring(tokens=))")
    parser.add_argument("--ring-resync", type=float, default=None, help="Ring(resync_period=) (default: Ring's)")
    parser.add_argument("--only", choices=("memory", "throughput"), default=None)
    parser.add_argument("--server", choices=("auto", "real", "fake"), default="auto", help="auto: real if it runs")
    parser.add_argument(
        "--no-webhook", action="store_true", help="memory: Widgets created labelled (no webhook server busy on r1)"
    )
    args = parser.parse_args()
    command = shlex.join([".venv/bin/python", "benchmarks/sharding.py", *sys.argv[1:]])
    load_before = os.getloadavg()
    results: dict[str, Any] = {"command": command, "load before": [round(x, 2) for x in load_before]}
    with tempfile.TemporaryDirectory(prefix="sharding-bench-") as tmp:
        workdir = Path(tmp)
        gen = server(workdir, args.server)
        srv = next(gen)
        try:
            results["server"] = srv.kind
            install_crd(srv, workdir)
            # memory: labelled by the ring's webhook as they are created; throughput: created labelled as
            # the webhook would (its calls would make the creation, not the replicas, the bottleneck)
            cases = [("memory", 0.0, not args.no_webhook), ("throughput", args.wait, False)]
            for what, wait, webhook in cases:
                if args.only and what != args.only:
                    continue
                for n in sorted({1, args.replicas}):
                    label = f"{what}-{n}"
                    print(f"{label}: {n} replica(s), {args.widgets} Widgets ...", flush=True)
                    results[label] = run_case(
                        srv,
                        workdir,
                        label,
                        n,
                        args.widgets,
                        args.workers,
                        wait,
                        args.lease,
                        webhook,
                        args.tokens,
                        args.ring_resync,
                    )
                    print(f"  {json.dumps(results[label])}", flush=True)
        finally:
            gen.close()
    n = args.replicas
    if f"memory-{n}" in results:
        results["cache ratio (mean sharded / unsharded)"] = ratio(
            results[f"memory-{n}"], results["memory-1"], "cache MB", statistics.mean
        )
        results["cache ratio (max sharded / unsharded)"] = ratio(
            results[f"memory-{n}"], results["memory-1"], "cache MB", max
        )
    if f"throughput-{n}" in results:
        for what in ("seconds to the last pass (finished)", "seconds to every first pass"):
            one, many = results["throughput-1"][what], results[f"throughput-{n}"][what]
            results[f"speedup ({what})"] = round(one / many, 2)
    results["load after"] = [round(x, 2) for x in os.getloadavg()]
    out = REPO / "benchmarks" / "results" / "sharding.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\ncommand: {command}\nserver: {results.get('server')}")
    print(f"load average before {results['load before']}, after {results['load after']}")
    for label, value in results.items():
        if label.startswith(("cache ratio", "speedup")):
            print(f"{label}: {value}")
    print(f"written to {out.relative_to(REPO)}")


def install_crd(srv: Server, workdir: Path) -> None:
    """The Widget CRD, as examples/operator.py installs it, Established."""
    import importlib.util

    from cloudcoil_cache.client import Config

    spec = importlib.util.spec_from_file_location("example_operator_bench", REPO / "examples" / "operator.py")
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    config = Config(kubeconfig=srv.kubeconfig(workdir / "admin-kubeconfig", "default"))
    try:
        example.install_crd(config)
    finally:
        config.close()


if __name__ == "__main__":
    threading.current_thread().name = "sharding-bench"
    main()
