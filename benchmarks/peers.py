"""Peer benchmarks: the official client's informer and cloudcoil's cache against our fake API server.

Run (peers need their own virtualenv; nothing here imports cloudcoil_cache unless asked to)::

    python3 -m venv /tmp/peers-venv && /tmp/peers-venv/bin/pip install kubernetes "cloudcoil[kubernetes]"
    /tmp/peers-venv/bin/python benchmarks/peers.py --library kubernetes --pods 10000
    /tmp/peers-venv/bin/python benchmarks/peers.py --library cloudcoil --pods 10000
    .venv/bin/python benchmarks/peers.py --library cloudcoil_cache --pods 10000

Each run starts ``python -m cloudcoil_cache.testing serve --pods N`` with ``--server-python``
(default: the repo's ``.venv/bin/python``) in a subprocess and measures, for one library:

- floor: paginated LIST (limit 500) with requests + json.loads, nothing kept (as ``run.py``);
- sync: seconds until the library's informer/cache holds its initial list, and pods actually held;
- memory: tracemalloc bytes held after sync per pod (a second, traced sync) and RSS growth per pod,
  beside the heap in use per pod in the same process (``heap_kb``: pymalloc's allocated blocks +
  glibc malloc's in-use bytes, free to read; client-go: Go's HeapInuse); with ``--churn SECONDS``
  both again after that long a trickle of MODIFIED events (``--churn-rate``, default 100/s);
- events: a thread pool PATCHes (JSON merge patch, one label) ``--events`` existing pods over HTTP
  while the library watches; events/s is ``--events`` over the time from the first PATCH sent
  until the library's update handler has seen them all (the server is in the loop, so this is an
  end-to-end figure; ``patch_s`` is when the last PATCH was answered);
- burst: deletecollection of every pod (one request per namespace); DELETED events/s until the
  library's delete handler has seen all — a client-heavier figure than the PATCH one;
- reads: median latency of listing one namespace from the cache;
- full (cloudcoil only, whose cache keeps only the first LIST page): every page listed and kept
  with its own client, timed and traced, as a lower bound for a complete sync.

Against a running server instead (``run.py --server real``): ``--kubeconfig KC`` measures against the
server it names (authenticated from the kubeconfig), its bursts driven by ``real_server.py --drive``
(real PATCHes from that process, ``prepare``/``fire`` as above); ``--fresh`` syncs before the floor
runs in this process, so RSS per pod is what a new process sees. ``--library client-go-protobuf`` is
client-go asking for protobuf (a real server only; ``client-go`` asks for JSON, client-go's default).

The last line of output is ``RESULT {json}`` for collecting results.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import logging
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

import requests
from real_server import Session  # benchmarks/real_server.py: kubeconfig-authenticated sessions

REPO = Path(__file__).resolve().parent.parent


def _rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks")
    ] + [("keepcost", ctypes.c_size_t)]


def _mallinfo2() -> Callable[[], _MallInfo2] | None:
    try:
        function = ctypes.CDLL(None).mallinfo2  # glibc 2.33+
    except (AttributeError, OSError):
        return None
    function.restype = _MallInfo2
    return function  # type: ignore[no-any-return]


_MALLINFO2 = _mallinfo2()


def _pymalloc_kb() -> int | None:
    """Bytes in pymalloc's allocated blocks (``sys._debugmallocstats``, which writes to fd 2: read
    back through a temporary file), in KB; None where it says nothing (another allocator)."""
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile("w+") as out:
            os.dup2(out.fileno(), 2)
            try:
                sys._debugmallocstats()
            finally:
                os.dup2(saved, 2)
            out.seek(0)
            match = re.search(r"# bytes in allocated blocks\s*=\s*([\d,]+)", out.read())
    finally:
        os.close(saved)
    return int(match.group(1).replace(",", "")) // 1024 if match else None


def heap_kb() -> int | None:
    """The process's heap in use, in KB, at no cost to what it measures (unlike tracemalloc): the
    bytes of pymalloc's allocated blocks (objects up to 512 bytes) plus glibc malloc's in-use bytes
    (``mallinfo2``: ``uordblks`` + ``hblkhd``, the larger objects and buffers; pymalloc's own arenas
    are mmap'd, outside it). What RSS would be without fragmentation or free memory kept by the
    allocators: the analogue of Go's HeapInuse. None without glibc 2.33+ or pymalloc."""
    py = _pymalloc_kb()
    if py is None or _MALLINFO2 is None:
        return None
    info = _MALLINFO2()
    return py + (info.uordblks + info.hblkhd) // 1024


def _cpu_us() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1e6


def start_until(command: list[str], found: Callable[[str], Any]) -> tuple[subprocess.Popen[str], Any]:
    """Start ``command`` (stdin and stdout piped, line-buffered text) and read its stdout until
    ``found(line)`` returns something: the process and that. None if its stdout ended first (the
    process is then killed)."""
    proc = subprocess.Popen(command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    assert proc.stdout is not None
    for line in proc.stdout:
        result = found(line)
        if result is not None:
            return proc, result
    proc.kill()
    proc.wait(60)
    return proc, None


def _start_server(server_python: str, pods: int, kubeconfig: Path) -> tuple[subprocess.Popen[str], str]:
    """``benchmarks/burst_server.py`` (the fake API server + a triggered burst) in a subprocess."""
    script = str(REPO / "benchmarks" / "burst_server.py")
    command = [server_python, script, "--kubeconfig", str(kubeconfig), "--pods", str(pods)]
    proc, match = start_until(command, lambda line: re.search(r"(http://127\.0\.0\.1:\d+)", line))
    if match is None:
        raise RuntimeError("the fake API server did not start")
    return proc, match.group(1)


def _start_driver(server_python: str, kubeconfig: Path) -> tuple[subprocess.Popen[str], str]:
    """``benchmarks/real_server.py --drive`` against the running server in ``kubeconfig``: the
    burst server's protocol (``prepare``/``fire``), its events real PATCHes sent from that process."""
    command = [server_python, str(REPO / "benchmarks" / "real_server.py"), "--kubeconfig", str(kubeconfig), "--drive"]
    proc, match = start_until(command, lambda line: re.search(r"^driving (https?://\S+)", line))
    if match is None:
        raise RuntimeError("the burst driver did not start")
    return proc, match.group(1)


def stop_server(proc: subprocess.Popen[str], timeout: float = 30) -> None:
    """Stop the burst server (SIGTERM, then SIGKILL if it has not ended within ``timeout``)."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout)


def server_command(proc: subprocess.Popen[str], command: str) -> str:
    """Send one command to the burst server; its one-line answer."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(command + "\n")
    proc.stdin.flush()
    return proc.stdout.readline().strip()


def drive_burst(proc: subprocess.Popen[str], events: int, counter: _Counter, timeout: float) -> dict[str, Any]:
    """The server queues ``events`` MODIFIED events on every pod watch at once; time until the
    library's update handler has seen them all, and the client CPU spent meanwhile. The server
    serialises the events first (``prepare``), before the clock starts: only applying them is timed."""
    prepared = server_command(proc, f"prepare {events}")
    if prepared != f"prepared {events}":
        raise RuntimeError(f"the burst server answered {prepared!r} to prepare {events}")
    counter.arm(events)
    cpu0 = _cpu_us()
    started = time.perf_counter()
    answer = server_command(proc, "fire")
    complete = counter.done.wait(timeout)
    elapsed = time.perf_counter() - started
    cpu = _cpu_us() - cpu0
    counter.armed = False
    return {
        "burst_events": events,
        "burst_s": elapsed,
        "burst_seen": counter.seen,
        "burst_complete": complete,
        "burst_per_s": counter.seen / elapsed,
        "burst_cpu_us_per_event": cpu / max(1, counter.seen),
        "burst_server": answer,
    }


def _burst(peer: _Peer, proc: subprocess.Popen[str], events: int, counter: _Counter, timeout: float) -> dict[str, Any]:
    """``drive_burst``, with the CPU a peer in another process measured itself and what the library
    says of its informer afterwards (relists, last error), printed."""
    burst = drive_burst(proc, events, counter, timeout)
    own_cpu = getattr(peer, "replies", {}).get("cpu_update")
    if own_cpu:
        burst["burst_cpu_us_per_event"] = own_cpu["cpu_us_per_event"]
    diagnostics = peer.diagnostics()
    if diagnostics is not None:
        burst["informer"] = diagnostics
        print(f"status {diagnostics}", flush=True)
    print(
        f"burst  {burst['burst_seen']}/{events} MODIFIED seen in {burst['burst_s']:.2f} s "
        f"({burst['burst_per_s']:,.0f}/s; {burst['burst_cpu_us_per_event']:.0f} µs client CPU/event)",
        flush=True,
    )
    return burst


def _memory(rss0: int, heap0: int | None, pods: int, prefix: str = "") -> dict[str, Any]:
    """RSS and heap growth per pod since (``rss0``, ``heap0``), after a ``gc.collect()``."""
    gc.collect()
    rss, heap = _rss_kb(), heap_kb()
    out: dict[str, Any] = {prefix + "rss_kb_per_pod": (rss - rss0) / pods}
    if heap is not None and heap0 is not None:
        out[prefix + "heap_kb_per_pod"] = (heap - heap0) / pods
    return out


def _fmt_kb(value: float | None) -> str:
    return "?" if value is None else f"{value:.1f}"


def drive_churn(
    proc: subprocess.Popen[str],
    peer: _Peer,
    counter: _Counter,
    seconds: float,
    rate: float,
    base: tuple[int, int | None],
    pods: int,
    timeout: float,
) -> dict[str, Any]:
    """A trickle of MODIFIED events (``rate`` per second for ``seconds``, the burst server's
    ``trickle``) once synced; RSS and heap per pod (over the same base as the sync's) once the
    library's handler has seen them all: what a minute of churn leaves."""
    events = int(rate * seconds)
    counter.arm(events)
    answer = server_command(proc, f"trickle {rate:g} {seconds:g}")
    complete = counter.done.wait(timeout)
    counter.armed = False
    out: dict[str, Any] = {
        "churn_s": seconds,
        "churn_rate": rate,
        "churn_events": events,
        "churn_seen": counter.seen,
        "churn_complete": complete,
        "churn_server": answer,
    }
    own = peer.remeasured()
    if own is None:
        out.update(_memory(*base, pods, prefix="churn_"))
    else:
        out["churn_rss_kb_per_pod"] = own["rss_kb_per_pod"]
        out["churn_heap_kb_per_pod"] = own["heap_kb_per_pod"]
    return out


def bench_floor(
    url: str,
    names: list[tuple[str, str]] | None = None,
    http: requests.Session | None = None,
    loads: Callable[[bytes], Any] = json.loads,
) -> float:
    """One paginated LIST with requests + ``loads`` (the stdlib's ``json.loads``; ``orjson.loads``
    for the orjson floor), nothing kept (collects names if asked; ``http``: an authenticated
    session, for a real server)."""
    get = (http or requests).get
    started = time.perf_counter()
    token = None
    while True:
        params = {"limit": "500"}
        if token:
            params["continue"] = token
        body = loads(get(f"{url}/api/v1/pods", params=params, timeout=60).content)
        if names is not None:
            names.extend((p["metadata"]["namespace"], p["metadata"]["name"]) for p in body["items"])
        token = body["metadata"].get("continue")
        if not token:
            return time.perf_counter() - started


class _Counter:
    """Counts update events once armed; sets ``done`` when the target is reached."""

    def __init__(self) -> None:
        self.armed = False
        self.seen = 0
        self.target = 0
        self.done = threading.Event()
        self.on_arm: Callable[[int], None] | None = None  # a peer in another process counts itself

    def arm(self, target: int) -> None:
        self.seen = 0
        self.target = target
        self.done.clear()
        self.armed = True
        if self.on_arm is not None:
            self.on_arm(target)

    def hit(self, *_: Any) -> None:
        if self.armed:
            self.seen += 1
            if self.seen >= self.target:
                self.done.set()


class _Peer:
    """One library under test: start + wait for sync, count updates, read, stop."""

    name = ""
    version = ""
    notes = ""

    def __init__(self, kubeconfig: Path, pods: int, counter: _Counter, deletes: _Counter) -> None:
        self.kubeconfig = kubeconfig
        self.pods = pods
        self.counter = counter
        self.deletes = deletes

    def start_and_sync(self, timeout: float) -> None:
        raise NotImplementedError

    def held(self) -> int:
        raise NotImplementedError

    def list_namespace(self, namespace: str) -> list[Any]:
        raise NotImplementedError

    def timed_list(self, namespace: str) -> tuple[float, int]:
        """Median milliseconds of 10 namespace lists from the cache, and the items listed."""
        times = []
        for _ in range(10):
            t0 = time.perf_counter()
            items = self.list_namespace(namespace)
            times.append(time.perf_counter() - t0)
        return sorted(times)[len(times) // 2] * 1000, len(items)

    def self_measured(self) -> dict[str, Any] | None:
        """Figures a peer in another process measured itself after sync (RSS...); None here."""
        return None

    def remeasured(self) -> dict[str, Any] | None:
        """A peer in another process measures its memory again (after churn); None here."""
        return None

    def sample(self) -> Any:
        raise NotImplementedError

    def full_list(self) -> int | None:
        """Where the cache holds less than everything: list every page with the library's own
        client and keep the objects (what a complete sync would at least cost); None otherwise."""
        return None

    def diagnostics(self) -> dict[str, Any] | None:
        """What the library says of its own informer (relists, last error), for the RESULT; None here."""
        return None

    def stop_event(self) -> threading.Event | None:
        """An Event set when stopping starts, if the watch thread needs a wake-up event to exit."""
        return None

    def stop(self) -> None:
        raise NotImplementedError


class _Kubernetes(_Peer):
    """``kubernetes.informer.SharedInformer`` over ``CoreV1Api.list_pod_for_all_namespaces``."""

    name = "kubernetes"

    def __init__(self, kubeconfig: Path, pods: int, counter: _Counter, deletes: _Counter) -> None:
        super().__init__(kubeconfig, pods, counter, deletes)
        import kubernetes
        from kubernetes import client, config
        from kubernetes.informer import ADDED, DELETED, MODIFIED, SharedInformer

        self.version = kubernetes.__version__
        api_client = config.new_client_from_config(config_file=str(kubeconfig))
        self.informer = SharedInformer(client.CoreV1Api(api_client).list_pod_for_all_namespaces)
        self.synced = threading.Event()
        self.added = 0

        def on_added(obj: Any) -> None:
            self.added += 1
            if self.added >= pods:
                self.synced.set()

        self.informer.add_event_handler(ADDED, on_added)
        self.informer.add_event_handler(MODIFIED, counter.hit)
        self.informer.add_event_handler(DELETED, deletes.hit)

    def start_and_sync(self, timeout: float) -> None:
        self.informer.start()
        if not self.synced.wait(timeout):
            raise TimeoutError(f"kubernetes informer: {self.added}/{self.pods} ADDED after {timeout}s")

    def held(self) -> int:
        return len(self.informer.cache.list_keys())

    def list_namespace(self, namespace: str) -> list[Any]:
        # ObjectCache has no namespace index: a namespace list is a scan of every object.
        return [p for p in self.informer.cache.list() if p.metadata.namespace == namespace]

    def sample(self) -> Any:
        return self.informer.cache.list()[0]

    def stop_event(self) -> threading.Event:
        return self.informer._stop_event

    def stop(self) -> None:
        # stop() closes the stream under the watch thread, which logs the ProtocolError it gets
        log = logging.getLogger("kubernetes.informer.informer")
        log.disabled = True
        try:
            self.informer.stop()
        finally:
            log.disabled = False


class _Cloudcoil(_Peer):
    """cloudcoil's ``Cache(resources=[Pod])`` entered with ``with config:`` (waits for sync)."""

    name = "cloudcoil"

    def __init__(self, kubeconfig: Path, pods: int, counter: _Counter, deletes: _Counter) -> None:
        super().__init__(kubeconfig, pods, counter, deletes)
        from importlib.metadata import version

        import cloudcoil.client  # noqa: F401  (first: importing cloudcoil.caching first is circular)
        from cloudcoil.caching import Cache
        from cloudcoil.client import Config
        from cloudcoil.models.kubernetes.core.v1 import Pod

        self.version = version("cloudcoil")
        self.config = Config(
            kubeconfig=str(kubeconfig), cache=Cache(resources=[Pod], sync_timeout=600, resync_period=3600)
        )
        # The fake server answers an aggregated-discovery Accept header with plain APIVersions /
        # APIGroupList; cloudcoil takes that 200 as an empty aggregated list and maps nothing.
        # A real server either answers the v2 format or not 200, so use its traditional discovery.
        self.config._try_aggregated_discovery = lambda: False  # type: ignore[method-assign]
        self.config.initialize()
        self.informer = self.config.cache.get_informer(Pod, sync=True)
        self.informer.on_update(counter.hit)
        self.informer.on_delete(deletes.hit)

    def start_and_sync(self, timeout: float) -> None:
        self.config.activate()
        if not self.informer.has_synced():
            raise TimeoutError("cloudcoil cache did not sync")

    def held(self) -> int:
        return self.informer._store.size()

    def list_namespace(self, namespace: str) -> list[Any]:
        return self.informer.list(namespace=namespace)

    def sample(self) -> Any:
        return self.informer.list()[0]

    def full_list(self) -> int:
        from cloudcoil.models.kubernetes.core.v1 import Pod

        client = self.config.client_for(Pod, sync=True, cached=False)
        self.kept: dict[str, Any] = {}
        token = None
        while True:
            page = client.list(all_namespaces=True, continue_=token, limit=500)
            for pod in page.items:
                self.kept[f"{pod.metadata.namespace}/{pod.metadata.name}"] = pod
            token = page.metadata.continue_ if page.metadata else None
            if not token:
                return len(self.kept)

    def stop_event(self) -> threading.Event:
        return self.informer._watch._stop_event

    def stop(self) -> None:
        self.config.deactivate()


class _CloudcoilCache(_Peer):
    """This project: ``Cache(resources=[Pod])`` entered with ``with config:``."""

    name = "cloudcoil_cache"

    def __init__(self, kubeconfig: Path, pods: int, counter: _Counter, deletes: _Counter) -> None:
        super().__init__(kubeconfig, pods, counter, deletes)
        sys.path.insert(0, str(REPO))
        import cloudcoil_cache
        from cloudcoil_cache import _json
        from cloudcoil_cache.caching import Cache
        from cloudcoil_cache.client import Config
        from cloudcoil_cache.models.kubernetes.core.v1 import Pod

        self.version = getattr(cloudcoil_cache, "__version__", "dev")
        self.decoder = "orjson" if _json.HAVE_ORJSON else "json"
        from cloudcoil_cache.caching import Tuning

        # $BENCH_PAGE_SIZE: Tuning.page_size (0: one unpaginated LIST, decoded while it is read)
        page_size = os.environ.get("BENCH_PAGE_SIZE")
        tuning = Tuning(page_size=int(page_size)) if page_size else None
        # No periodic resync during the run (cloudcoil's peer: 3600 s; client-go's: none): the
        # default (300 s) relists every pod, which at 100,000 pods fell inside the burst.
        cache = Cache(resources=[Pod], sync_timeout=600, tuning=tuning, resync_period=None)
        self.config = Config(kubeconfig=str(kubeconfig), cache=cache)
        self.config.initialize()
        self.informer = self.config.cache.get_informer(Pod, sync=True)
        self.informer.on_update(counter.hit)
        self.informer.on_delete(deletes.hit)

    def start_and_sync(self, timeout: float) -> None:
        self.config.activate()

    def held(self) -> int:
        return len(self.informer.list())

    def list_namespace(self, namespace: str) -> list[Any]:
        return self.informer.list(namespace=namespace)

    def sample(self) -> Any:
        return self.informer.list()[0]

    def diagnostics(self) -> dict[str, Any]:
        status = self.informer.status()
        return {
            "relist_count": status.relist_count,
            "last_error": status.last_error,
            "state": status.state,
            "resource_version": status.resource_version,
            "handler_backlogs": status.handler_backlogs,
        }

    def stop(self) -> None:
        self.config.deactivate()
        self.config.close()


GO_DIR = REPO / "benchmarks" / "clientgo"
GO_BINARY = REPO / "benchmarks" / ".build" / "clientgo"


def build_clientgo(timeout: float = 1800) -> tuple[Path | None, str]:
    """``go build`` the client-go peer into ``benchmarks/.build/`` (cached while its sources are
    older than the binary). Returns (binary, "") or (None, why it was skipped)."""
    import shutil

    sources = [*GO_DIR.glob("*.go"), GO_DIR / "go.mod", GO_DIR / "go.sum"]
    if GO_BINARY.exists() and GO_BINARY.stat().st_mtime >= max(p.stat().st_mtime for p in sources):
        return GO_BINARY, ""
    go = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
    if go is None:
        return None, "no `go` toolchain on PATH (client-go column skipped)"
    GO_BINARY.parent.mkdir(parents=True, exist_ok=True)
    print(f"building the client-go peer with {go} (first time: minutes; modules from the Go proxy)", flush=True)
    try:
        done = subprocess.run(
            [go, "build", "-o", str(GO_BINARY), "."], cwd=GO_DIR, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return None, f"`go build` took over {timeout:.0f} s (client-go column skipped)"
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return None, "`go build` failed: " + " / ".join(tail)
    return GO_BINARY, ""


class _ClientGo(_Peer):
    """client-go's ``SharedInformerFactory`` Pod informer in a Go process (``benchmarks/clientgo``).

    The process measures itself (RSS, CPU) and answers the harness over stdin/stdout; its handlers
    count update/delete events like the other peers' handlers do.
    """

    name = "client-go"
    content_type = "json"

    def __init__(self, kubeconfig: Path, pods: int, counter: _Counter, deletes: _Counter) -> None:
        super().__init__(kubeconfig, pods, counter, deletes)
        binary, why = build_clientgo()
        if binary is None:
            raise RuntimeError(why)
        self.version = _clientgo_version()
        self.proc = subprocess.Popen(
            [str(binary), "-kubeconfig", str(kubeconfig), "-pods", str(pods), "-content-type", self.content_type],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.replies: dict[str, Any] = {}
        self.arrived = threading.Condition()
        self.reader = threading.Thread(target=self._read, name="clientgo-reader", daemon=True)
        self.reader.start()
        counter.on_arm = lambda n: self.arm("update", n)
        deletes.on_arm = lambda n: self.arm("delete", n)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            if reply.get("event") == "done":  # the Go handlers counted the armed target
                counter = self.counter if reply["kind"] == "update" else self.deletes
                counter.seen = reply["seen"]
                self.replies["cpu_" + reply["kind"]] = reply
                counter.done.set()
            with self.arrived:
                self.replies[reply["event"]] = reply
                self.arrived.notify_all()
        with self.arrived:
            self.replies["exited"] = True
            self.arrived.notify_all()

    def _wait(self, event: str, timeout: float) -> dict[str, Any]:
        with self.arrived:
            if not self.arrived.wait_for(lambda: event in self.replies or "exited" in self.replies, timeout):
                raise TimeoutError(f"client-go peer: no {event!r} after {timeout}s")
            if event not in self.replies:
                raise RuntimeError(f"client-go peer exited (code {self.proc.wait()}) before {event!r}")
            return self.replies.pop(event)  # type: ignore[no-any-return]

    def _send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def start_and_sync(self, timeout: float) -> None:
        self.synced = self._wait("synced", timeout)

    def self_measured(self) -> dict[str, Any]:
        return self.synced

    def remeasured(self) -> dict[str, Any]:
        self._send("mem")
        return self._wait("mem", 60)

    def arm(self, kind: str, target: int) -> None:
        self._send(f"arm {kind} {target}")
        self._wait("armed", 30)

    def held(self) -> int:
        return int(self.synced["held"])

    def timed_list(self, namespace: str) -> tuple[float, int]:
        self._send(f"list {namespace}")
        reply = self._wait("list", 60)
        return float(reply["list_ns_ms"]), int(reply["items"])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self._send("stop")
            try:
                self._wait("stopped", 30)
            except (TimeoutError, RuntimeError):
                pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.reader.join(10)


class _ClientGoProtobuf(_ClientGo):
    """client-go as Kubernetes' own components run it: protobuf (a real server only; client-go's
    own default is JSON)."""

    name = "client-go-protobuf"
    content_type = "protobuf"


def _clientgo_version() -> str:
    for line in (GO_DIR / "go.mod").read_text().splitlines():
        if "k8s.io/client-go " in line:
            return line.split()[-1]
    return "?"


PEERS: dict[str, Callable[[Path, int, _Counter, _Counter], _Peer]] = {
    "kubernetes": _Kubernetes,
    "cloudcoil": _Cloudcoil,
    "cloudcoil_cache": _CloudcoilCache,
    "client-go": _ClientGo,
    "client-go-protobuf": _ClientGoProtobuf,
}


def _patch(session: requests.Session, url: str, namespace: str, name: str, gen: int) -> bool:
    body = json.dumps({"metadata": {"labels": {"bench-gen": str(gen)}}})
    response = session.patch(
        f"{url}/api/v1/namespaces/{namespace}/pods/{name}",
        data=body,
        headers={"Content-Type": "application/merge-patch+json"},
        timeout=60,
    )
    return response.status_code == 200


def drive_events(
    url: str,
    names: list[tuple[str, str]],
    events: int,
    threads: int,
    counter: _Counter | None,
    timeout: float,
    generation: int = 0,
) -> dict[str, Any]:
    """PATCH ``events`` pods from ``threads`` threads; time until the library's handler saw them all.

    Each PATCH sets label ``bench-gen`` to ``generation + n``: a run must use values no earlier run
    set, since a PATCH that changes nothing produces no watch event (as on a real server)."""
    local = threading.local()
    failures = [0]

    def work(start: int) -> None:
        session = getattr(local, "session", None)
        if session is None:
            session = local.session = requests.Session()
        for n in range(start, events, threads):
            namespace, name = names[n % len(names)]
            if not _patch(session, url, namespace, name, generation + n):
                failures[0] += 1

    if counter is not None:
        counter.arm(events)
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="patch-driver") as pool:
        list(pool.map(work, range(threads)))
    patched = time.perf_counter() - started
    if counter is None:
        return {"patch_s": patched, "patch_failures": failures[0]}
    complete = counter.done.wait(timeout)
    elapsed = time.perf_counter() - started
    counter.armed = False
    return {
        "events": events,
        "patch_failures": failures[0],
        "patch_s": patched,
        "events_s": elapsed,
        "events_seen": counter.seen,
        "events_complete": complete,
        "events_per_s": counter.seen / elapsed,
        "lag_after_patches_s": elapsed - patched,
    }


def drive_deletes(url: str, names: list[tuple[str, str]], deletes: _Counter, timeout: float) -> dict[str, Any]:
    """DELETE every pod with one deletecollection per namespace (in parallel): a burst of DELETED
    events (each carrying the whole pod) that the server emits several times faster than PATCHes,
    so the client's decode + store + handler path shows (``deletes_lag_s``: after the server answered)."""
    namespaces = sorted({namespace for namespace, _ in names})

    def work(namespace: str) -> int:
        with requests.Session() as session:
            return session.delete(f"{url}/api/v1/namespaces/{namespace}/pods", timeout=timeout).status_code

    deletes.arm(len(names))
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(namespaces), thread_name_prefix="delete-driver") as pool:
        codes = list(pool.map(work, namespaces))
    answered = time.perf_counter() - started
    complete = deletes.done.wait(timeout)
    elapsed = time.perf_counter() - started
    deletes.armed = False
    return {
        "delete_codes": codes,
        "delete_answered_s": answered,
        "deletes_s": elapsed,
        "deletes_lag_s": elapsed - answered,
        "deletes_seen": deletes.seen,
        "deletes_complete": complete,
        "deletes_per_s": deletes.seen / elapsed,
    }


def _stop(peer: _Peer, url: str, names: list[tuple[str, str]], http: Session | None = None) -> float:
    """Stop the peer; a watch thread blocked on an idle stream is woken by one PATCH once stopping
    (``http``: authenticated sessions, for a real server)."""
    event = peer.stop_event()
    waker = None
    if event is not None:

        def wake() -> None:
            if event.wait(60):
                with http.get() if http is not None else requests.Session() as session:
                    # a PATCH (an event) wakes the stream; after the delete burst, a create does
                    if not _patch(session, url, *names[0], -1):
                        namespace, name = names[0]
                        session.post(
                            f"{url}/api/v1/namespaces/{namespace}/pods",
                            json={
                                "apiVersion": "v1",
                                "kind": "Pod",
                                "metadata": {"name": name + "-wake"},
                                "spec": {"containers": [{"name": "c", "image": "x"}]},
                            },
                            timeout=60,
                        )

        waker = threading.Thread(target=wake, name="peer-waker", daemon=True)
        waker.start()
    started = time.perf_counter()
    peer.stop()
    if waker is not None:
        waker.join(60)
    return time.perf_counter() - started


def _mutable(obj: Any) -> bool:
    try:
        obj.metadata.labels["bench-probe"] = "x"
    except Exception:
        return False
    del obj.metadata.labels["bench-probe"]
    return True


def _floors(url: str, http: Session | None, result: dict[str, Any]) -> list[tuple[str, str]]:
    """The floor (best of 2, after a pass that collects the pods' names) into ``result``; the names."""
    session = http.get() if http is not None else None
    names: list[tuple[str, str]] = []
    bench_floor(url, names, session)
    for prefix, loads in (("", json.loads), ("orjson_", _orjson_loads())):
        if loads is None:
            continue
        walls, cpus = [], []
        for _ in range(2):
            cpu0 = _cpu_us()
            enabled = gc.isenabled()
            gc.disable()  # the floor: parsing alone, no collection
            try:
                walls.append(bench_floor(url, http=session, loads=loads))
            finally:
                if enabled:
                    gc.enable()
            cpus.append((_cpu_us() - cpu0) / 1e6)
        result[prefix + "floor_s"], result[prefix + "floor_cpu_s"] = min(walls), min(cpus)
        print(
            f"floor  {result[prefix + 'floor_s']:.2f} s (paginated GET + {'orjson' if prefix else 'json'}.loads, "
            f"GC off; CPU {result[prefix + 'floor_cpu_s']:.2f} s)",
            flush=True,
        )
    return names


def _warm(url: str) -> None:
    """Read the whole pod list once and drop it, 64 KB at a time: the fake server encodes each
    object on its first LIST (server work the floors, run later, never pay)."""
    with requests.get(f"{url}/api/v1/pods", stream=True, timeout=600) as response:
        for _ in response.iter_content(1 << 16):
            pass


def _orjson_loads() -> Callable[[bytes], Any] | None:
    """``orjson.loads`` where this Python has it (the orjson floor), else None; imported even when
    ``--decoder json`` hides it from the library (hidden again after)."""
    hidden = "orjson" in sys.modules and sys.modules["orjson"] is None
    if hidden:
        del sys.modules["orjson"]
    try:
        import orjson
    except ImportError:
        return None
    finally:
        if hidden:
            sys.modules["orjson"] = None  # type: ignore[assignment]
    return orjson.loads  # type: ignore[no-any-return]


def run_one(
    library: str,
    pods: int,
    events: int,
    threads: int,
    server_python: str,
    timeout: float,
    trace: bool,
    server_events: bool = False,
    server_kubeconfig: Path | None = None,
    fresh: bool = False,
    churn: float = 0,
    churn_rate: float = 100,
    warm: bool = False,
) -> dict[str, Any]:
    """One library against a fresh fake server, or (``server_kubeconfig``) against the running
    server it names, its bursts driven by ``real_server.py --drive``. ``fresh``: sync first, in a
    process that has not yet run the floor (whose freed pages would leave arenas behind: RSS as a
    new process sees it), and the floor after. ``churn``: seconds of ``churn_rate`` MODIFIED
    events per second after the sync, then RSS and heap per pod again (a fake server only)."""
    counter, deletes = _Counter(), _Counter()
    result: dict[str, Any] = {
        "library": library,
        "pods": pods,
        "python": sys.version.split()[0],
        "fresh": fresh,
        "load_before": os.getloadavg(),
    }
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = server_kubeconfig or Path(tmp) / "kubeconfig"
        if server_kubeconfig is not None:
            proc, url = _start_driver(server_python, server_kubeconfig)
            trace = server_events = False  # the server is shared: neither reseeded nor emptied
        else:
            proc, url = _start_server(server_python, pods, kubeconfig)
        http = Session(kubeconfig) if server_kubeconfig is not None else None
        try:
            names: list[tuple[str, str]] = [] if fresh else _floors(url, http, result)
            if server_events:  # nobody watches yet: this times the server and the driver alone
                baseline = drive_events(url, names, events, threads, None, timeout)
                result["server_patch_per_s"] = events / baseline["patch_s"]
                print(f"server {result['server_patch_per_s']:,.0f} PATCH/s with no watcher (the ceiling)", flush=True)

            if warm and server_kubeconfig is None:
                _warm(url)
            peer = PEERS[library](kubeconfig, pods, counter, deletes)
            result["version"] = peer.version
            result["decoder"] = getattr(peer, "decoder", None)
            gc.collect()
            rss0, heap0 = _rss_kb(), heap_kb()
            cpu0 = _cpu_us()
            started = time.perf_counter()
            peer.start_and_sync(timeout)
            result["sync_s"] = time.perf_counter() - started
            result["sync_cpu_s"] = (_cpu_us() - cpu0) / 1e6  # this process: not a peer's own (client-go)
            result.update(_memory(rss0, heap0, pods))
            own = peer.self_measured()
            if own is not None:  # the peer runs in its own process: its figures, not ours
                result["rss_kb_per_pod"] = own["rss_kb_per_pod"]
                result["rss_kb_released_per_pod"] = own["rss_kb_released_per_pod"]
                result["heap_kb_per_pod"] = own["heap_kb_per_pod"]
                result["sync_cpu_s"] = own.get("sync_cpu_s")
                result["runtime"] = f"{own['go']}, GOMAXPROCS={own['gomaxprocs']}"
            result["held"] = peer.held()
            if churn and server_kubeconfig is None:  # before the floor: its freed pages are not the library's
                result.update(drive_churn(proc, peer, counter, churn, churn_rate, (rss0, heap0), pods, timeout))
            if fresh:
                names = _floors(url, http, result)
            cpu = result.get("sync_cpu_s")
            cpu_ratio = f", CPU {cpu:.2f} s = {cpu / result['floor_cpu_s']:.2f}x floor's" if cpu else ""
            print(
                f"sync   {result['sync_s']:.2f} s ({result['sync_s'] / result['floor_s']:.1f}x floor{cpu_ratio}), "
                f"{result['held']} pods held, RSS +{result['rss_kb_per_pod']:.1f} KB/pod, heap "
                f"+{_fmt_kb(result.get('heap_kb_per_pod'))} KB/pod",
                flush=True,
            )
            if "churn_events" in result:
                print(
                    f"churn  {result['churn_seen']}/{result['churn_events']} MODIFIED over {churn:.0f} s "
                    f"({churn_rate:.0f}/s): RSS +{result['churn_rss_kb_per_pod']:.1f} KB/pod, heap "
                    f"+{_fmt_kb(result.get('churn_heap_kb_per_pod'))} KB/pod",
                    flush=True,
                )
            result["list_ns_ms"], result["list_ns_items"] = peer.timed_list("default")
            # client-go's listers hand out the cache's own pointers (mutating them is documented misuse)
            result["mutable"] = True if own is not None else _mutable(peer.sample())
            print(
                f"reads  list(namespace='default') {result['list_ns_ms']:.2f} ms for {result['list_ns_items']} pods; "
                f"cached objects mutable: {result['mutable']}",
                flush=True,
            )

            started = time.perf_counter()
            full = peer.full_list()
            if full is not None:
                result["full_list_s"] = time.perf_counter() - started
                result["full_list_n"] = full
                peer.kept = {}  # type: ignore[attr-defined]
                print(
                    f"full   {full} pods listed (all pages) and kept with the library's own client in "
                    f"{result['full_list_s']:.2f} s ({result['full_list_s'] / result['floor_s']:.1f}x floor)",
                    flush=True,
                )
            result.update(_burst(peer, proc, events, counter, timeout))
            if server_events:
                result.update(drive_events(url, names, events, threads, counter, timeout, generation=10_000_000))
                print(
                    f"events {result['events_seen']}/{events} seen in {result['events_s']:.2f} s "
                    f"({result['events_per_s']:,.0f}/s end to end; PATCHes answered in "
                    f"{result['patch_s']:.2f} s, {result['patch_failures']} failed; handler lag after the last "
                    f"PATCH {result['lag_after_patches_s']:.2f} s)",
                    flush=True,
                )
                cpu0 = _cpu_us()
                result.update(drive_deletes(url, names, deletes, timeout))
                own_cpu = getattr(peer, "replies", {}).get("cpu_delete")
                result["delete_cpu_us_per_event"] = (
                    own_cpu["cpu_us_per_event"] if own_cpu else (_cpu_us() - cpu0) / max(1, result["deletes_seen"])
                )
                print(
                    f"burst  {result['deletes_seen']}/{len(names)} DELETED seen in {result['deletes_s']:.2f} s "
                    f"({result['deletes_per_s']:,.0f}/s; deletecollection answered in "
                    f"{result['delete_answered_s']:.2f} s, codes {result['delete_codes']}; handler lag after "
                    f"{result['deletes_lag_s']:.2f} s)",
                    flush=True,
                )
                print(
                    f"cpu    {result['delete_cpu_us_per_event']:.0f} µs of client CPU per DELETED event "
                    "(getrusage over the burst)",
                    flush=True,
                )
            result["stop_s"] = _stop(peer, url, names, http)
            del peer
            gc.collect()

            if trace and own is None:  # a freshly seeded server (a delete burst empties it)
                stop_server(proc)
                proc, url = _start_server(server_python, pods, kubeconfig)
                peer = PEERS[library](kubeconfig, pods, _Counter(), _Counter())
                gc.collect()
                tracemalloc.start()
                base = tracemalloc.get_traced_memory()[0]
                peer.start_and_sync(timeout)
                gc.collect()
                held = tracemalloc.get_traced_memory()[0] - base
                tracemalloc.stop()
                result["traced_kb_per_pod"] = held / 1024 / pods
                result["traced_kb_per_held_pod"] = held / 1024 / max(1, peer.held())
                print(
                    f"memory {result['traced_kb_per_pod']:.1f} KB/pod (tracemalloc, per seeded pod; "
                    f"{result['traced_kb_per_held_pod']:.1f} KB per pod held)",
                    flush=True,
                )
                gc.collect()
                tracemalloc.start()
                base = tracemalloc.get_traced_memory()[0]
                full = peer.full_list()
                gc.collect()
                if full is not None:
                    result["full_list_traced_kb_per_pod"] = (tracemalloc.get_traced_memory()[0] - base) / 1024 / full
                    print(
                        f"full   {result['full_list_traced_kb_per_pod']:.1f} KB/pod for the {full} objects of "
                        "a full list (tracemalloc)",
                        flush=True,
                    )
                tracemalloc.stop()
                _stop(peer, url, names)
        finally:
            stop_server(proc, 10)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", choices=sorted(PEERS), required=True)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=5_000)
    parser.add_argument("--threads", type=int, default=8, help="PATCH driver threads")
    parser.add_argument("--server-python", default=str(REPO / ".venv" / "bin" / "python"))
    parser.add_argument("--timeout", type=float, default=600, help="seconds for sync / for the events")
    parser.add_argument("--no-trace", action="store_true", help="skip the traced (tracemalloc) sync")
    parser.add_argument(
        "--server-events",
        action="store_true",
        help="also PATCH --events pods and delete every pod through the server (slow: the "
        "fake server handles ~1,000 PATCH/s)",
    )
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        help="measure against the running server this names (run.py --server real) instead of a fresh fake",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="sync before the floor runs in this process (RSS of a fresh process)"
    )
    parser.add_argument(
        "--churn",
        type=float,
        default=0,
        metavar="SECONDS",
        help="after the sync, a trickle of MODIFIED events for SECONDS (the burst server's trickle), "
        "then RSS and heap per pod again (default 0: none)",
    )
    parser.add_argument("--churn-rate", type=float, default=100, help="MODIFIED events per second of --churn")
    parser.add_argument(
        "--log", metavar="LEVEL", help="log the library's own messages at LEVEL (DEBUG, INFO) to stderr, timestamped"
    )
    parser.add_argument(
        "--warm",
        action="store_true",
        help="read the whole list once before the sync (the fake server's first encoding of each object)",
    )
    parser.add_argument(
        "--decoder",
        choices=("json", "orjson"),
        help="cloudcoil_cache: 'json' hides orjson from the library (its pure-Python path, as installed "
        "without it); 'orjson' requires it. Default: whatever is installed",
    )
    args = parser.parse_args()
    if args.decoder == "json":
        sys.modules["orjson"] = None  # type: ignore[assignment]  # `import orjson` fails in the library
    elif args.decoder == "orjson":
        import orjson  # noqa: F401  (fails loudly when it is not installed)
    if args.log:
        logging.basicConfig(format="%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s", level=args.log)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally that stops the server
    print(
        f"{args.library}: python {sys.version.split()[0]}, pods={args.pods}, events={args.events}, "
        f"threads={args.threads}",
        flush=True,
    )
    result = run_one(
        args.library,
        args.pods,
        args.events,
        args.threads,
        args.server_python,
        args.timeout,
        not args.no_trace,
        args.server_events,
        args.kubeconfig,
        args.fresh,
        args.churn,
        args.churn_rate,
        args.warm,
    )
    result["load_after"] = os.getloadavg()
    os.environ.pop("KUBECONFIG", None)
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
