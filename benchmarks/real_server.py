"""The benchmark's real API server: kube-apiserver + etcd seeded with realistic pods, and a burst driver.

Run (by ``run.py --server real`` and ``peers.py --kubeconfig``)::

    .venv/bin/python benchmarks/real_server.py --kubeconfig /tmp/kc --pods 10000   # serve
    .venv/bin/python benchmarks/real_server.py --kubeconfig /tmp/kc --drive         # drive bursts

Serve: starts ``cloudcoil_cache.testing.RealAPIServer`` (binaries from ``--assets``,
``$KUBEBUILDER_ASSETS`` or ``tools/real-apiserver/build``'s cache folder), writes an admin kubeconfig,
seeds ``--pods`` realistic pods (the fake mode's ``seeded_pod``: ~6.9 KB of JSON), prints
``<url> seeded <N> <seconds> <failed requests>``, then waits for ``quit`` (or EOF) on stdin.

- ``--seed api``: every pod through the API from ``--threads`` threads over keep-alive HTTPS
  connections, each create followed by a merge patch of its ``status`` subresource (kube-apiserver
  resets a created pod's status to Pending); ~20-140 pods/s on a 2-core machine.
- ``--seed etcd`` (the default when ``go`` is on PATH): the first ``--templates`` pods the same way,
  then the rest written straight into etcd by ``benchmarks/clientgo -seed-etcd`` (built as
  ``peers.py`` builds the client-go peer): clones of those pods as kube-apiserver stores them
  (protobuf, with every field ``seeded_pod`` derives from the index recomputed, a new uid and
  creationTimestamp), checked against the templates; it returns once a consistent LIST counts
  ``--pods``, i.e. the watch cache has caught up. 1,000-2,000 pods/s (README: "Seeding the real server").

Drive: against the server in ``--kubeconfig``, lists the pods' names and reads commands on stdin
with ``burst_server.py``'s protocol, so ``peers.drive_burst`` works unchanged:

- ``prepare N``: pick the next N pods (round robin) and build their patches; answers ``prepared N``;
- ``fire``: JSON merge patch one label of each (``bench-burst``) from ``--threads`` threads, as
  fast as the server answers; answers ``sent N <failures> <seconds>`` when the last is answered.

Unlike the fake's burst, the events are real writes: every one goes through etcd and the API
server's watch cache, so the events per second a client sees are bounded by how fast the server
takes the writes (``<seconds>`` in the answer: the server's ceiling in the same run).
"""

from __future__ import annotations

import argparse
import atexit
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import requests
import yaml

REPO = Path(__file__).resolve().parent.parent
NAMESPACES = ("default", "kube-system", "team-a", "team-b")


class Session:
    """requests sessions (one per thread) authenticated from a kubeconfig's first cluster and user."""

    def __init__(self, kubeconfig: Path) -> None:
        config = yaml.safe_load(kubeconfig.read_text())
        cluster = config["clusters"][0]["cluster"]
        user = config["users"][0]["user"]
        self.url: str = cluster["server"].rstrip("/")
        self.headers = {"Accept": "application/json"}
        if "token" in user:
            self.headers["Authorization"] = f"Bearer {user['token']}"
        self.verify: str | bool = True
        if "certificate-authority-data" in cluster:
            folder = tempfile.mkdtemp(prefix="bench-ca-")
            atexit.register(shutil.rmtree, folder, True)
            ca = Path(folder) / "ca.crt"
            ca.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
            self.verify = str(ca)
        self._local = threading.local()

    def get(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            session.headers.update(self.headers)
            session.verify = self.verify
            session.trust_env = False  # $REQUESTS_CA_BUNDLE would replace the cluster's CA
        return session


def _create(session: Session, index: int) -> int:
    """Create one seeded pod and set its status; the number of failed requests (0, 1 or 2)."""
    from cloudcoil_cache.testing.data.objects import seeded_pod

    namespace, _app, pod = seeded_pod(index, NAMESPACES)
    status = pod.pop("status")
    http = session.get()
    base = f"{session.url}/api/v1/namespaces/{namespace}/pods"
    created = http.post(base, data=json.dumps(pod), headers={"Content-Type": "application/json"}, timeout=120)
    if created.status_code != 201:
        return 2
    patched = http.patch(
        f"{base}/{pod['metadata']['name']}/status",
        data=json.dumps({"status": status}),
        headers={"Content-Type": "application/merge-patch+json"},
        timeout=120,
    )
    return int(patched.status_code != 200)


def seed(session: Session, pods: int, threads: int, start: int = 0) -> tuple[float, int]:
    """Create the namespaces and pods ``start``..``pods - 1`` through the API; (seconds, failed requests)."""
    http = session.get()
    for namespace in NAMESPACES:
        http.post(f"{session.url}/api/v1/namespaces", json={"metadata": {"name": namespace}}, timeout=60)
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="seed") as pool:
        failures = sum(pool.map(lambda k: _create(session, k), range(start, pods), chunksize=64))
    return time.perf_counter() - started, failures


def _go() -> str | None:
    return shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)


def seed_etcd(server: Any, kubeconfig: Path, pods: int, threads: int, templates: int) -> tuple[float, int]:
    """The first ``templates`` pods through the API, the rest cloned into etcd by ``clientgo -seed-etcd``
    (falls back to the API when the Go program cannot be built); (seconds, failed requests)."""
    from peers import build_clientgo  # benchmarks/peers.py (imports this module: not at the top)

    binary, why = None, ""
    if pods > templates:  # built before the clock starts (a first build takes minutes)
        binary, why = build_clientgo()
    session = Session(kubeconfig)
    started = time.perf_counter()
    api_s, failures = seed(session, min(pods, templates), threads)
    print(f"seed: {min(pods, templates):,} template pods through the API in {api_s:.1f} s", file=sys.stderr, flush=True)
    if pods <= templates:
        return time.perf_counter() - started, failures
    if binary is None:
        print(f"seed: {why}; the rest through the API", file=sys.stderr, flush=True)
        _, more = seed(session, pods, threads, start=templates)
        return time.perf_counter() - started, failures + more
    command = [str(binary), "-seed-etcd", server.etcd_url, "-kubeconfig", str(kubeconfig), "-pods", str(pods)]
    done = subprocess.run(command + ["-content-type", "protobuf"], stdout=subprocess.PIPE, text=True, check=False)
    report = next((json.loads(line) for line in done.stdout.splitlines() if '"seeded"' in line), None)
    if done.returncode != 0 or report is None:
        raise RuntimeError(f"clientgo -seed-etcd failed (exit {done.returncode}); its stderr is above")
    seconds = time.perf_counter() - started
    print(
        f"seed: {report['written']:,} pods into etcd in {report['write_s']:.1f} s "
        f"({report['write_per_s']:,.0f} pods/s, {report['value_bytes_avg'] / 1024:.1f} KB each), "
        f"the API server caught up in {report['catchup_s']:.1f} s; {report['pods']:,} pods in {seconds:.1f} s "
        f"({report['pods'] / seconds:,.0f} pods/s overall)",
        file=sys.stderr,
        flush=True,
    )
    return seconds, failures + int(report["failures"])


def serve(
    kubeconfig: Path, pods: int, threads: int, assets: str | None, flags: list[str], mode: str, templates: int
) -> None:
    from cloudcoil_cache.testing import RealAPIServer

    with RealAPIServer(assets, startup_timeout=300, apiserver_flags=flags) as server:
        server.write_kubeconfig(kubeconfig)
        print(f"pids {server.pids}", file=sys.stderr, flush=True)  # list_requests.py --apiserver-pid
        if mode == "etcd":
            seconds, failures = seed_etcd(server, kubeconfig, pods, threads, templates)
        else:
            seconds, failures = seed(Session(kubeconfig), pods, threads)
            print(f"seed: {pods:,} pods through the API ({pods / seconds:,.0f} pods/s)", file=sys.stderr, flush=True)
        print(f"{server.url} seeded {pods} {seconds:.2f} {failures}", flush=True)
        for line in sys.stdin:
            if line.strip() == "quit":
                break


def pod_names(session: Session) -> list[tuple[str, str]]:
    """Every pod's (namespace, name), sorted: each namespace's pods as a Table without the objects
    (the names alone; 100,000 pods as JSON take the server and this process minutes, 7 s this way)."""
    http = session.get()
    table = {"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1,application/json"}
    namespaces = http.get(f"{session.url}/api/v1/namespaces", timeout=120).json()["items"]
    names: list[tuple[str, str]] = []
    for namespace in (item["metadata"]["name"] for item in namespaces):
        token = ""
        while True:
            params = {"limit": "5000", "includeObject": "None", **({"continue": token} if token else {})}
            url = f"{session.url}/api/v1/namespaces/{namespace}/pods"
            body = http.get(url, params=params, headers=table, timeout=300).json()
            if "rows" in body:  # a Table: the first cell is the name
                names.extend((namespace, row["cells"][0]) for row in body["rows"])
            else:  # a server without Tables answers a PodList
                names.extend((namespace, pod["metadata"]["name"]) for pod in body["items"])
            token = body["metadata"].get("continue", "")
            if not token:
                break
    return sorted(names)


def drive(kubeconfig: Path, threads: int) -> None:
    session = Session(kubeconfig)
    names = pod_names(session)
    print(f"driving {session.url} ({len(names)} pods)", flush=True)
    generation, cursor = 0, 0
    prepared: list[tuple[str, bytes]] = []

    def patch(item: tuple[str, bytes]) -> int:
        response = session.get().patch(
            item[0], data=item[1], headers={"Content-Type": "application/merge-patch+json"}, timeout=120
        )
        return int(response.status_code != 200)

    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "prepare":
            generation += 1
            prepared = []
            for n in range(int(words[1])):
                namespace, name = names[(cursor + n) % len(names)]
                # unique per driver process too: a PATCH that changes nothing makes no event
                body = {"metadata": {"labels": {"bench-burst": f"{os.getpid()}-{generation}-{n}"}}}
                prepared.append((f"{session.url}/api/v1/namespaces/{namespace}/pods/{name}", json.dumps(body).encode()))
            cursor += len(prepared)
            print(f"prepared {len(prepared)}", flush=True)
        elif words[0] == "fire":
            started = time.perf_counter()
            with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="patch") as pool:
                failures = sum(pool.map(patch, prepared, chunksize=16))
            print(f"sent {len(prepared)} {failures} {time.perf_counter() - started:.3f}", flush=True)
            prepared = []
        elif words[0] == "quit":
            break


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=16, help="HTTP threads creating pods / sending patches")
    parser.add_argument("--assets", help="folder with kube-apiserver and etcd (default: RealAPIServer's lookup)")
    parser.add_argument("--drive", action="store_true", help="drive bursts against the server in --kubeconfig")
    parser.add_argument(
        "--seed",
        choices=("api", "etcd"),
        help="api: every pod through the API; etcd: --templates through the API, the rest cloned into etcd "
        "by benchmarks/clientgo -seed-etcd (default: etcd when `go` is on PATH, else api)",
    )
    parser.add_argument(
        "--templates", type=int, default=208, help="--seed etcd: pods created through the API first (>= 16)"
    )
    parser.add_argument(
        "--apiserver-flag",
        action="append",
        default=[],
        help="an extra kube-apiserver flag (repeatable), e.g. --apiserver-flag=--feature-gates=WatchList=true",
    )
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # run RealAPIServer's stop (and the finally)
    sys.path.insert(0, str(REPO))
    if args.drive:
        drive(args.kubeconfig, args.threads)
    else:
        mode = args.seed or ("etcd" if _go() else "api")
        serve(args.kubeconfig, args.pods, args.threads, args.assets, args.apiserver_flag, mode, args.templates)
    os.environ.pop("KUBECONFIG", None)


if __name__ == "__main__":
    main()
