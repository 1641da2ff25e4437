"""The chaos soak harness: seeded writes and every fault the fake server injects, then the checks of issue 8 §E.

Shared by ``tests/chaos/test_chaos_soak.py`` (a short run per seed) and ``benchmarks/chaos.py`` (the long
run, 20,000 events and 300 faults). ``run_chaos(settings, workdir)`` returns a ``ChaosReport`` whose
``violations`` must be empty: caches equal to the server object by object, handler logs that replay to
that state with every object's events in order, no hot loop and no relist where a re-watch was enough
in the request log, and no thread left once the scopes exit.

One thread (the caller's) drives everything in a seeded order: a run of writes, then a fault (with a
burst of writes while it is in effect), then a wait until every informer watches again, and so on.
The writes go through the fake server's object API, so only the informers talk HTTP and every
request in the server's log belongs to one of them.
"""

from __future__ import annotations

import asyncio
import os
import random
import resource
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from cloudcoil_cache.caching import Backoff, Cache, Tuning
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.resources import GenericResource
from cloudcoil_cache.testing import FakeAPIServer, RecordedRequest, make_configmap, make_pod

__all__ = [
    "FAULT_KINDS",
    "ChaosReport",
    "ChaosSettings",
    "Episode",
    "EventLog",
    "episode_violations",
    "format_report",
    "most_in_window",
    "run_chaos",
]

GROUP, VERSION = "chaos.example.com", "v1"
Widget = GenericResource.define(
    api_version=f"{GROUP}/{VERSION}", kind="ChaosWidget", plural="chaoswidgets", namespaced=True
)

NAMESPACES = ("chaos-a", "chaos-b", "chaos-c")
CM_NAMESPACE = "chaos-a"  # the ConfigMap informer watches this namespace only...
CM_SELECTOR = "chaos=keep"  # ...and only ConfigMaps with this label
POD_VIEW_NAMESPACE = "chaos-b"  # one Pod view sees this namespace only (same informer)

#: Every fault the fake server can inject, as the harness applies them.
FAULT_KINDS = (
    "drop",  # drop_watches()
    "drop_mid_object",  # stall, writes queue up, drop_watches(mid_object=True): half an event line
    "stall",  # stall_watches() until every informer's read timeout fired, then resume
    "watch_429",  # 429 + Retry-After on one informer's watch open
    "list_429",  # 429 + Retry-After on a relist (forced by a 410 ERROR event)
    "watch_5xx",  # 500 / 503 / 504 on watch opens
    "list_5xx",  # 500 / 503 / 504 on a relist (forced by a 410 ERROR event)
    "error_410",  # an ERROR event carrying a 410 Expired Status
    "compact_410_http",  # compaction, then a re-watch from a compacted RV answered with HTTP 410
    "compact_410_event",  # compaction, then a re-watch from a compacted RV answered with 200 + ERROR 410
    "error_500",  # an ERROR event carrying a 500 Status
    "malformed",  # a garbage line on every watch
    "compact",  # compaction alone (bites at the next re-watch)
    "restart_lose_history",
    "restart_backwards",  # restart(revision=lower): an etcd restore; re-watches get 504 too large
    "unauthorized",  # the server wants a new token (401s), then the token file is rotated on disk
    "split_events",  # event lines written in small chunks
    "slow",  # every response delayed, then the watches dropped
)

#: Faults after which a re-watch from the last RV is enough: a LIST in their window is a violation.
REWATCH_ONLY = frozenset({"drop", "drop_mid_object", "stall", "watch_429", "split_events", "slow"})
#: Faults that make every informer open a new watch (the harness waits for it before going on).
RECONNECTING = frozenset(FAULT_KINDS) - {"compact", "split_events"}

EXPIRED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "too old resource version",
    "reason": "Expired",
    "code": 410,
}
INTERNAL = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "etcd leader changed",
    "reason": "InternalError",
    "code": 500,
}


#: ``(namespace, name)`` of an object.
Key = tuple[str, str]
#: Per object: uid, resourceVersion and a fingerprint of its labels and annotations.
State = dict[Key, tuple[str, str, str]]


@dataclass(frozen=True)
class ChaosSettings:
    """One chaos run: how many writes and faults, and the (fast) timing of the informers."""

    seed: int
    events: int = 600  # writes (creates, updates, deletes; a delete + re-create counts two)
    faults: int = 30  # at least one of each kind, the rest drawn at random
    initial_pods: int = 24
    initial_configmaps: int = 10
    initial_widgets: int = 8
    burst: int = 6  # writes made while a fault is in effect
    backoff: Backoff = Backoff(initial=0.01, cap=0.2)
    watch_timeout: float = 2.0  # server-side timeoutSeconds drawn from [2, 4)
    read_timeout: float = 0.6  # a stalled watch is given up after this long
    min_watch_duration: float = 0.05
    bookmark_interval: float = 0.15  # keeps healthy idle watches talking within read_timeout
    retry_after: float = 0.3  # Retry-After of the injected 429s
    recovery_timeout: float = 20.0
    converge_timeout: float = 30.0
    quiet_window: float = 1.5  # fault-free observation time after convergence
    hot_window: float = 1.0  # sliding window of the hot-loop check...
    hot_limit: int = 40  # ...and the most requests one informer may send in it

    def tuning(self) -> Tuning:
        return Tuning(
            backoff=self.backoff,
            watch_timeout=self.watch_timeout,
            read_timeout=self.read_timeout,
            min_watch_duration=self.min_watch_duration,
        )


@dataclass
class Episode:
    """One injected fault: its kind, when it started and when every informer watched again."""

    kind: str
    start: float
    end: float = 0.0
    detail: str = ""
    target: str = ""  # the informer path a watch_429 aimed at


@dataclass
class ChaosReport:
    """What a run measured; ``violations`` must be empty."""

    seed: int
    events: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    requests: dict[str, Counter[str]] = field(default_factory=dict)  # informer -> {list, watch, relist, ...}
    handler_events: dict[str, int] = field(default_factory=dict)
    objects: dict[str, int] = field(default_factory=dict)  # informer -> objects at the end
    unauthorized: int = 0
    convergence_s: float = 0.0
    quiet_rate: dict[str, float] = field(default_factory=dict)  # requests per second in the quiet window
    max_window: dict[str, int] = field(default_factory=dict)  # most requests in one hot_window
    recovery_s: dict[str, float] = field(default_factory=dict)  # fault kind -> longest time to watch again
    wall_s: float = 0.0
    peak_rss_mb: float = 0.0
    violations: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Scope:
    """One informer: its kind, the HTTP path it lists and watches, and how to read the server's truth."""

    name: str
    cls: type
    resource: str  # the fake server's resource name
    path: str
    namespace: str | None = None
    selector: tuple[str, str] | None = None

    def server_state(self, server: FakeAPIServer, namespace: str | None = None) -> State:
        state: State = {}
        for obj in server.list(self.resource, self.namespace):
            meta = obj["metadata"]
            if namespace is not None and meta.get("namespace") != namespace:
                continue
            labels = meta.get("labels") or {}
            if self.selector is not None and labels.get(self.selector[0]) != self.selector[1]:
                continue
            state[(meta.get("namespace") or "", meta["name"])] = (
                meta["uid"],
                meta["resourceVersion"],
                _fingerprint(labels, meta.get("annotations")),
            )
        return state


SCOPES = (
    _Scope("pods", Pod, "pods", "/api/v1/pods"),
    _Scope(
        "configmaps",
        ConfigMap,
        "configmaps",
        f"/api/v1/namespaces/{CM_NAMESPACE}/configmaps",
        namespace=CM_NAMESPACE,
        selector=("chaos", "keep"),
    ),
    _Scope("widgets", Widget, f"chaoswidgets.{GROUP}", f"/apis/{GROUP}/{VERSION}/chaoswidgets"),
)


def _fingerprint(labels: dict[str, str] | None, annotations: dict[str, str] | None) -> str:
    return repr((sorted((labels or {}).items()), sorted((annotations or {}).items())))


def _entry(obj: Any) -> tuple[tuple[str, str], str, str]:
    meta = obj.metadata
    return (meta.namespace or "", meta.name), meta.uid, meta.resource_version


class EventLog:
    """Every handler call of one view, in delivery order (appended from the view's lane)."""

    def __init__(self, name: str, namespace: str | None = None) -> None:
        self.name = name
        self.namespace = namespace
        self._lock = threading.Lock()
        self.events: list[tuple[str, tuple[str, str], str, str, str | None, str | None]] = []

    def add(self, obj: Any) -> None:
        key, uid, rv = _entry(obj)
        with self._lock:
            self.events.append(("add", key, uid, rv, None, None))

    def update(self, old: Any, new: Any) -> None:
        key, uid, rv = _entry(new)
        _, old_uid, old_rv = _entry(old)
        with self._lock:
            self.events.append(("update", key, uid, rv, old_uid, old_rv))

    def delete(self, obj: Any) -> None:
        key, uid, rv = _entry(obj)
        with self._lock:
            self.events.append(("delete", key, uid, rv, None, None))

    def replay(self) -> tuple[dict[tuple[str, str], tuple[str, str]], list[str]]:
        """The state the log reproduces from empty, and every out-of-order event in it."""
        with self._lock:
            events = list(self.events)
        live: dict[tuple[str, str], tuple[str, str]] = {}
        problems: list[str] = []
        for i, (kind, key, uid, rv, old_uid, old_rv) in enumerate(events):
            where = f"{self.name}: event #{i} {kind} {key[0]}/{key[1]} uid={uid[:8]} rv={rv}"
            current = live.get(key)
            if kind == "add":
                if current is not None:
                    problems.append(f"{where}: added while live (uid={current[0][:8]} rv={current[1]})")
                live[key] = (uid, rv)
            elif kind == "update":
                if current is None:
                    problems.append(f"{where}: update of an object not live (after its delete, or never added)")
                elif current != (old_uid, old_rv):
                    problems.append(
                        f"{where}: old state uid={old_uid and old_uid[:8]} rv={old_rv} is not the "
                        f"last one delivered (uid={current[0][:8]} rv={current[1]})"
                    )
                if old_uid != uid:
                    problems.append(
                        f"{where}: a re-created object (uid {old_uid and old_uid[:8]} -> {uid[:8]}) "
                        "delivered as an update instead of delete + add"
                    )
                live[key] = (uid, rv)
            else:
                if current is None:
                    problems.append(f"{where}: delete of an object not live")
                elif current[0] != uid:
                    problems.append(f"{where}: deletes uid {uid[:8]} but uid {current[0][:8]} is live")
                live.pop(key, None)
        return live, problems


class _LoopThread:
    """An event loop running in a thread of its own, for the async views."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="chaos-async-loop", daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def start(self) -> None:
        self.thread.start()

    def call(self, coro: Any, timeout: float = 10.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class _Writer:
    """Seeded creates, updates, deletes and delete + re-creates through the server's object API."""

    def __init__(self, server: FakeAPIServer, rng: random.Random) -> None:
        self.server = server
        self.rng = rng
        self.live: dict[str, list[tuple[str, str]]] = {"pods": [], "configmaps": [], "widgets": []}
        self.count = 0  # writes (each one is one watch event on the server)
        self._serial = 0

    def _name(self, prefix: str) -> str:
        self._serial += 1
        return f"{prefix}-{self._serial}"

    def _body(self, scope: str, name: str, namespace: str) -> dict[str, Any]:
        if scope == "pods":
            return make_pod(name, namespace, index=self._serial)
        if scope == "configmaps":
            keep = "keep" if self.rng.random() < 0.6 else "drop"
            return make_configmap(name, namespace, labels={"chaos": keep}, data={"n": str(self._serial)})
        return {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ChaosWidget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"size": self._serial},
        }

    def _namespace(self, scope: str) -> str:
        if scope == "configmaps":  # mostly inside the informer's namespace, some outside it
            return CM_NAMESPACE if self.rng.random() < 0.8 else "chaos-b"
        return self.rng.choice(NAMESPACES)

    def _resource(self, scope: str) -> str:
        return next(s.resource for s in SCOPES if s.name == scope)

    def create(self, scope: str) -> None:
        namespace = self._namespace(scope)
        name = self._name(scope[:-1])
        self.server.create(self._resource(scope), self._body(scope, name, namespace), namespace)
        self.live[scope].append((namespace, name))
        self.count += 1

    def step(self) -> None:
        """One random write (two for a delete + re-create)."""
        rng = self.rng
        scope = rng.choices(("pods", "configmaps", "widgets"), weights=(5, 3, 2))[0]
        live = self.live[scope]
        roll = rng.random()
        if len(live) < 4 or roll < 0.25:
            self.create(scope)
            return
        index = rng.randrange(len(live))
        namespace, name = live[index]
        resource_name = self._resource(scope)
        self._serial += 1
        if roll < 0.70:  # update: metadata for every kind, plus what each kind allows to change
            patch: dict[str, Any] = {"metadata": {"annotations": {"chaos/serial": str(self._serial)}}}
            if scope == "configmaps":
                patch["metadata"]["labels"] = {"chaos": rng.choice(("keep", "keep", "drop"))}
                patch["data"] = {"n": str(self._serial)}
            elif scope == "widgets":
                patch["spec"] = {"size": self._serial}
            elif rng.random() < 0.3:
                patch["metadata"]["labels"] = {"chaos-phase": str(self._serial % 5)}
            self.server.patch(resource_name, name, patch, namespace)
            self.count += 1
        elif roll < 0.88:
            self.server.delete(resource_name, name, namespace)
            live.pop(index)
            self.count += 1
        else:  # delete and re-create under the same name: a new uid
            self.server.delete(resource_name, name, namespace)
            self.server.create(resource_name, self._body(scope, name, namespace), namespace)
            self.count += 2


class _Run:
    """The state of one chaos run (see ``run_chaos``)."""

    def __init__(self, settings: ChaosSettings, workdir: Path) -> None:
        self.s = settings
        self.workdir = workdir
        self.rng = random.Random(settings.seed)
        self.report = ChaosReport(seed=settings.seed)
        self.episodes: list[Episode] = []
        self.token_serial = 0
        self.stop = threading.Event()  # never set: its wait() is the harness's bounded tick

    # ------------------------------------------------------------------ set-up
    def build(self) -> None:
        s = self.s
        self.server = FakeAPIServer(
            bookmark_interval=s.bookmark_interval, namespace_lifecycle=True, expected_token=self._token()
        )
        self.server.start()
        self.server.register_resource(GROUP, VERSION, "ChaosWidget", "chaoswidgets")
        for ns in NAMESPACES:
            self.server.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        self.writer = _Writer(self.server, random.Random(s.seed * 7919 + 1))
        for kind, n in (("pods", s.initial_pods), ("configmaps", s.initial_configmaps), ("widgets", s.initial_widgets)):
            for _ in range(n):
                self.writer.create(kind)
        self.token_path = self.workdir / "token"
        self._write_token()
        kubeconfig = self.server.write_kubeconfig(
            self.workdir / "kubeconfig", token_file=self.token_path, namespace=CM_NAMESPACE
        )
        tuning = s.tuning()
        self.all_cache = Cache(resources=[Pod, Widget], resync_period=None, tuning=tuning, sync_timeout=30)
        self.one_cache = Cache(
            resources=[ConfigMap],
            namespaces=[CM_NAMESPACE],
            label_selector=CM_SELECTOR,
            resync_period=None,
            tuning=tuning,
            sync_timeout=30,
        )
        self.all_ns = Config(kubeconfig=kubeconfig, cache=self.all_cache)
        self.one_ns = Config(kubeconfig=kubeconfig, cache=self.one_cache)
        self.logs: dict[str, tuple[_Scope, EventLog]] = {}
        self.loop = _LoopThread()
        self.loop.start()
        for scope in SCOPES:
            cache = self._cache(scope)
            self._sync_view(scope, cache.get_informer(scope.cls, sync=True), EventLog(f"{scope.name}/sync"))
            self.loop.call(self._async_view(scope, cache))
        ns_view = self.all_cache.get_informer(Pod, sync=True, namespace=POD_VIEW_NAMESPACE)
        self._sync_view(SCOPES[0], ns_view, EventLog(f"pods/sync@{POD_VIEW_NAMESPACE}", POD_VIEW_NAMESPACE))

    def _sync_view(self, scope: _Scope, view: Any, log: EventLog) -> None:
        view.on_add(log.add)
        view.on_update(log.update)
        view.on_delete(log.delete)
        self.logs[log.name] = (scope, log)

    async def _async_view(self, scope: _Scope, cache: Cache) -> None:
        view = cache.get_informer(scope.cls, sync=False)
        assert view is not None
        log = EventLog(f"{scope.name}/async")

        async def on_add(obj: Any) -> None:
            log.add(obj)

        async def on_update(old: Any, new: Any) -> None:
            log.update(old, new)

        async def on_delete(obj: Any) -> None:
            log.delete(obj)

        view.on_add(on_add)
        view.on_update(on_update)
        view.on_delete(on_delete)
        self.logs[log.name] = (scope, log)

    def _token(self) -> str:
        self.token_serial += 1
        return f"chaos-token-{self.token_serial}"

    def _write_token(self) -> None:
        tmp = self.token_path.with_suffix(".tmp")
        tmp.write_text(self.server.expected_token or "")
        os.replace(tmp, self.token_path)  # atomic: a reader never sees an empty file

    # ----------------------------------------------------------------- waiting
    def wait_until(self, condition: Callable[[], bool], timeout: float, tick: float = 0.02) -> bool:
        """Re-check ``condition`` every ``tick`` (a wait on an Event) until it holds or ``timeout``."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() >= deadline:
                return False
            self.stop.wait(tick)
        return True

    def _cache(self, scope: _Scope) -> Cache:
        return self.one_cache if scope.name == "configmaps" else self.all_cache

    def informers(self) -> list[Any]:
        return [*self.all_cache.informers(), *self.one_cache.informers()]

    def all_current(self) -> bool:
        return all(i.state()[0] == "current" for i in self.informers())

    def watched_since(self, t: float, paths: tuple[str, ...] | None = None) -> bool:
        wanted = set(paths or (s.path for s in SCOPES))
        seen = {r.path for r in self.server.requests if r.verb == "watch" and r.time > t and r.user}
        return wanted <= seen

    def recovered(self, t: float) -> bool:
        return self.watched_since(t) and self.server.active_watches >= len(SCOPES) and self.all_current()

    # ------------------------------------------------------------------ faults
    def burst(self, n: int | None = None) -> None:
        for _ in range(self.s.burst if n is None else n):
            self.writer.step()

    def inject(self, kind: str) -> None:
        episode = Episode(kind, time.monotonic())
        self.episodes.append(episode)
        fault = _Run._FAULTS.get(kind)
        if fault is None:  # pragma: no cover
            raise ValueError(kind)
        fault(self, episode)
        if kind in RECONNECTING and not self.wait_until(lambda: self.recovered(episode.start), self.s.recovery_timeout):
            self.report.violations.append(
                f"{kind} at {episode.start:.3f}: the informers did not watch again within "
                f"{self.s.recovery_timeout}s: {self._errors()}"
            )
        self.server.set_delay(0)
        self.server.expired_watch_mode = "event"
        episode.end = time.monotonic()
        self.report.faults[kind] += 1
        took = episode.end - episode.start
        self.report.recovery_s[kind] = max(self.report.recovery_s.get(kind, 0.0), took)

    # One method per fault kind (the table ``_FAULTS`` below): each injects it and may wait for
    # what it needs before the next fault; ``inject`` then waits for the recovery.
    def _drop(self, episode: Episode) -> None:
        self.server.drop_watches()
        self.burst()

    def _drop_mid_object(self, episode: Episode) -> None:
        server = self.server
        server.stall_watches()
        self.burst()
        server.drop_watches(mid_object=True)
        server.resume_watches()

    def _stall(self, episode: Episode) -> None:
        server = self.server
        server.stall_watches()
        self.burst()
        stalled_at = episode.start
        if not self.wait_until(lambda: self.watched_since(stalled_at), self.s.recovery_timeout):
            self.report.violations.append(
                f"stall at {stalled_at:.3f}: the read timeout did not end every stalled watch"
            )
        server.resume_watches()

    def _watch_429(self, episode: Episode) -> None:
        server = self.server
        target = self.rng.choice(SCOPES)
        episode.target = target.path
        server.fail_next(1, 429, verb="watch", path=f"re:^{target.path}$", retry_after=self.s.retry_after)
        server.drop_watches()
        self.burst()

    def _list_429(self, episode: Episode) -> None:
        self.server.fail_next(1, 429, verb="list", retry_after=0.05)
        self.server.send_error_event(EXPIRED)
        self.burst()

    def _5xx(self, episode: Episode) -> None:
        server, rng = self.server, self.rng
        code = rng.choice((500, 503, 504))
        verb = "watch" if episode.kind == "watch_5xx" else "list"
        n = rng.randint(1, 3)
        retry_after = 0.05 if code == 503 or rng.random() < 0.3 else None
        episode.detail = f"{n}x{code}{' retry-after' if retry_after else ''}"
        server.fail_next(n, code, verb=verb, retry_after=retry_after)
        if verb == "watch":
            server.drop_watches()
        else:
            server.send_error_event(EXPIRED)
        self.burst()

    def _error_410(self, episode: Episode) -> None:
        self.server.send_error_event(EXPIRED)
        self.burst()

    def _compact_410(self, episode: Episode) -> None:
        server = self.server
        server.expired_watch_mode = "http" if episode.kind == "compact_410_http" else "event"
        server.stall_watches()
        self.burst(max(1, self.s.burst))
        server.compact()
        server.drop_watches()
        server.resume_watches()

    def _error_500(self, episode: Episode) -> None:
        self.server.send_error_event(INTERNAL)
        self.burst()

    def _malformed(self, episode: Episode) -> None:
        self.server.send_malformed_line()
        self.burst()

    def _compact(self, episode: Episode) -> None:
        self.burst()
        compacted = self.server.revision
        self.server.compact()
        # It bites at an informer's next re-watch unless a bookmark moves it past the compaction
        # first: wait for that, so that its 410 is not blamed on the next fault.
        if not self.wait_until(lambda: self._all_past(compacted), self.s.recovery_timeout):
            self.report.violations.append(
                f"compact at {episode.start:.3f}: the bookmarks did not move every informer past revision {compacted}"
            )

    def _restart_lose_history(self, episode: Episode) -> None:
        self.server.restart(lose_history=True)
        self.burst()

    def _restart_backwards(self, episode: Episode) -> None:
        # No writes until every informer relisted: a write that brought the revision back up to
        # an informer's RV before its re-watch would hide the reset from it (kubernetes#107457).
        revision = self.server.revision
        lower = max(2, revision - self.rng.randint(20, 200))
        episode.detail = f"{revision} -> {lower}"
        self.server.restart(revision=lower)

    def _unauthorized(self, episode: Episode) -> None:
        self.server.expected_token = self._token()  # the old token is refused from now on
        self.server.drop_watches()
        self.burst()
        rejected_at = episode.start
        if not self.wait_until(lambda: self._rejected_since(rejected_at), self.s.recovery_timeout):
            self.report.violations.append("unauthorized: not every informer got a 401")
        self._write_token()  # rotation on disk: the informers re-read the file after a 401

    def _split_events(self, episode: Episode) -> None:
        self.server.split_events(self.rng.choice((1, 7, 64)))
        self.burst()
        self.server.split_events(None)

    def _slow(self, episode: Episode) -> None:
        self.server.set_delay(0.05)
        self.server.drop_watches()
        self.burst()

    _FAULTS: dict[str, Callable[[_Run, Episode], None]] = {
        "drop": _drop,
        "drop_mid_object": _drop_mid_object,
        "stall": _stall,
        "watch_429": _watch_429,
        "list_429": _list_429,
        "watch_5xx": _5xx,
        "list_5xx": _5xx,
        "error_410": _error_410,
        "compact_410_http": _compact_410,
        "compact_410_event": _compact_410,
        "error_500": _error_500,
        "malformed": _malformed,
        "compact": _compact,
        "restart_lose_history": _restart_lose_history,
        "restart_backwards": _restart_backwards,
        "unauthorized": _unauthorized,
        "split_events": _split_events,
        "slow": _slow,
    }

    def _all_past(self, revision: int) -> bool:
        return all(int(i.resource_version or 0) >= revision for i in self.informers())

    def _rejected_since(self, t: float) -> bool:
        seen = {r.path for r in self.server.requests if r.time > t and not r.user}
        return {s.path for s in SCOPES} <= seen

    def _errors(self) -> dict[str, str]:
        return {**self.all_cache.status().errors, **self.one_cache.status().errors}

    # ------------------------------------------------------------------- drive
    def schedule(self) -> list[str]:
        kinds = list(FAULT_KINDS)
        extra = [self.rng.choice(FAULT_KINDS) for _ in range(max(0, self.s.faults - len(kinds)))]
        plan = kinds + extra
        self.rng.shuffle(plan)
        return plan

    def drive(self) -> None:
        plan = self.schedule()
        start = self.writer.count
        budget = max(0, self.s.events - start)
        for i, kind in enumerate(plan):
            goal = start + budget * (i + 1) // (len(plan) + 1)
            while self.writer.count < goal:
                self.writer.step()
            self.settle()
            self.inject(kind)
        while self.writer.count < start + budget:
            self.writer.step()

    def settle(self) -> None:
        """Wait until every informer's watch has lived past min_watch_duration, so that cutting it is
        not a "very short watch" (which rightly backs off and relists)."""
        age = self.s.min_watch_duration * 2 + 0.05

        def settled() -> bool:
            latest: dict[str, float] = {}
            for r in self.server.requests:
                if r.verb == "watch" and r.user:
                    latest[r.path] = r.time
            now = time.monotonic()
            return all(now - latest.get(s.path, now) >= age for s in SCOPES)

        self.wait_until(settled, self.s.recovery_timeout)

    # ------------------------------------------------------------------ checks
    def converged(self, truth: dict[str, State]) -> bool:
        for name, (scope, log) in self.logs.items():
            want = {k: v[:2] for k, v in truth[name].items()}
            if self._cache_state(scope, log.namespace) != truth[name]:
                return False
            state, _ = log.replay()
            if state != want:
                return False
        return self.all_current()

    def _view(self, scope: _Scope, namespace: str | None) -> list[Any]:
        informer = self._cache(scope).informer_for(scope.cls)
        assert informer is not None
        return [o for o in informer.store.list() if namespace is None or o.metadata.namespace == namespace]

    def _cache_state(self, scope: _Scope, namespace: str | None) -> State:
        return {
            key: (uid, rv, _fingerprint(o.metadata.labels, o.metadata.annotations))
            for o in self._view(scope, namespace)
            for key, uid, rv in [_entry(o)]
        }

    def check_state(self, truth: dict[str, State]) -> None:
        v = self.report.violations
        for name, (scope, log) in self.logs.items():
            want = truth[name]
            have = self._cache_state(scope, log.namespace)
            if "/sync" in name and log.namespace is None:
                _diff(v, f"cache {scope.name}", want, have)
                self.report.objects[scope.name] = len(have)
            state, problems = log.replay()
            v.extend(problems[:20])
            if len(problems) > 20:
                v.append(f"{name}: {len(problems) - 20} more ordering violations")
            _diff(v, f"handler log {name} replayed", {k: x[:2] for k, x in want.items()}, state)
            self.report.handler_events[name] = len(log.events)
        for informer in self.informers():
            state, _ = informer.state()
            if state != "current":
                v.append(f"{informer.name}: state {state!r} after convergence ({informer.last_error})")

    def check_requests(self, quiet_start: float, quiet_end: float) -> None:
        v = self.report.violations
        requests = [r for r in self.server.requests if r.verb in ("list", "watch")]
        by_path: dict[str, list[RecordedRequest]] = defaultdict(list)
        for r in requests:
            by_path[r.path].append(r)
        self.report.unauthorized = sum(1 for r in requests if not r.user)
        s = self.s
        for scope in SCOPES:
            reqs = by_path.get(scope.path, [])
            counts: Counter[str] = Counter(r.verb for r in reqs)
            counts["relist"] = max(0, sum(1 for r in reqs if r.verb == "list" and "continue" not in r.query) - 1)
            counts["rewatch"] = max(0, counts["watch"] - 1)
            self.report.requests[scope.name] = counts
            most = most_in_window([r.time for r in reqs], s.hot_window)
            self.report.max_window[scope.name] = most
            if most > s.hot_limit:
                v.append(
                    f"{scope.name}: hot loop: {most} LIST/WATCH requests within {s.hot_window}s (limit {s.hot_limit})"
                )
            # fault-free time: only re-watches at the watch timeout, no LIST
            quiet = [r for r in reqs if quiet_start <= r.time <= quiet_end]
            rate = len(quiet) / max(quiet_end - quiet_start, 1e-9)
            self.report.quiet_rate[scope.name] = rate
            allowed = 2 + (quiet_end - quiet_start) / s.watch_timeout
            if len(quiet) > allowed or any(r.verb == "list" for r in quiet):
                v.append(
                    f"{scope.name}: {len(quiet)} requests ({Counter(r.verb for r in quiet)}) in "
                    f"{quiet_end - quiet_start:.1f}s of fault-free time (at most {allowed:.1f} watches)"
                )
            for ep in self.episodes:
                v.extend(episode_violations(scope.name, scope.path, ep, reqs, s))

    def check_threads(self, baseline: set[threading.Thread], prefix: str, what: str) -> None:
        leftover = [t for t in threading.enumerate() if t not in baseline and t.name.startswith(prefix)]
        for t in leftover:
            t.join(5.0)
        alive = [t.name for t in leftover if t.is_alive()]
        if alive:
            self.report.violations.append(f"threads left after {what}: {alive}")


def most_in_window(times: list[float], window: float) -> int:
    """The most of ``times`` (sorted) that fall within any ``window`` seconds: the hot-loop figure."""
    most, j = 0, 0
    for i, t in enumerate(times):
        while times[j] < t - window:
            j += 1
        most = max(most, i - j + 1)
    return most


def episode_violations(name: str, path: str, ep: Episode, reqs: list[RecordedRequest], s: ChaosSettings) -> list[str]:
    """What one informer's LIST/WATCH requests (``reqs``, oldest first) did wrong around one fault."""
    v: list[str] = []
    inside = [r for r in reqs if ep.start <= r.time <= ep.end]
    if ep.kind in REWATCH_ONLY and any(r.verb == "list" for r in inside):
        before = [r for r in reqs if r.verb == "watch" and r.time < ep.start]
        # A watch cut younger than min_watch_duration is "very short": backing off and relisting is right.
        young = bool(before) and ep.start - before[-1].time < s.min_watch_duration + 0.05
        if not young:
            v.append(
                f"{name}: relist after {ep.kind} at {ep.start:.3f} where a re-watch was enough: "
                f"{_excerpt(reqs, ep.start)}"
            )
    if ep.kind == "watch_429" and ep.target == path:
        rejected = next((r for r in reqs if r.verb == "watch" and r.time >= ep.start), None)
        following = next((r for r in reqs if rejected is not None and r.time > rejected.time), None)
        if rejected is None or following is None:
            v.append(f"{name}: watch_429 at {ep.start:.3f}: no rejected watch and retry in the log")
        else:
            if following.time - rejected.time < s.retry_after - 0.02:
                v.append(
                    f"{name}: Retry-After {s.retry_after}s not honoured: retried after "
                    f"{following.time - rejected.time:.3f}s"
                )
            if following.verb != "watch":
                v.append(f"{name}: a 429 on a watch was followed by a {following.verb}, not a re-watch")
    return v


def _diff(v: list[str], what: str, want: dict[Key, Any], have: dict[Key, Any]) -> None:
    missing = sorted(set(want) - set(have))
    extra = sorted(set(have) - set(want))
    stale = sorted(k for k in set(want) & set(have) if want[k] != have[k])
    if missing or extra or stale:
        v.append(
            f"{what}: {len(missing)} missing {missing[:5]}, {len(extra)} extra {extra[:5]}, "
            f"{len(stale)} stale {[(k, want[k][1], have[k][1]) for k in stale[:5]]}"
        )


def _excerpt(reqs: list[RecordedRequest], t: float) -> str:
    near = [r for r in reqs if t - 0.5 <= r.time <= t + 2.0][:8]
    return "; ".join(f"{r.time - t:+.3f}s {r.verb.upper()} rv={r.query.get('resourceVersion', '-')}" for r in near)


def run_chaos(settings: ChaosSettings, workdir: Path) -> ChaosReport:
    """Run one seeded chaos soak in ``workdir`` (kubeconfig, token file) and check it; never raises on a
    violation (they are in the report), only on a harness error."""
    started = time.monotonic()
    baseline = set(threading.enumerate())
    run = _Run(settings, workdir)
    report = run.report
    run.build()
    try:
        with run.all_ns, run.one_ns:
            run.drive()
            report.events = run.writer.count
            run.server.clear_faults()
            quiet_at = time.monotonic()
            truth = {name: scope.server_state(run.server, log.namespace) for name, (scope, log) in run.logs.items()}
            ok = run.wait_until(lambda: run.converged(truth), settings.converge_timeout, tick=0.05)
            report.convergence_s = time.monotonic() - quiet_at
            if not ok:
                report.violations.append(f"not converged {settings.converge_timeout}s after the server went quiet")
            run.check_state(truth)
            quiet_start = time.monotonic()
            run.stop.wait(settings.quiet_window)  # fault-free observation time (nothing to wait for)
            quiet_end = time.monotonic()
            run.check_requests(quiet_start, quiet_end)
        run.check_threads(baseline, "cloudcoil", "the scopes exited")
    finally:
        run.all_ns.close()
        run.one_ns.close()
        run.loop.stop()
        run.server.stop()
    run.check_threads(baseline, "", "the harness stopped")
    report.wall_s = time.monotonic() - started
    report.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return report


def format_report(report: ChaosReport) -> str:
    """The figures of one run, as printed by benchmarks/chaos.py and on a failing test."""
    lines = [
        f"seed {report.seed}: {report.events} events, {sum(report.faults.values())} faults, "
        f"wall {report.wall_s:.1f}s, peak RSS {report.peak_rss_mb:.0f} MB, "
        f"converged {report.convergence_s:.2f}s after quiet, {len(report.violations)} violations",
        "  faults: " + ", ".join(f"{k} {n}" for k, n in sorted(report.faults.items())),
        f"  401s answered: {report.unauthorized}",
        "  longest recovery per fault (s): " + ", ".join(f"{k} {t:.2f}" for k, t in sorted(report.recovery_s.items())),
    ]
    for name, counts in report.requests.items():
        lines.append(
            f"  {name}: {report.objects.get(name, 0)} objects, {counts['list']} LIST "
            f"({counts['relist']} relists), {counts['watch']} WATCH ({counts['rewatch']} re-watches), "
            f"max {report.max_window.get(name, 0)} req/s window, "
            f"{report.quiet_rate.get(name, 0):.2f} req/s fault-free"
        )
    lines.append("  handler events: " + ", ".join(f"{k} {n}" for k, n in sorted(report.handler_events.items())))
    lines.extend(f"  VIOLATION: {v}" for v in report.violations[:40])
    return "\n".join(lines)
