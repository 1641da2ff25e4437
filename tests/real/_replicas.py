"""Replicas of examples/operator.py as separate processes, and what their pass logs show.

``Replicas`` launches ``examples/operator.py --run`` processes (each with its own pass log, health port and
output file) and, on leaving its ``with`` block however it is left, stops every one: SIGTERM, then SIGKILL
after a grace; on Linux each child also gets ``PR_SET_PDEATHSIG=SIGKILL`` so that it dies with the test
process even when that one is killed. ``read_passes`` parses the logs (a killed replica's started passes
stay open), ``overlaps`` finds a key in two replicas' passes at once, ``per_replica`` counts keys, ``rss_kb``
reads a process's resident memory. Used by tests/real/test_real_sharding_processes.py and benchmarks/sharding.py.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import IO, Callable, Iterable, Sequence

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "operator.py"
_PR_SET_PDEATHSIG = 1


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` giving the child SIGKILL when the thread that started it goes (Linux only)."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def setup() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent went before prctl took effect
            os._exit(1)

    return setup


def wait_until(check: Callable[[], bool], timeout: float, interval: float = 0.1, what: str = "") -> float:
    """Seconds until ``check()`` held (re-checked every ``interval``); AssertionError naming ``what`` after
    ``timeout``."""
    pause = threading.Event()  # never set: the interval is a wait on it
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"not within {timeout:.0f} s: {what or check}")
        pause.wait(interval)
    return time.monotonic() - start


def rss_kb(pid: int) -> int:
    """VmRSS of process ``pid`` in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for process {pid}")


class Replica:
    """One ``examples/operator.py --run`` process."""

    def __init__(self, identity: str, workdir: Path, kubeconfig: str, args: Sequence[str], env: dict[str, str]) -> None:
        self.identity = identity
        self.pass_log = workdir / f"passes-{identity}.jsonl"
        self.output = workdir / f"replica-{identity}.log"
        self.health_port = free_port()
        self.argv = [
            sys.executable,
            str(EXAMPLE),
            "--run",
            "--identity",
            identity,
            "--health-port",
            str(self.health_port),
            *args,
        ]
        self.env = {
            **os.environ,
            "KUBECONFIG": kubeconfig,
            "PYTHONPATH": str(REPO),  # this tree's library; never examples/ (its operator.py would shadow the stdlib's)
            "OPERATOR_PASS_LOG": str(self.pass_log),
            **env,
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self._out: IO[bytes] | None = None
        self.started_ns = 0
        self.killed_ns: int | None = None

    def start(self) -> Replica:
        self._out = open(self.output, "ab")
        self.started_ns = time.time_ns()
        self.proc = subprocess.Popen(
            self.argv,
            env=self.env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent(),
        )
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def tail(self, chars: int = 3000) -> str:
        try:
            return self.output.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def readyz(self) -> bool:
        """/readyz answers 200; AssertionError with the output's tail when the process has ended."""
        if not self.alive():
            code = self.proc.returncode if self.proc is not None else None
            raise AssertionError(f"replica {self.identity} exited ({code}):\n{self.tail()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.health_port}/readyz", timeout=2) as answer:
                return bool(answer.status == 200)
        except (urllib.error.URLError, OSError, ssl.SSLError):
            return False

    def wait_ready(self, timeout: float = 60.0) -> float:
        return wait_until(self.readyz, timeout, interval=0.2, what=f"replica {self.identity} ready")

    def memory_kb(self, timeout: float = 30.0) -> int:
        """VmRSS after a collection and a ``malloc_trim`` in the replica (SIGUSR1; the line it logs)."""

        def readings() -> list[int]:
            lines = self.pass_log.read_text().splitlines() if self.pass_log.exists() else []
            found = []
            for line in lines:
                if '"rss_kb"' in line:
                    with contextlib.suppress(json.JSONDecodeError):  # (a line being written)
                        found.append(json.loads(line)["rss_kb"])
            return found

        before = len(readings())
        assert self.proc is not None
        self.proc.send_signal(signal.SIGUSR1)
        wait_until(lambda: len(readings()) > before, timeout, what=f"replica {self.identity}'s memory reading")
        return readings()[-1]

    def kill(self) -> int:
        """SIGKILL, reaped; the time it was sent (wall-clock ns)."""
        assert self.proc is not None
        self.killed_ns = time.time_ns()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        return self.killed_ns

    def stop(self, grace: float = 15.0, signalled: bool = False) -> int | None:
        """SIGTERM (unless ``signalled``: sent already; a second one could end a graceful stop), SIGKILL
        after ``grace`` seconds; reaped. The exit code (None if it was not running)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            if not signalled:
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.killed_ns = time.time_ns()
                self.proc.kill()
                self.proc.wait(10)
        if self._out is not None:
            self._out.close()
            self._out = None
        return self.proc.returncode


class Replicas:
    """Launches replicas; leaving the ``with`` block stops every one still running (SIGTERM in parallel,
    then SIGKILL), whatever happened in it."""

    def __init__(self, workdir: Path, kubeconfig: str, args: Sequence[str] = (), env: dict[str, str] | None = None):
        self.workdir = workdir
        self.kubeconfig = kubeconfig
        self.args = list(args)
        self.env = dict(env or {})
        self.started: list[Replica] = []

    def __enter__(self) -> Replicas:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_all()

    def start(self, identity: str, args: Sequence[str] = (), env: dict[str, str] | None = None) -> Replica:
        replica = Replica(identity, self.workdir, self.kubeconfig, [*self.args, *args], {**self.env, **(env or {})})
        self.started.append(replica)
        return replica.start()

    def live(self) -> list[Replica]:
        return [r for r in self.started if r.alive()]

    def stop_all(self, grace: float = 15.0) -> dict[str, int | None]:
        """Stop every replica still running; their identities → exit codes."""
        live = self.live()
        for replica in live:  # all signalled first: they stop at once
            assert replica.proc is not None
            replica.proc.send_signal(signal.SIGTERM)
        codes = {r.identity: r.stop(grace, signalled=True) for r in live}
        for replica in self.started:
            replica.stop(grace)  # (closes the output files of the dead ones)
        return codes

    def pass_logs(self) -> list[Path]:
        return [r.pass_log for r in self.started]

    def killed(self) -> dict[str, list[int]]:
        """identity → when its processes were killed (ns)."""
        times: dict[str, list[int]] = defaultdict(list)
        for replica in self.started:
            if replica.killed_ns is not None:
                times[replica.identity].append(replica.killed_ns)
        return dict(times)


# ---------------------------------------------------------------------------------------- pass logs
@dataclasses.dataclass(frozen=True)
class Pass:
    key: str
    replica: str
    start: int
    end: int | None  # None: started and never finished (the replica was killed in it, or is in it now)


def read_passes(paths: Iterable[Path]) -> list[Pass]:
    """Every pass in the logs, in start order: the finished ones, and the started ones that never finished.
    A line cut short by SIGKILL (the last of its file) is skipped."""
    open_: dict[tuple[str, str, int], None] = {}
    done: list[Pass] = []
    for path in paths:
        if not path.exists():
            continue
        lines = path.read_text().splitlines()
        for number, line in enumerate(lines):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                if number == len(lines) - 1:
                    continue
                raise
            if "key" not in entry:
                continue  # a memory reading (SIGUSR1)
            ident = (entry["key"], entry["replica"], entry["start"])
            if entry["end"] is None:
                open_[ident] = None
            else:
                open_.pop(ident, None)
                done.append(Pass(entry["key"], entry["replica"], entry["start"], entry["end"]))
    done += [Pass(key, replica, start, None) for key, replica, start in open_]
    return sorted(done, key=lambda p: (p.start, p.replica))


def overlaps(passes: Iterable[Pass], killed: dict[str, list[int]] | None = None, now: int | None = None) -> list[str]:
    """Every key that two replicas had in a pass at the same time, described. An open pass lasts until its
    replica was killed (``killed``: identity → the times its processes were killed, ns; the first at or
    after the pass's start) or, for a live replica, until ``now`` (default: now)."""
    killed = killed or {}
    now = time.time_ns() if now is None else now
    by_key: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    for p in passes:
        end = p.end
        if end is None:
            end = min((t for t in killed.get(p.replica, ()) if t >= p.start), default=now)
        by_key[p.key].append((p.start, end, p.replica))
    found = []
    for key, spans in by_key.items():
        spans.sort()
        latest_end, latest_replica = spans[0][1], spans[0][2]
        for start, end, replica in spans[1:]:
            if start < latest_end and replica != latest_replica:
                found.append(f"{key}: {latest_replica} until {latest_end}, {replica} from {start}")
            if end > latest_end:
                latest_end, latest_replica = end, replica
    return found


def per_replica(passes: Iterable[Pass], since: int = 0) -> dict[str, set[str]]:
    """replica → the keys it finished a pass of, among the passes started at or after ``since`` (ns)."""
    keys: dict[str, set[str]] = defaultdict(set)
    for p in passes:
        if p.start >= since and p.end is not None:
            keys[p.replica].add(p.key)
    return dict(keys)


def first_pass_after(passes: Iterable[Pass], since: int, replicas: set[str] | None = None) -> dict[str, Pass]:
    """key → its first pass finished by one of ``replicas`` (all when None) that started at or after ``since``."""
    first: dict[str, Pass] = {}
    for p in passes:
        if p.start >= since and p.end is not None and (replicas is None or p.replica in replicas):
            if p.key not in first or p.start < first[p.key].start:
                first[p.key] = p
    return first


def shares(counts: dict[str, int]) -> dict[str, float]:
    """replica → its fraction of the total."""
    total = sum(counts.values()) or 1
    return {replica: count / total for replica, count in sorted(counts.items())}


# ------------------------------------------------------------------------------------- label history
class LabelHistory:
    """Every label state each object of a collection went through, from a raw WATCH on a thread.

    ``history[name]`` is the list of ``(time ns, {label: value})`` of the labels in ``keys`` as each event
    showed them (one entry per change); ``current()`` is the latest per live object. ``wait(check, timeout)``
    waits on the watch's events (no polling): ``check(history)`` runs under the lock after each event.
    """

    def __init__(self, base_url: str, path: str, token: str, context: ssl.SSLContext, keys: Sequence[str]) -> None:
        self.base_url, self.path, self.token, self.context = base_url, path, token, context
        self.keys = tuple(keys)
        self.history: dict[str, list[tuple[int, dict[str, str]]]] = defaultdict(list)
        self.deleted: set[str] = set()
        self.cond = threading.Condition()
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="label-history", daemon=True)

    def __enter__(self) -> LabelHistory:
        self._resource_version = self._list()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _open(self, query: str, timeout: float = 60.0) -> object:
        """The response; a 429 (kube-apiserver's "storage is (re)initializing", e.g. just after a CRD was
        established) is retried after its Retry-After, for up to 30 s."""
        request = urllib.request.Request(
            f"{self.base_url}{self.path}?{query}", headers={"Authorization": f"Bearer {self.token}"}
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                return urllib.request.urlopen(request, timeout=timeout, context=self.context)
            except urllib.error.HTTPError as exc:
                if exc.code != 429 or time.monotonic() > deadline:
                    raise
                self._stop.wait(float(exc.headers.get("Retry-After") or 1))

    def _list(self) -> str:
        with self._open("limit=0") as answer:  # type: ignore[attr-defined]
            body = json.loads(answer.read())
        for item in body["items"]:
            self._record(item)
        return str(body["metadata"]["resourceVersion"])

    def _record(self, obj: dict[str, object], deleted: bool = False) -> None:
        meta = obj["metadata"]
        assert isinstance(meta, dict)
        name = meta["name"]
        labels = meta.get("labels") or {}
        state = {k: labels[k] for k in self.keys if k in labels}
        with self.cond:
            seen = self.history[name]
            if not seen or seen[-1][1] != state:
                seen.append((time.time_ns(), state))
            if deleted:
                self.deleted.add(name)
            self.cond.notify_all()

    def _run(self) -> None:
        """Watches from the list's resourceVersion; a read idle for a second ends the stream, and the watch
        resumes from the last version seen (so that the stop flag is looked at every second)."""
        try:
            while not self._stop.is_set():
                query = f"watch=true&allowWatchBookmarks=true&resourceVersion={self._resource_version}"
                response = self._open(query, timeout=1.0)
                try:
                    for line in response:  # type: ignore[attr-defined]
                        event = json.loads(line)
                        obj = event["object"]
                        if event["type"] == "ERROR":
                            raise AssertionError(f"watch error: {obj}")
                        self._resource_version = obj["metadata"]["resourceVersion"]
                        if event["type"] != "BOOKMARK":
                            self._record(obj, deleted=event["type"] == "DELETED")
                except (TimeoutError, socket.timeout):
                    pass  # idle: resume from the last version
                finally:
                    response.close()  # type: ignore[attr-defined]
        except BaseException as exc:  # noqa: BLE001 - reported by wait()
            with self.cond:
                self.error = exc
                self.cond.notify_all()

    def current(self) -> dict[str, dict[str, str]]:
        with self.cond:
            return {name: seen[-1][1] for name, seen in self.history.items() if name not in self.deleted}

    def wait(self, check: Callable[[dict[str, dict[str, str]]], bool], timeout: float, what: str) -> float:
        """Seconds until ``check(current labels)`` held; AssertionError naming ``what`` after ``timeout``."""
        start = time.monotonic()
        with self.cond:
            while True:
                if self.error is not None:
                    raise AssertionError(f"the label watch failed: {self.error!r}")
                now = {name: seen[-1][1] for name, seen in self.history.items() if name not in self.deleted}
                if check(now):
                    return time.monotonic() - start
                left = timeout - (time.monotonic() - start)
                if left <= 0:
                    raise AssertionError(f"not within {timeout:.0f} s: {what}")
                self.cond.wait(min(left, 1.0))


# ------------------------------------------------------------------------------------ the ring's webhook
@dataclasses.dataclass
class RingWebhook:
    """The ring's mutating webhook as one replica serves it on loopback: its TLS files (a test CA's), the
    port, the replica arguments that serve it there, and the configuration an admin registers (this
    namespace only: the server may be shared)."""

    name: str
    port: int
    args: tuple[str, ...]
    document: dict[str, object]
    path: str = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"


def ring_webhook(workdir: Path, namespace: str, ring: str) -> RingWebhook:
    import importlib.util

    import trustme

    from cloudcoil_cache.controller import Ring

    tls = workdir / "tls"
    tls.mkdir(exist_ok=True)
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1")
    leaf.cert_chain_pems[0].write_to_path(str(tls / "tls.crt"))
    leaf.private_key_pem.write_to_path(str(tls / "tls.key"))
    port = free_port()
    spec = importlib.util.spec_from_file_location("example_operator_webhook", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    # the configuration the Application's ring webhook declares, pointed at this port (an admin's step)
    app = example.application(example.widget_operator([]), sharding=Ring(ring, identity="x"), health_port=None)
    name = f"{ring}.{namespace}.cloudcoil.io"
    documents = app.webhooks.webhook.configurations(
        name=name, url=f"https://127.0.0.1:{port}", ca_bundle=ca.cert_pem.bytes()
    )
    assert [d["kind"] for d in documents] == ["MutatingWebhookConfiguration"], documents
    for webhook in documents[0]["webhooks"]:  # this namespace only
        webhook["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
    args = ("--webhook-port", str(port), "--webhook-cert-dir", str(tls))
    return RingWebhook(name, port, args, documents[0])
