"""Informer benchmarks: sync, memory, bursts, reads under load, GC/relist pauses, peers, scale; one command.

Run (2-core machine: ~10 min; ``--peers`` needs network once for the peers' virtualenv and the Go
modules, and skips a column it cannot build, saying why)::

    .venv/bin/python benchmarks/run.py                          # this library at 10,000 pods
    .venv/bin/python benchmarks/run.py --peers --scale          # + peers, 1k/10k/30k curve, charts
    .venv/bin/python benchmarks/run.py --peers --scale --long   # + 100,000 pods (long: ~1 GB, minutes)
    .venv/bin/python benchmarks/run.py --server real            # against kube-apiserver + etcd (~10 min)

The API server is ``benchmarks/burst_server.py`` in a subprocess (its CPU and memory are not the
client's): the fake API server, plus watch-event bursts the harness triggers. Figures:

- floor: one paginated LIST (limit 500) read with ``requests`` + ``json.loads`` with the GC off,
  nothing kept — the least any Python informer must do;
- sync: ``Cache(resources=[Pod])`` entered until synced; RSS growth per pod after a collection, and
  the peak (VmHWM) growth over the steady one; tracemalloc bytes per pod in a second sync; and
  sync over floor with both in fresh processes, interleaved, best of 3 each (the figure to quote:
  the in-process ratio compares two single runs);
- burst: the server queues ``--events`` MODIFIED events at once on the watch; events/s until the
  ``on_update`` handler has seen them all, and client CPU µs per event (getrusage); then the same
  burst again (a second update of the same pods: the first update of an object from the initial
  list shares nothing with it, later ones share its unchanged spec and status);
- reads: ``informer.get`` per second from 8 threads, idle and while the server trickles 1,000
  events/s (the ratio is the target), and the events per second the informer applied meanwhile;
  once with paced readers (1 ms pause per 200 gets, as a web request's I/O) and once with busy
  ones that never pause (eight CPU-bound threads leave the reflector about a ninth of the GIL);
- pauses: the longest gap a thread waking every millisecond sees, during the sync, the burst and a
  resync relist (``resync_period`` short, so the relist comes during the measurement);
- transform (``--scale`` and the main run): RSS per pod with ``transform=strip_managed_fields``;
- scale: each size in a fresh process (clean RSS): sync/floor, sync µs per pod, RSS per pod, peak;
- peers (``--peers``): ``peers.py`` runs the official client's ``SharedInformer`` and cloudcoil 0.6.0
  (in ``benchmarks/.build/peers-venv``, created here), client-go (``benchmarks/clientgo``, built
  into ``benchmarks/.build/``) and this library against the same server, each in a fresh process:
  RSS per pod beside the heap per pod in the same process (Go's HeapInuse; Python: pymalloc's
  allocated blocks + glibc malloc's in-use bytes), after the sync and, with ``--churn SECONDS``,
  after that long a trickle of MODIFIED events (100/s).

- real (``--server real``; ``--long``: 100,000 pods instead of ``--pods``): ``real_server.py``
  starts ``RealAPIServer`` (kube-apiserver + etcd; ``--assets`` or ``$KUBEBUILDER_ASSETS``) and
  creates the pods from 16 threads; then every peer in a fresh process (``peers.py --fresh``: sync
  first, RSS, then the floor in the same process) against it — this library, client-go with JSON and
  with protobuf, the official client, cloudcoil 0.6.0 — bursts of ``--real-events`` real PATCHes sent
  by ``real_server.py --drive`` (another process); and this library and client-go (JSON) against the
  fake in the same run. Written to ``results/real.json`` and ``real.md``.

Results: ``benchmarks/results/latest.json``, ``results.md`` (tables) and, with matplotlib (the
``bench`` extra), ``peers.png`` and ``scale.png``. The machine's load (``uptime``) is recorded.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable

import requests

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

import peers  # noqa: E402  (benchmarks/peers.py: server start, burst, peer runs)

from cloudcoil_cache import _json  # noqa: E402
from cloudcoil_cache.caching import Cache, Tuning  # noqa: E402
from cloudcoil_cache.client import Config  # noqa: E402
from cloudcoil_cache.models.kubernetes.core.v1 import Pod  # noqa: E402

RESULTS = HERE / "results"
BUILD = HERE / ".build"
PEERS_VENV = BUILD / "peers-venv"
PEER_PACKAGES = ["kubernetes==37.0.2", "cloudcoil[kubernetes]==0.6.0", "requests"]


# ------------------------------------------------------------------------------------------ probes
def _status_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak() -> None:
    try:  # Linux: "5" resets VmHWM to the current RSS
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class PauseProbe:
    """A thread that wakes every millisecond and records the longest gap between wake-ups."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self.longest = 0.0
        self._thread = threading.Thread(target=self._run, name="pause-probe", daemon=True)

    def _run(self) -> None:
        last = time.perf_counter()
        while not self._stop.wait(0.001):
            now = time.perf_counter()
            self.longest = max(self.longest, now - last)
            last = now

    def __enter__(self) -> PauseProbe:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        self._thread.join()


def bench_floor(url: str, cpu: list[float] | None = None) -> float:
    """One paginated LIST with requests + json.loads, the GC off, nothing kept (its CPU seconds are
    appended to ``cpu``: on a busy machine the CPU ratio moves less than the wall-clock one)."""
    enabled = gc.isenabled()
    gc.disable()
    cpu0 = _cpu_s()
    try:
        return peers.bench_floor(url)
    finally:
        if cpu is not None:
            cpu.append(_cpu_s() - cpu0)
        if enabled:
            gc.enable()


def _config(kubeconfig: Path, **cache: Any) -> Config:
    config = Config(kubeconfig=str(kubeconfig), cache=Cache(resources=[Pod], sync_timeout=1200, **cache))
    config.initialize()
    return config


def _close(config: Config) -> None:
    config.deactivate()
    config.close()


def measure_sync(kubeconfig: Path, pods: int, **cache: Any) -> tuple[Config, dict[str, Any]]:
    """Sync a fresh cache; RSS growth per pod (steady and peak) and the longest pause meanwhile."""
    gc.collect()
    config = _config(kubeconfig, **cache)
    _reset_peak()
    rss0, heap0 = _status_kb("VmRSS"), peers.heap_kb()
    cpu0 = _cpu_s()
    with PauseProbe() as probe:
        started = time.perf_counter()
        config.activate()
        elapsed = time.perf_counter() - started
    cpu = _cpu_s() - cpu0
    gc.collect()
    rss = _status_kb("VmRSS") - rss0
    peak = _status_kb("VmHWM") - rss0
    heap = peers.heap_kb()
    return config, {
        "sync_s": elapsed,
        "sync_cpu_s": cpu,
        "rss_kb_per_pod": rss / pods,
        "heap_kb_per_pod": None if heap is None or heap0 is None else (heap - heap0) / pods,
        "peak_over_steady": peak / max(1, rss),
        "sync_pause_ms": probe.longest * 1000,
    }


def measure_traced(kubeconfig: Path, pods: int, **cache: Any) -> float:
    gc.collect()
    config = _config(kubeconfig, **cache)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    config.activate()
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    _close(config)
    return held / 1024 / pods


def _names(config: Config, count: int) -> list[tuple[str, str]]:
    view = config.cache.get_informer(Pod, sync=True)
    return [(p.name, p.namespace) for p in view.list()[:count]]


#: Paced readers wait this long after each pass over their 200 names (a web request's I/O).
PACED_READ_PAUSE = 0.001


def reads_per_second(
    view: Any, names: list[tuple[str, str]], seconds: float, threads: int = 8, pause: float = 0.0
) -> float:
    """``view.get`` calls per second from ``threads`` threads over ``seconds``; each thread waits
    ``pause`` seconds after each pass over ``names`` (0: never: CPU-bound readers)."""
    stop = threading.Event()
    counts = [0] * threads

    def read(k: int) -> None:
        n = 0
        get = view.get
        wait = threading.Event().wait
        while not stop.is_set():
            for name, namespace in names:
                get(name, namespace)
            n += len(names)
            if pause:
                wait(pause)
        counts[k] = n

    workers = [threading.Thread(target=read, args=(k,), name=f"reader-{k}") for k in range(threads)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    stop.wait(seconds)
    stop.set()
    for worker in workers:
        worker.join()
    return sum(counts) / (time.perf_counter() - started)


def reads_under_load(
    proc: Any, view: Any, names: list[tuple[str, str]], trickled: Any, pause: float
) -> dict[str, float]:
    """Reads per second from 8 threads idle, then while the server trickles 1,000 events/s, and
    how many events per second the informer applied meanwhile (``trickled`` counts updates)."""
    idle = reads_per_second(view, names, 2.0, pause=pause)
    start = trickled.seen
    loader = threading.Thread(target=peers.server_command, args=(proc, "trickle 1000 4"), name="trickle")
    loader.start()
    deadline = time.monotonic() + 60
    while trickled.seen == start and time.monotonic() < deadline:  # the server builds its lines first
        threading.Event().wait(0.01)
    seen0, t0 = trickled.seen, time.perf_counter()
    try:
        loaded = reads_per_second(view, names, 3.0, pause=pause)
        events = (trickled.seen - seen0) / (time.perf_counter() - t0)
    finally:
        loader.join()
    last = -1
    while trickled.seen != last and time.monotonic() < deadline:  # the rest of the trickle applied
        last = trickled.seen
        threading.Event().wait(0.3)
    return {"idle_per_s": idle, "loaded_per_s": loaded, "loaded_ratio": loaded / idle, "events_per_s": events}


def measure_relist_pause(kubeconfig: Path, pods: int, timeout: float = 300) -> dict[str, Any]:
    """The longest pause another thread sees while a resync relist runs (``resync_period`` = 5 s)."""
    config = _config(kubeconfig, resync_period=5)
    config.activate()
    view = config.cache.get_informer(Pod, sync=True)
    before = view.status().relist_count
    deadline = time.monotonic() + timeout
    with PauseProbe() as probe:
        while view.status().relist_count == before and time.monotonic() < deadline:
            threading.Event().wait(0.05)
    relisted = view.status().relist_count > before
    _close(config)
    return {"relist_pause_ms": probe.longest * 1000, "relist_seen": relisted}


FRESH_ROUNDS = 3


def measure_fresh_ratio(url: str, kubeconfig: Path, rounds: int) -> dict[str, Any]:
    """Sync over floor with both in fresh processes, interleaved, best of ``rounds`` each.

    The in-process figure compares a floor and a sync measured once each, seconds apart, in a
    process that has already imported and run other things; on this shared machine single runs move
    ±30%, so this is the figure to quote. The sync is ``ab.py``'s client (a fresh ``Cache``).
    """
    floors: list[tuple[float, float]] = []
    syncs: list[tuple[float, float]] = []
    for _ in range(rounds):
        floor = _subprocess_json([sys.executable, str(Path(__file__)), "--floor", url], timeout=600)
        if "error" in floor:
            return {"fresh_error": f"floor: {floor['error']}"}
        floors.append((floor["floor_s"], floor["floor_cpu_s"]))
        try:
            done = subprocess.run(
                [sys.executable, str(HERE / "ab.py"), "--client", str(REPO), str(kubeconfig)],
                capture_output=True,
                text=True,
                check=True,
                timeout=1200,
            )
            wall, cpu, _rss = done.stdout.split()[-3:]
        except (subprocess.SubprocessError, ValueError) as exc:
            return {"fresh_error": f"sync: {exc}"}
        syncs.append((float(wall), float(cpu)))
    best = {
        "fresh_floor_s": min(f[0] for f in floors),
        "fresh_floor_cpu_s": min(f[1] for f in floors),
        "fresh_sync_s": min(x[0] for x in syncs),
        "fresh_sync_cpu_s": min(x[1] for x in syncs),
    }
    best["fresh_ratio"] = best["fresh_sync_s"] / best["fresh_floor_s"]
    best["fresh_cpu_ratio"] = best["fresh_sync_cpu_s"] / best["fresh_floor_cpu_s"]
    best["fresh_rounds"] = rounds
    return best


# ------------------------------------------------------------------------------------------- main
def run_main(pods: int, events: int, out: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        proc, url = peers._start_server(sys.executable, pods, kubeconfig)
        try:
            requests.get(url + "/version", timeout=30)
            floor_cpu: list[float] = []
            out["floor_s"] = min(bench_floor(url, floor_cpu) for _ in range(2))
            out["floor_cpu_s"] = min(floor_cpu)
            print(
                f"floor   {out['floor_s']:.2f} s (paginated GET + json.loads, GC off; CPU {out['floor_cpu_s']:.2f} s)",
                flush=True,
            )
            config, synced = measure_sync(kubeconfig, pods)
            out.update(synced)
            print(
                f"sync    {out['sync_s']:.2f} s ({out['sync_s'] / out['floor_s']:.2f}x the floor; CPU "
                f"{out['sync_cpu_s']:.2f} s = {out['sync_cpu_s'] / out['floor_cpu_s']:.2f}x), "
                f"RSS +{out['rss_kb_per_pod']:.1f} KB/pod (heap {_fmt(out['heap_kb_per_pod'], '.1f')}), peak/steady "
                f"{out['peak_over_steady']:.2f}, longest pause {out['sync_pause_ms']:.0f} ms",
                flush=True,
            )
            view = config.cache.get_informer(Pod, sync=True)
            names = _names(config, 200)
            took = []
            for _ in range(21):  # the median: the first call also pays one-time set-up (~2 ms)
                t0 = time.perf_counter()
                listed = Pod.list(namespace="default").items
                took.append((time.perf_counter() - t0) * 1000)
            out["list_ns_ms"] = sorted(took)[10]
            out["list_ns_items"] = len(listed)
            counter = peers._Counter()
            view.on_update(counter.hit)
            with PauseProbe() as probe:
                out.update(peers.drive_burst(proc, events, counter, 300))
            out["burst_pause_ms"] = probe.longest * 1000
            print(
                f"burst   {out['burst_seen']}/{events} MODIFIED applied at {out['burst_per_s']:,.0f}/s "
                f"({out['burst_cpu_us_per_event']:.0f} µs CPU/event), longest pause "
                f"{out['burst_pause_ms']:.0f} ms",
                flush=True,
            )
            # The same pods again: a second update of each (both share the unchanged spec and
            # status with the version they replace; see models/_reuse.py).
            again = peers.drive_burst(proc, events, counter, 300)
            out["burst2_per_s"] = again["burst_per_s"]
            out["burst2_cpu_us_per_event"] = again["burst_cpu_us_per_event"]
            print(
                f"burst   again (a second update of each pod): {again['burst_per_s']:,.0f}/s "
                f"({again['burst_cpu_us_per_event']:.0f} µs CPU/event)",
                flush=True,
            )
            trickled = peers._Counter()
            trickled.arm(10**9)
            view.on_update(trickled.hit)
            for prefix, pause in (("reads", 0.0), ("paced_reads", PACED_READ_PAUSE)):
                measured = reads_under_load(proc, view, names, trickled, pause)
                out.update({f"{prefix}_{k}": v for k, v in measured.items()})
                print(
                    f"reads   {'paced' if pause else 'busy'}: {measured['idle_per_s']:,.0f} gets/s from 8 "
                    f"threads idle, {measured['loaded_per_s']:,.0f}/s while "
                    f"{measured['events_per_s']:,.0f} of 1,000 events/s apply ({measured['loaded_ratio']:.0%})",
                    flush=True,
                )
            print(f"list    one namespace {out['list_ns_ms']:.2f} ms for {out['list_ns_items']} pods", flush=True)
            _close(config)
            del view, counter, trickled
            out.update(measure_fresh_ratio(url, kubeconfig, FRESH_ROUNDS))
            if "fresh_error" in out:
                print(f"fresh   sync / floor in fresh processes: {out['fresh_error']}", flush=True)
            else:
                print(
                    f"fresh   sync / floor in fresh processes, best of {FRESH_ROUNDS} each, interleaved: "
                    f"{out['fresh_sync_s']:.2f} s / {out['fresh_floor_s']:.2f} s = {out['fresh_ratio']:.2f}x "
                    f"(CPU {out['fresh_cpu_ratio']:.2f}x)",
                    flush=True,
                )
        finally:
            peers.stop_server(proc)
        # a fresh process: tables of shared values left by the sync above would hide their cost
        traced = _subprocess_json([sys.executable, str(Path(__file__)), "--one", str(pods), "--traced"], 3600)
        out["traced_kb_per_pod"] = traced.get("traced_kb_per_pod")
        print(
            f"memory  {_fmt(out['traced_kb_per_pod'], '.1f')} KB/pod held (tracemalloc, fresh process) "
            f"{traced.get('error', '')}",
            flush=True,
        )
        # a fresh server: the bursts above went around the fake server's store
        proc, url = peers._start_server(sys.executable, pods, kubeconfig)
        try:
            out.update(measure_relist_pause(kubeconfig, pods))
            print(
                f"relist  longest pause {out['relist_pause_ms']:.0f} ms in another thread during a resync "
                f"relist{'' if out['relist_seen'] else ' (NO relist seen)'}",
                flush=True,
            )
        finally:
            peers.stop_server(proc)


def run_one(pods: int, transform: bool, traced: bool = False) -> dict[str, Any]:
    """One size in this (fresh) process: floor, sync, RSS, peak; for the scale curve (or, ``traced``,
    only the tracemalloc bytes per pod of one sync)."""
    out: dict[str, Any] = {"pods": pods, "transform": transform}
    cache: dict[str, Any] = {}
    if transform:
        from cloudcoil_cache.caching import strip_managed_fields

        cache["transform"] = strip_managed_fields
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        proc, url = peers._start_server(sys.executable, pods, kubeconfig)
        try:
            if traced:
                out["traced_kb_per_pod"] = measure_traced(kubeconfig, pods, **cache)
                return out
            out["floor_s"] = min(bench_floor(url) for _ in range(2))
            config, synced = measure_sync(kubeconfig, pods, **cache)
            out.update(synced)
            out["sync_us_per_pod"] = out["sync_s"] / pods * 1e6
            _close(config)
        finally:
            peers.stop_server(proc, 60)
    return out


def _subprocess_json(command: list[str], timeout: float) -> dict[str, Any]:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=REPO)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    for line in done.stdout.splitlines()[::-1]:
        if line.startswith("RESULT "):
            return json.loads(line[7:])  # type: ignore[no-any-return]
    tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
    return {"error": " / ".join(tail) or f"exit {done.returncode}"}


def run_scale(sizes: list[int], transform_at: int | None) -> list[dict[str, Any]]:
    rows = []
    jobs = [(n, False) for n in sizes] + ([(transform_at, True)] if transform_at else [])
    for n, transform in jobs:
        command = [sys.executable, str(Path(__file__)), "--one", str(n)] + (["--transform"] if transform else [])
        row = _subprocess_json(command, timeout=3600)
        row.setdefault("pods", n)
        row["transform"] = transform
        rows.append(row)
        if "error" in row:
            print(f"scale   {n:>7,} pods{' (transform)' if transform else ''}: {row['error']}", flush=True)
        else:
            print(
                f"scale   {n:>7,} pods{' +strip_managed_fields' if transform else ''}: sync "
                f"{row['sync_s']:.2f} s = {row['sync_us_per_pod']:.0f} µs/pod ({row['sync_s'] / row['floor_s']:.2f}x "
                f"floor), RSS {row['rss_kb_per_pod']:.1f} KB/pod, peak/steady {row['peak_over_steady']:.2f}",
                flush=True,
            )
    return rows


def _peers_python() -> tuple[str | None, str]:
    python = PEERS_VENV / "bin" / "python"
    if python.exists():
        return str(python), ""
    print(f"creating {PEERS_VENV} with {', '.join(PEER_PACKAGES)} (never a dependency of this project)", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(PEERS_VENV)], check=True, timeout=300)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PEER_PACKAGES], check=True, timeout=1200)
    except (subprocess.SubprocessError, OSError) as exc:
        return None, f"cannot install the Python peers ({exc})"
    return str(python), ""


def _orjson_installed() -> bool:
    try:
        import orjson  # noqa: F401
    except ImportError:
        return False
    return True


def run_peers(pods: int, events: int, churn: float = 0) -> list[dict[str, Any]]:
    """Each peer in a fresh process (``peers.py --fresh``: RSS and heap per pod after the sync,
    before the floor runs in it; ``churn``: again after that many seconds of MODIFIED events)."""
    rows = []
    py_peers, why = _peers_python()
    binary, go_why = peers.build_clientgo()
    plan: list[tuple[str, str | None, str, str | None]] = [
        ("kubernetes", py_peers, why, None),
        ("cloudcoil", py_peers, why, None),
        ("client-go", sys.executable if binary else None, go_why, None),
        # this library with each decoder, side by side: the standard library's (orjson hidden from
        # it: the pure-Python path) and orjson's (when installed)
        ("cloudcoil_cache", sys.executable, "", "json"),
        ("cloudcoil_cache", sys.executable if _orjson_installed() else None, "no orjson installed", "orjson"),
    ]
    for library, python, reason, decoder in plan:
        if python is None:
            print(f"peer    {library}: skipped: {reason}", flush=True)
            rows.append({"library": library, "skipped": reason, "decoder": decoder})
            continue
        row = _subprocess_json(
            [
                python,
                str(HERE / "peers.py"),
                *(["--decoder", decoder] if decoder else []),
                "--library",
                library,
                "--pods",
                str(pods),
                "--events",
                str(events),
                "--server-python",
                sys.executable,
                "--fresh",
                "--churn",
                str(churn),
            ],
            timeout=3600,
        )
        row.setdefault("library", library)
        row.setdefault("decoder", decoder)
        rows.append(row)
        label = f"{library} ({decoder})" if decoder else library
        if "error" in row:
            print(f"peer    {label}: failed: {row['error']}", flush=True)
        else:
            print(
                f"peer    {label} {row.get('version', '')}: sync {row['sync_s']:.2f} s "
                f"({row['sync_s'] / row['floor_s']:.1f}x floor), RSS {row['rss_kb_per_pod']:.1f} KB/pod (heap "
                f"{_fmt(row.get('heap_kb_per_pod'), '.1f')}{_churned(row)}), burst "
                f"{row['burst_per_s']:,.0f} events/s, {row['burst_cpu_us_per_event']:.0f} µs CPU/event",
                flush=True,
            )
    return rows


# -------------------------------------------------------------------------------- the real server
#: MODIFIED events per burst against the real server: real PATCHes, at the server's write rate
REAL_EVENTS = 1_000
#: (library, servers it runs against): client-go's protobuf needs a real server; the Python peers
#: (minutes against the fake, measured by ``--peers``) run against the real one only
REAL_PLAN: list[tuple[str, tuple[str, ...]]] = [
    ("cloudcoil_cache", ("fake", "real")),
    ("client-go", ("fake", "real")),
    ("client-go-protobuf", ("real",)),
    ("kubernetes", ("real",)),
    ("cloudcoil", ("real",)),
]


def parse_floor(kubeconfig: Path) -> dict[str, float]:
    """The least a Python client that decodes JSON spends on one sync, against a real server: an
    unpaginated LIST streamed, cut into batches with the library's splitter (as its informers list),
    each parsed with ``_json.loads`` (orjson where installed) and freed at once, the GC off; nothing
    structured or kept. Wall and CPU seconds."""
    from real_server import Session

    from cloudcoil_cache._listwatch._split import ListSplitter

    session = Session(kubeconfig)
    enabled = gc.isenabled()
    gc.disable()
    cpu0, started = _cpu_s(), time.perf_counter()
    try:
        with session.get().get(f"{session.url}/api/v1/pods", stream=True, timeout=600) as response:
            response.raise_for_status()
            splitter = ListSplitter("parse floor", batch_bytes=Tuning().page_bytes or 1_500_000)
            items = 0
            for piece in response.iter_content(256 * 1024):
                if splitter.feed(piece):
                    batch = splitter.take()
                    items += len(batch)
                    while batch:  # freed one by one, as the informer frees a batch
                        batch.pop()
            items += len(splitter.finish()[0])
        return {"parse_floor_s": time.perf_counter() - started, "parse_floor_cpu_s": _cpu_s() - cpu0, "items": items}
    finally:
        if enabled:
            gc.enable()


def _start_real(pods: int, kubeconfig: Path, assets: str | None) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    """``real_server.py`` (kube-apiserver + etcd, ``pods`` pods created) in a subprocess."""
    command = [sys.executable, str(HERE / "real_server.py"), "--kubeconfig", str(kubeconfig), "--pods", str(pods)]

    def seeded(line: str) -> dict[str, Any] | None:
        words = line.split()
        if len(words) == 5 and words[1] == "seeded":
            seconds = float(words[3])
            return {"url": words[0], "seed_s": seconds, "seed_per_s": pods / seconds, "seed_failures": int(words[4])}
        return None

    proc, found = peers.start_until(command + (["--assets", assets] if assets else []), seeded)
    if found is not None:
        return proc, found
    raise RuntimeError(f"the real API server did not start (exit {proc.returncode}; its stderr is above)")


def _stop_real(proc: subprocess.Popen[str]) -> None:
    try:
        assert proc.stdin is not None
        proc.stdin.write("quit\n")
        proc.stdin.close()
        proc.wait(120)
    except (OSError, subprocess.TimeoutExpired):
        peers.stop_server(proc)


def _peer_row(
    python: str, library: str, pods: int, events: int, kubeconfig: Path | None, churn: float = 0
) -> dict[str, Any]:
    """One peer in a fresh process (``peers.py --fresh``: sync first, RSS, then the floor;
    ``churn``: seconds of MODIFIED events after the sync, against the fake only)."""
    command = [python, str(HERE / "peers.py"), "--library", library, "--pods", str(pods), "--events", str(events)]
    command += ["--server-python", sys.executable, "--fresh", "--no-trace", "--churn", str(churn)]
    command += ["--kubeconfig", str(kubeconfig)] if kubeconfig else []
    row = _subprocess_json(command, timeout=3600)
    row.setdefault("library", library)
    row["server"] = "real" if kubeconfig else "fake"
    words = str(row.get("burst_server", "")).split()
    if row["server"] == "real" and len(words) == 4:  # "sent N failures seconds": the server's write rate
        row["patch_per_s"] = int(words[1]) / float(words[3])
        row["patch_failures"] = int(words[2])
    return row


def _print_peer(row: dict[str, Any]) -> None:
    name = f"{row['library']} ({row['server']})"
    if "error" in row or "skipped" in row:
        print(f"peer    {name}: {row.get('skipped') or 'failed: ' + str(row.get('error'))}", flush=True)
        return
    server = f" (the server took the PATCHes at {row['patch_per_s']:,.0f}/s)" if "patch_per_s" in row else ""
    print(
        f"peer    {name} {row.get('version', '')}: sync {row['sync_s']:.2f} s ({row['sync_s'] / row['floor_s']:.2f}x "
        f"floor {row['floor_s']:.2f} s), RSS {row['rss_kb_per_pod']:.1f} KB/pod (heap "
        f"{_fmt(row.get('heap_kb_per_pod'), '.1f')}{_churned(row)}), {row['burst_per_s']:,.0f} "
        f"events/s{server}, {row['burst_cpu_us_per_event']:.0f} µs CPU/event",
        flush=True,
    )


def _churned(row: dict[str, Any]) -> str:
    """``; after N s of churn: RSS r, heap h`` when the row has churn figures, else ``""``."""
    if "churn_rss_kb_per_pod" not in row:
        return ""
    return (
        f"; after {row['churn_s']:.0f} s of churn: RSS {row['churn_rss_kb_per_pod']:.1f}, heap "
        f"{_fmt(row.get('churn_heap_kb_per_pod'), '.1f')}"
    )


def _memory_cells(row: dict[str, Any]) -> str:
    """Table cells: RSS KB/pod | heap KB/pod | RSS / heap after churn."""
    heap = row.get("heap_kb_per_pod")
    churn = "–"
    if "churn_rss_kb_per_pod" in row:
        churn = f"{row['churn_rss_kb_per_pod']:.1f} / {_fmt(row.get('churn_heap_kb_per_pod'), '.1f')}"
    return f"{row['rss_kb_per_pod']:.1f} | {_fmt(heap, '.1f')} | {churn}"


def _run_peers_on(
    server: str, pods: int, events: int, kubeconfig: Path | None, rows: list[dict[str, Any]], churn: float = 0
) -> None:
    py_peers, why = _peers_python()
    binary, go_why = peers.build_clientgo()
    for library, servers in REAL_PLAN:
        if server not in servers:
            continue
        python, reason = (py_peers, why) if library in ("kubernetes", "cloudcoil") else (sys.executable, "")
        if library.startswith("client-go") and binary is None:
            python, reason = None, go_why
        if python is None:
            rows.append({"library": library, "server": server, "skipped": reason})
        else:
            rows.append(_peer_row(python, library, pods, events, kubeconfig, churn if kubeconfig is None else 0))
        _print_peer(rows[-1])


def run_real(
    pods: int, events: int, real_events: int, assets: str | None, out: dict[str, Any], churn: float = 0
) -> None:
    """Each peer in a fresh process against one seeded real server; this library and client-go
    (JSON) against the fake in the same run."""
    rows: list[dict[str, Any]] = out.setdefault("rows", [])
    _run_peers_on("fake", pods, events, None, rows, churn)
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        print(f"real    starting kube-apiserver + etcd and creating {pods:,} pods", flush=True)
        proc, seeded = _start_real(pods, kubeconfig, assets)
        out.update(seeded)
        print(
            f"real    {seeded['url']}: {pods:,} pods created (and their status set) in {seeded['seed_s']:.1f} s "
            f"({seeded['seed_per_s']:,.0f} pods/s, {seeded['seed_failures']} failed requests)",
            flush=True,
        )
        try:
            floors = [
                _subprocess_json([sys.executable, str(Path(__file__)), "--parse-floor", str(kubeconfig)], timeout=1800)
                for _ in range(3)
            ]
            floors = [f for f in floors if "error" not in f] or floors[:1]
            best = out["parse_floor"] = min(floors, key=lambda f: f.get("parse_floor_s", float("inf")))
            if "parse_floor_s" in best:
                print(
                    f"floor   parse floor (streamed unpaginated LIST, orjson, freed, GC off), best of 3: "
                    f"{best['parse_floor_s']:.2f} s (CPU {best['parse_floor_cpu_s']:.2f} s)",
                    flush=True,
                )
            _run_peers_on("real", pods, real_events, kubeconfig, rows)
        finally:
            _stop_real(proc)


def write_real_markdown(data: dict[str, Any], path: Path) -> None:
    real = data["real"]
    lines = [
        f"# Against the real API server ({data['when']})",
        "",
        f"`{data['command']}` — python {data['python']}, orjson {data['orjson']}, {data['cpus']} CPUs, "
        f"load before/after: {data['load_before']} / {data['load_after']}",
        "",
        f"{real['pods']:,} pods; the real server (kube-apiserver + etcd, `RealAPIServer`) was seeded in "
        f"{_fmt(real.get('seed_s'), '.0f')} s ({_fmt(real.get('seed_per_s'), ',.0f')} pods/s: "
        "`real_server.py`'s default seeding, templates through the API and clones into etcd where `go` is on PATH). "
        f"Bursts: {real['fake_events']:,} MODIFIED events queued at once by the fake; "
        f"{real['real_events']:,} real PATCHes from another process against the real server (events/s is then "
        "bounded by the server's write rate, given in brackets). Every row is a fresh process; RSS per pod "
        "is read after the sync, before the floor runs in it; heap: in use by the allocators in the same "
        "process (Go's HeapInuse; Python: pymalloc's allocated blocks + glibc malloc's in-use bytes); after "
        "churn: both again after `--churn` seconds of MODIFIED events (the fake only).",
        "",
        "| library | server | sync | sync / floor | RSS KB/pod | heap KB/pod | after churn: RSS / heap | events/s "
        "| CPU µs/event | namespace list |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in real.get("rows", []):
        name = f"{row['library']} {row.get('version', '')}".strip()
        if "skipped" in row or "error" in row:
            lines.append(f"| {name} | {row['server']} | {row.get('skipped') or row.get('error')} | | | | | | | |")
            continue
        held = f" (holds {row['held']:,})" if row.get("held", row["pods"]) < row["pods"] else ""
        server = f" ({row['patch_per_s']:,.0f})" if "patch_per_s" in row else ""
        lines.append(
            f"| {name} | {row['server']} | {row['sync_s']:.2f} s{held} | {row['sync_s'] / row['floor_s']:.2f}× "
            f"({row['floor_s']:.2f} s) | {_memory_cells(row)} | {row['burst_per_s']:,.0f}{server} | "
            f"{row['burst_cpu_us_per_event']:.0f} | {row['list_ns_ms']:.2f} ms |"
        )
    lines += ["", *_parse_floor_lines(real)]
    path.write_text("\n".join(lines))


def _parse_floor_lines(real: dict[str, Any]) -> list[str]:
    """The real server's parse floor, and each real-server sync over it."""
    floor = real.get("parse_floor", {}).get("parse_floor_s")
    if not floor:
        return []
    syncs = [
        f"{row['library']} {row['sync_s'] / floor:.2f}×"
        for row in real.get("rows", [])
        if row.get("server") == "real" and "sync_s" in row and row.get("held", row["pods"]) >= row["pods"]
    ]
    return [
        f"Parse floor against the real server: {floor:.2f} s (CPU {real['parse_floor']['parse_floor_cpu_s']:.2f} s), "
        "best of 3 in fresh processes: the unpaginated LIST streamed, cut into batches with the library's "
        "splitter, each parsed with orjson and freed, the GC off, nothing structured or kept: the least a Python "
        "client that decodes JSON spends on this sync. Each sync over it: " + ", ".join(syncs) + ".",
        "",
    ]


# ---------------------------------------------------------------------------------------- reports
def _fmt(value: Any, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def _cpu_ratio(main: dict[str, Any]) -> str:
    if not main.get("floor_cpu_s"):
        return "–"
    return f"{main['sync_cpu_s']:.2f} s / {main['floor_cpu_s']:.2f} s = {main['sync_cpu_s'] / main['floor_cpu_s']:.2f}×"


def write_markdown(data: dict[str, Any], path: Path) -> None:
    lines = [
        f"# Benchmark results ({data['when']})",
        "",
        f"`{data['command']}` — python {data['python']}, orjson {data['orjson']}, "
        f"{data['cpus']} CPUs, load before/after: {data['load_before']} / {data['load_after']}",
        "",
    ]
    main = data.get("main")
    if main:
        lines += [
            "## This library, 10,000-pod class figures"
            if main["pods"] == 10_000
            else f"## This library, {main['pods']:,} pods",
            "",
            "| figure | value | target |",
            "|---|---|---|",
            f"| RSS per cached pod | {main['rss_kb_per_pod']:.1f} KB | ≤ 12 KB, below client-go |",
            f"| heap per cached pod (pymalloc + malloc in use, same process) | "
            f"{_fmt(main.get('heap_kb_per_pod'), '.1f')} KB | RSS ≤ 1.5× |",
            f"| traced (tracemalloc) per pod | {_fmt(main.get('traced_kb_per_pod'), '.1f')} KB | |",
            f"| sync / floor | {main['sync_s']:.2f} s / {main['floor_s']:.2f} s = "
            f"{main['sync_s'] / main['floor_s']:.2f}× (CPU: {_cpu_ratio(main)}), in this process | ≤ 1.5× |",
            f"| sync / floor, fresh processes, best of {main.get('fresh_rounds', '–')} each, interleaved | "
            f"{_fmt(main.get('fresh_sync_s'), '.2f')} s / {_fmt(main.get('fresh_floor_s'), '.2f')} s = "
            f"{_fmt(main.get('fresh_ratio'), '.2f')}× (CPU {_fmt(main.get('fresh_cpu_ratio'), '.2f')}×) "
            f"| ≤ 1.5× |",
            f"| peak RSS / steady RSS during sync | {main['peak_over_steady']:.2f} | ≤ 1.3 |",
            f"| MODIFIED burst applied ({main['burst_events']:,}) | {main['burst_per_s']:,.0f}/s "
            f"({main['burst_cpu_us_per_event']:.0f} µs CPU each) | ≥ 15,000/s |",
            f"| the same burst again (a second update of each pod) | "
            f"{_fmt(main.get('burst2_per_s'), ',.0f')}/s "
            f"({_fmt(main.get('burst2_cpu_us_per_event'), '.0f')} µs CPU each) | |",
            *[
                f"| reads/s from 8 {kind} threads, idle → while the server sends 1,000 events/s "
                f"(events applied meanwhile) | {main[p + '_idle_per_s']:,.0f} → {main[p + '_loaded_per_s']:,.0f} "
                f"({main[p + '_loaded_ratio']:.0%}; {main[p + '_events_per_s']:,.0f} events/s) | ≥ 50% |"
                for p, kind in (("paced_reads", "paced (1 ms pause per 200 gets)"), ("reads", "busy (never pausing)"))
                if p + "_events_per_s" in main
            ],
            f"| longest pause in another thread: sync / burst / resync relist | "
            f"{main['sync_pause_ms']:.0f} / {main['burst_pause_ms']:.0f} / {main['relist_pause_ms']:.0f} ms"
            f" | relist ≤ 50 ms |",
            "",
        ]
    rows = data.get("peers")
    if rows:
        lines += [
            f"## Peers, same server, same run ({data['peer_pods']:,} pods, burst of "
            f"{data['peer_events']:,} MODIFIED events; each in a fresh process: RSS and heap per pod after the "
            "sync, before the floor runs in it; heap: Go's HeapInuse, Python's pymalloc + malloc in use)",
            "",
            "| library | sync (× floor) | RSS KB/pod | heap KB/pod | after churn: RSS / heap | burst events/s "
            "| CPU µs/event | namespace list |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in rows:
            name = f"{row['library']} {row.get('version', '')}".strip()
            if row.get("decoder"):
                name += f" ({row['decoder']})"
            if "skipped" in row or "error" in row:
                lines.append(f"| {name} | {row.get('skipped') or row.get('error')} | | | | | | |")
                continue
            sync = f"{row['sync_s']:.2f} s ({row['sync_s'] / row['floor_s']:.1f}×)"
            rss = _memory_cells(row)
            if row.get("held", row["pods"]) < row["pods"]:
                sync += f" — holds {row['held']:,} of {row['pods']:,} (first page only)"
                if "full_list_s" in row:
                    full = row["full_list_s"]
                    sync += f"; every page listed: {full:.2f} s ({full / row['floor_s']:.1f}×)"
                rss = rss.replace(" | ", " (of the first page) | ", 1)
            lines.append(
                f"| {name} | {sync} | {rss} | {row['burst_per_s']:,.0f} | "
                f"{row['burst_cpu_us_per_event']:.0f} | {row['list_ns_ms']:.2f} ms |"
            )
        lines.append("")
    scale = data.get("scale")
    if scale:
        lines += [
            "## Scale (each size in a fresh process)",
            "",
            "| pods | sync | µs/pod | × floor | RSS KB/pod | peak/steady |",
            "|---|---|---|---|---|---|",
        ]
        for row in scale:
            label = f"{row['pods']:,}" + (" + strip_managed_fields" if row.get("transform") else "")
            if "error" in row:
                lines.append(f"| {label} | {row['error']} | | | | |")
                continue
            lines.append(
                f"| {label} | {row['sync_s']:.2f} s | {row['sync_us_per_pod']:.0f} | "
                f"{row['sync_s'] / row['floor_s']:.2f} | {row['rss_kb_per_pod']:.1f} | "
                f"{row['peak_over_steady']:.2f} |"
            )
        lines.append("")
    path.write_text("\n".join(lines))


def write_charts(data: dict[str, Any], out: Path) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["no matplotlib (pip install -e '.[bench]'): charts skipped"]
    written = []
    rows = [r for r in data.get("peers") or [] if "sync_s" in r]
    if rows:
        panels: list[tuple[str, Callable[[dict[str, Any]], float]]] = [
            ("sync (s)", lambda r: r["sync_s"]),
            ("RSS per pod (KB)", lambda r: r["rss_kb_per_pod"]),
            ("burst: events applied/s", lambda r: r["burst_per_s"]),
            ("CPU per event (µs)", lambda r: r["burst_cpu_us_per_event"]),
        ]
        fig, axes = plt.subplots(1, 4, figsize=(16, 4))
        names = [
            f"{r['library']}\n{r.get('version', '')}"
            + (f" ({r['decoder']})" if r.get("decoder") else "")
            + ("\n(first page only)" if r.get("held", r["pods"]) < r["pods"] else "")
            for r in rows
        ]
        colors = ["#1f77b4" if r["library"] == "cloudcoil_cache" else "#999999" for r in rows]
        for ax, (title, get) in zip(axes, panels):
            values = [get(r) for r in rows]
            ax.bar(names, values, color=colors)
            ax.set_title(title)
            ax.tick_params(axis="x", labelsize=7)
            for k, v in enumerate(values):
                ax.annotate(f"{v:,.1f}" if v < 100 else f"{v:,.0f}", (k, v), ha="center", va="bottom", fontsize=7)
        fig.suptitle(
            f"{data['peer_pods']:,} pods, same fake API server, same run ({data['when']}, load {data['load_before']})"
        )
        fig.tight_layout()
        fig.savefig(out / "peers.png", dpi=100)
        plt.close(fig)
        written.append("peers.png")
    scale = [r for r in data.get("scale") or [] if "sync_s" in r and not r.get("transform")]
    if scale:
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
        xs = [r["pods"] for r in scale]
        left.plot(xs, [r["sync_us_per_pod"] for r in scale], "o-", label="sync")
        left.plot(xs, [r["floor_s"] / r["pods"] * 1e6 for r in scale], "s--", label="floor (GET + json.loads)")
        left.set_xscale("log")
        left.set_ylim(bottom=0)
        left.set_xlabel("pods")
        left.set_ylabel("µs per pod")
        left.legend()
        left.set_title("time per pod")
        right.plot(xs, [r["rss_kb_per_pod"] for r in scale], "o-", label="RSS per pod")
        right.plot(xs, [r["rss_kb_per_pod"] * r["peak_over_steady"] for r in scale], "^--", label="peak RSS per pod")
        right.axhline(12, color="grey", linestyle=":", label="target 12 KB")
        right.set_xscale("log")
        right.set_ylim(bottom=0)
        right.set_xlabel("pods")
        right.set_ylabel("KB per pod")
        right.legend()
        right.set_title("memory per pod")
        fig.tight_layout()
        fig.savefig(out / "scale.png", dpi=100)
        plt.close(fig)
        written.append("scale.png")
    return written


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=5_000, help="MODIFIED events per burst")
    parser.add_argument("--peers", action="store_true", help="client-go, kubernetes, cloudcoil 0.6.0 beside us")
    parser.add_argument("--scale", action="store_true", help="1,000 / 10,000 / 30,000 pods, each in a fresh process")
    parser.add_argument(
        "--long", action="store_true", help="with --scale: also 100,000 pods; with --server real: 100,000 pods"
    )
    parser.add_argument("--no-main", action="store_true", help="skip the in-process main figures")
    parser.add_argument(
        "--server",
        choices=("fake", "real"),
        default="fake",
        help="real: every peer against kube-apiserver + etcd (RealAPIServer), beside this library and "
        "client-go against the fake, in one run (results/real.md)",
    )
    parser.add_argument("--real-events", type=int, default=REAL_EVENTS, help="PATCHes per burst on the real server")
    parser.add_argument("--assets", help="with --server real: folder with kube-apiserver and etcd")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--churn",
        type=float,
        default=0,
        metavar="SECONDS",
        help="peers: after the sync, SECONDS of MODIFIED events (100/s), then RSS and heap per pod again",
    )
    parser.add_argument(
        "--render", action="store_true", help="only rewrite results.md and the charts from OUT/latest.json"
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--transform", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--floor", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--parse-floor", metavar="KUBECONFIG", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.parse_floor:
        print("RESULT " + json.dumps(parse_floor(args.parse_floor)), flush=True)
        return
    if args.floor:
        cpu: list[float] = []
        wall = bench_floor(args.floor, cpu)
        print("RESULT " + json.dumps({"floor_s": wall, "floor_cpu_s": cpu[0]}), flush=True)
        return
    if args.one:
        print("RESULT " + json.dumps(run_one(args.one, args.transform, args.traced)), flush=True)
        return
    if args.render and args.server == "real":
        write_real_markdown(json.loads((args.out / "real.json").read_text()), args.out / "real.md")
        return
    if args.render:
        data = json.loads((args.out / "latest.json").read_text())
        write_markdown(data, args.out / "results.md")
        print(write_charts(data, args.out))
        return
    data: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%d %H:%M"),
        "python": sys.version.split()[0],
        "orjson": _json.HAVE_ORJSON,
        "cpus": os.cpu_count(),
        "load_before": _load(),
        "command": "python benchmarks/run.py " + " ".join(sys.argv[1:]),
    }
    print(
        f"python {data['python']}, orjson={data['orjson']}, {data['cpus']} CPUs, load {data['load_before']}", flush=True
    )
    if args.server == "real":
        pods = 100_000 if args.long else args.pods
        data["real"] = {"pods": pods, "fake_events": args.events, "real_events": args.real_events}
        run_real(pods, args.events, args.real_events, args.assets, data["real"], args.churn)
        data["load_after"] = _load()
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "real.json").write_text(json.dumps(data, indent=1))
        write_real_markdown(data, args.out / "real.md")
        print(f"wrote {args.out}/real.json, real.md; load after {data['load_after']}", flush=True)
        return
    if not args.no_main:
        data["main"] = {"pods": args.pods}
        run_main(args.pods, args.events, data["main"])
    if args.peers:
        data["peer_pods"], data["peer_events"] = args.pods, args.events
        data["peers"] = run_peers(args.pods, args.events, args.churn)
    if args.scale:
        sizes = [1_000, 10_000, 30_000] + ([100_000] if args.long else [])
        data["scale"] = run_scale(sizes, transform_at=10_000)
    data["load_after"] = _load()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "latest.json").write_text(json.dumps(data, indent=1))
    write_markdown(data, args.out / "results.md")
    notes = write_charts(data, args.out)
    print(
        f"wrote {args.out}/latest.json, results.md{''.join(', ' + n for n in notes)}; load after {data['load_after']}",
        flush=True,
    )
    os.environ.pop("KUBECONFIG", None)


if __name__ == "__main__":
    main()
