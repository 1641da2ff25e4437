"""Controller over the fake API server: dedup, outcomes, owned and watched kinds, ctx.cached, shutdown."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from _controller_support import Calls

from cloudcoil_cache.apimachinery import ObjectMeta, OwnerReference
from cloudcoil_cache.controller import (
    CachedResources,
    Controller,
    Manager,
    Result,
    TerminalError,
    Wait,
)
from cloudcoil_cache.controller._observe import ControllerObserver
from cloudcoil_cache.errors import Forbidden
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Secret


class Results(ControllerObserver):
    """Records each reconcile's result label (the metrics seam)."""

    def __init__(self) -> None:
        self.calls = Calls()

    def reconciled(self, result: str, seconds: float) -> None:
        self.calls.add(result)


def test_one_key_is_never_reconciled_twice_at_once_and_its_burst_of_updates_collapses(config, fake_api_server, make_cm):
    make_cm("a", {"v": "0"})
    make_cm("b", {"v": "0"})
    ctl = Controller(ConfigMap, config=config, workers=3)
    gate = threading.Event()
    first_a = threading.Event()
    running: Counter[str] = Counter()
    overlaps: list[str] = []
    calls = Calls()
    lock = threading.Lock()

    @ctl.reconcile()
    def reconcile(cm):
        with lock:
            running[cm.name] += 1
            if running[cm.name] > 1:
                overlaps.append(cm.name)
        try:
            calls.add((cm.name, cm.data.get("v")))
            if cm.name == "a" and not first_a.is_set():
                first_a.set()
                assert gate.wait(20)  # slow: the updates below arrive while it runs
        finally:
            with lock:
                running[cm.name] -= 1

    with Manager(ctl, config=config):
        assert first_a.wait(10)
        for i in range(1, 101):
            fake_api_server.patch("configmaps", "a", {"data": {"v": str(i)}}, "default")
        fake_api_server.patch("configmaps", "b", {"data": {"v": "after"}}, "default")
        # "b" proceeds on another worker while "a" is still in its first reconcile; the handler lane
        # delivers events in order, so every update of "a" is queued by now.
        calls.wait(lambda c: ("b", "after") in c)
        assert [c for c in calls.snapshot() if c[0] == "a"] == [("a", "0")]
        gate.set()
        calls.wait(lambda c: ("a", "100") in c)
    a_calls = [c for c in calls.snapshot() if c[0] == "a"]
    assert a_calls == [("a", "0"), ("a", "100")]  # 100 updates while busy: processed exactly once more
    assert overlaps == []


def test_failures_retry_with_backoff_then_succeed(config, make_cm, sharding):
    make_cm("flaky")
    ctl = Controller(ConfigMap, config=config, sharding=sharding)
    ctl.observer = results = Results()
    attempts = Calls()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        attempts.add(ctx.retries)
        if ctx.retries < 4:
            raise RuntimeError("not yet")

    with ctl.start(config):
        results.calls.wait(lambda r: "success" in r)
        tried = attempts.snapshot()
        outcomes = results.calls.snapshot()
    # (a duplicate of the initial add may add a pass; the backoff still only grows until the success)
    first_success = outcomes.index("success")
    assert set(outcomes[:first_success]) == {"error"} and first_success >= 4
    tried = tried[: first_success + 1]
    assert tried[0] == 0 and tried[-1] == 4 and tried == sorted(tried)


def test_terminal_error_is_logged_and_not_retried(config, make_cm, caplog, sharding):
    make_cm("broken")
    ctl = Controller(ConfigMap, config=config, sharding=sharding)
    ctl.observer = results = Results()

    @ctl.reconcile()
    def reconcile(cm):
        raise TerminalError("bad spec: cannot be fixed by retrying")

    with ctl:
        results.calls.wait(lambda r: "error" in r)
        stats = ctl.queue_stats()
        assert (stats.waiting, stats.retries) == (0, 0)  # no retry scheduled
    assert set(results.calls.snapshot()) == {"error"}
    assert "default/broken: terminal error (not retried): bad spec" in caplog.text


def test_wait_requeues_after_its_delay_without_counting_a_failure(config, make_cm, sharding):
    make_cm("needs-dep")
    ctl = Controller(ConfigMap, config=config, sharding=sharding)
    ctl.observer = results = Results()
    seen = Calls()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        seen.add(ctx.retries)
        if len(seen.snapshot()) == 1:
            raise Wait("dependency missing", after=0.05)
        if len(seen.snapshot()) == 2:
            return Wait("still missing", after=0.05)  # returning it works too
        return None

    with ctl:
        results.calls.wait(lambda r: "success" in r)
    outcomes = results.calls.snapshot()
    assert outcomes[: outcomes.index("success")] == ["requeue_after", "requeue_after"]
    assert set(seen.snapshot()) == {0}  # no backoff counted


def test_result_requeue_after_and_periodic_every(config, make_cm):
    make_cm("periodic")
    ctl = Controller(ConfigMap, config=config)
    ctl.observer = results = Results()

    @ctl.reconcile(every=0.05)
    def reconcile(cm):
        if len(results.calls.snapshot()) == 0:
            return Result(requeue_after=0.01)

    with ctl:
        results.calls.wait(lambda r: len(r) >= 3)
    assert results.calls.snapshot()[:3] == ["requeue_after", "success", "success"]


def test_reconcile_gets_a_deep_copy_of_the_current_object_and_not_a_gone_one(
    config, fake_api_server, make_cm, sharding
):
    make_cm("doomed", {"v": "1"})
    ctl = Controller(ConfigMap, config=config, sharding=sharding)
    calls = Calls()
    gate = threading.Event()

    @ctl.reconcile()
    def reconcile(cm):
        cm.data["v"] = "edited locally"  # an editable copy: the cache is not touched
        calls.add(cm.name)
        gate.wait(10)

    with ctl:
        calls.wait(lambda c: c == ["doomed"])
        assert ctl.cached(ConfigMap).get("doomed").data == {"v": "1"}
        deleted = threading.Event()
        watcher = ctl.sources[ConfigMap].view.on_delete(lambda obj: deleted.set())
        fake_api_server.delete("configmaps", "doomed", "default")
        assert deleted.wait(10)  # the informer has applied the delete
        watcher.remove()
        make_cm("sentinel")
        gate.set()
        calls.wait(lambda c: "sentinel" in c)
    assert calls.snapshot() == ["doomed", "sentinel"]  # the delete queued "doomed": not called, it is gone


def test_owned_objects_map_to_their_controller_owner_by_uid(config, fake_api_server, make_cm, sharding):
    p1 = make_cm("p1", labels={"role": "parent"})
    p2 = make_cm("p2", labels={"role": "parent"})
    ctl = Controller(ConfigMap, config=config, sharding=sharding, label_selector="role=parent").owns(ConfigMap)
    calls = Calls()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        child = ctx.cached(ConfigMap).get("child")
        calls.add((cm.name, child.data if child is not None else None))

    with ctl:
        calls.wait(lambda c: {n for n, _ in c} == {"p1", "p2"})
        children = {
            "wrong-uid": make_cm("wrong-uid", owner=p1, uid=p2["metadata"]["uid"]),  # p1's name, p2's UID
            "not-controller": make_cm("not-controller", owner=p1, controller=False),
            "other-kind": make_cm("other-kind", owner={**p1, "kind": "Secret"}),
            "other-group": make_cm("other-group", owner={**p1, "apiVersion": "apps/v1"}),
            "child": make_cm("child", owner=p2),
        }
        cached = ctl.cached(ConfigMap)
        calls.wait(lambda c: ("p2", {}) in c)  # the child's add queued p2, which now sees it
        for name in children:
            assert ctl.keys_for(cached.get(name)) == (["default/p2"] if name == "child" else []), name
        assert ctl.keys_for(cached.get("p1")) == ["default/p1"]  # a primary queues itself
        fake_api_server.patch("configmaps", "child", {"data": {"x": "1"}}, "default")
        calls.wait(lambda c: ("p2", {"x": "1"}) in c)  # an update of the child queues its owner
        fake_api_server.delete("configmaps", "p2", "default")
        fake_api_server.patch("configmaps", "child", {"data": {"x": "2"}}, "default")
        make_cm("sentinel", labels={"role": "parent"})
        calls.wait(lambda c: "sentinel" in {n for n, _ in c})
        assert ctl.keys_for(cached.get("child")) == []  # its owner is gone: nothing to queue
    # children are not primaries (no role=parent label): never reconciled themselves
    assert {n for n, _ in calls.snapshot()} == {"p1", "p2", "sentinel"}


def test_mapper_errors_are_logged_and_never_stop_the_controller(config, fake_api_server, make_cm, caplog):
    make_cm("target")
    ctl = Controller(ConfigMap, config=config)
    calls = Calls()
    mapped = Calls()

    @ctl.watch(Secret)
    def secret_to_configmap(secret):
        secret.metadata.labels = {"edited": "yes"}  # a copy: editable
        mapped.add(secret.metadata.name)
        if secret.metadata.name.startswith("bad"):
            raise KeyError("no target annotation")
        return f"default/{secret.metadata.annotations['target']}"

    @ctl.reconcile()
    def reconcile(cm, ctx):
        calls.add((cm.name, ctx.cached(Secret).get("good") is not None))

    with ctl:
        calls.wait(lambda c: ("target", False) in c)
        fake_api_server.create("secrets", {"metadata": {"name": "bad-1"}}, "default")
        fake_api_server.create(
            "secrets", {"metadata": {"name": "good", "annotations": {"target": "target"}}}, "default"
        )
        calls.wait(lambda c: ("target", True) in c)  # the mapper queued it after failing on bad-1
        assert ctl.cached(Secret).get("good").metadata.labels is None  # the mapper's edit stayed in its copy
        assert ctl.keys_for(ctl.cached(Secret).get("bad-1")) == []
    assert mapped.snapshot()[:2] == ["bad-1", "good"]
    assert "mapper" in caplog.text and "default/bad-1" in caplog.text and "KeyError" in caplog.text


def test_ctx_cached_reads_deep_copies_of_declared_kinds_only(config, make_cm):
    make_cm("one", {"k": "v"}, labels={"app": "x", "tier": "a"})
    make_cm("two", labels={"app": "x", "tier": "b"})
    ctl = Controller(ConfigMap, config=config).watch(Secret, lambda s: None)
    out: dict[str, object] = {}
    done = threading.Event()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        if cm.name != "one":
            return
        cached = ctx.cached(ConfigMap)
        out["type"] = type(cached)
        got = cached.get("one")
        got.data["k"] = "changed"
        out["again"] = cached.get("one").data["k"]
        out["missing"] = cached.get("nope")
        out["tier_b"] = [c.name for c in cached.list(labels={"tier": "b"})]
        out["all"] = sorted(c.name for c in cached.list(all_namespaces=True))
        out["secrets"] = ctx.cached(Secret).list()
        try:
            ctx.cached(type(cm).__mro__[0].__class__)  # not a declared kind
        except Exception as exc:
            out["bad"] = exc
        try:
            from cloudcoil_cache.models.kubernetes.core.v1 import Pod

            ctx.cached(Pod)
        except ValueError as exc:
            out["pod"] = str(exc)
        out["key"] = (ctx.key, ctx.namespace, ctx.name, ctx.config is not None)
        done.set()

    with ctl:
        assert done.wait(10)
    assert out["type"] is CachedResources
    assert out["again"] == "v" and out["missing"] is None
    assert out["tier_b"] == ["two"] and out["all"] == ["one", "two"] and out["secrets"] == []
    assert "Pod" in out["pod"] and "ConfigMap" in out["pod"] and "Secret" in out["pod"]
    assert out["key"] == ("default/one", "default", "one", True)


def test_read_your_own_write_through_ctx_cached_on_the_next_pass(config, make_cm, sharding, fake_api_server):
    """(Sharded, the plain create of the child carries its owner's shard label: the replica's cache,
    which selects that label, sees it on the next pass.)"""
    make_cm("parent", {"x": "1"})
    ctl = Controller(ConfigMap, config=config, label_selector=None, sharding=sharding).owns(ConfigMap)
    passes = Calls()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        if cm.name != "parent":
            return None
        child = ctx.cached(ConfigMap).get("parent-child")
        passes.add(child.data if child is not None else None)
        if child is None:
            ConfigMap(
                metadata=ObjectMeta(
                    name="parent-child",
                    namespace="default",
                    owner_references=[
                        OwnerReference(
                            api_version="v1", kind="ConfigMap", name="parent", uid=cm.metadata.uid, controller=True
                        )
                    ],
                ),
                data={"copy": "yes"},
            ).create()
            return Result(requeue_after=0)  # the next pass comes at once, not from the child's event
        return None

    with ctl:
        passes.wait(lambda p: len(p) >= 2)
    assert passes.snapshot()[:2] == [None, {"copy": "yes"}]


def test_coroutine_reconcile_runs_on_the_controllers_event_loop(config, make_cm):
    import asyncio

    make_cm("async-one", {"v": "1"})
    ctl = Controller(ConfigMap, config=config)
    seen = Calls()

    @ctl.reconcile()
    async def reconcile(cm, ctx):
        await asyncio.sleep(0)
        live = await ConfigMap.async_get(cm.name, namespace="default")  # through the active Config
        seen.add((live.data, threading.current_thread().name))

    with ctl:
        seen.wait(lambda s: len(s) >= 1)
    data, thread = seen.snapshot()[0]
    assert data == {"v": "1"} and thread == "controller-configmap-loop"


def test_informers_are_shared_with_config_cache_when_it_has_the_same_one(fake_kubeconfig, fake_api_server, make_cm):
    from cluster_support import FAST

    from cloudcoil_cache.caching import Cache
    from cloudcoil_cache.client import Config

    make_cm("shared")
    user = Config(
        kubeconfig=str(fake_kubeconfig),
        namespace="default",
        cache=Cache(resources=[ConfigMap], namespaces=["default"], tuning=FAST),
    )
    try:
        ctl = Controller(ConfigMap, config=user, namespace="default").owns(Secret)
        calls = Calls()
        ctl.reconcile(lambda cm: calls.add(cm.name))
        with ctl:
            calls.wait(lambda c: "shared" in c)
            assert ctl.sources[ConfigMap].shared and ctl.sources[ConfigMap].config is user
            assert not ctl.sources[Secret].shared  # not in the user's cache: one of the controller's own
            fake_api_server.wait_for_watches(2)
            watches = sorted(r.path for r in fake_api_server.requests if r.verb == "watch")
            assert watches == ["/api/v1/namespaces/default/configmaps", "/api/v1/namespaces/default/secrets"]
    finally:
        user.close()


def test_a_sync_failure_fails_the_start_at_once_with_the_informers_error(config, fake_api_server):
    fake_api_server.fail_next(1000, 403, verb="list", path="configmaps")
    ctl = Controller(ConfigMap, config=config)
    ctl.reconcile(lambda cm: None)
    manager = Manager(ctl, config=config)
    with pytest.raises(Forbidden):
        manager.start()
    assert not ctl.running and manager.threads() == []


def test_graceful_shutdown_finishes_the_reconcile_in_flight_and_joins_every_thread(config, make_cm):
    make_cm("slow")
    ctl = Controller(ConfigMap, config=config, workers=2, shutdown_timeout=10)
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()

    @ctl.reconcile()
    def reconcile(cm):
        entered.set()
        release.wait(10)
        finished.set()

    manager = Manager(ctl, config=config, health_port=0)
    manager.start()
    assert entered.wait(10)
    threads = manager.threads()
    assert len(threads) == 3 and all(t.is_alive() for t in threads)  # two workers and the health server
    stopper = threading.Thread(target=manager.stop)
    stopper.start()
    stopper.join(0.2)  # stop waits for the reconcile in flight
    assert stopper.is_alive() and not finished.is_set()
    release.set()
    stopper.join(10)
    assert finished.is_set()
    assert not any(t.is_alive() for t in threads) and manager.threads() == []


def test_shutdown_timeout_bounds_the_wait_for_a_stuck_coroutine_reconcile(config, make_cm, sharding):
    import asyncio

    make_cm("stuck")
    ctl = Controller(ConfigMap, config=config, shutdown_timeout=0.1, sharding=sharding)
    entered = threading.Event()
    cancelled = threading.Event()

    @ctl.reconcile()
    async def reconcile(cm):
        entered.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    ctl.start(config)
    assert entered.wait(10)
    threads = ctl.threads()
    assert ctl.stop() is False  # it did not finish within shutdown_timeout: cancelled
    assert cancelled.is_set() and not any(t.is_alive() for t in threads)


def test_declaration_errors_are_typed_and_named():
    with pytest.raises(TypeError, match="not a resource class"):
        Controller(object)
    with pytest.raises(ValueError, match="mutually exclusive"):
        Controller(ConfigMap, namespace="a", all_namespaces=True)
    with pytest.raises(ValueError, match="workers"):
        Controller(ConfigMap, workers=0)
    with pytest.raises(ValueError):
        Controller(ConfigMap, label_selector="a in (")
    with pytest.raises(ValueError, match="every"):
        Controller(ConfigMap).reconcile(every=0)
    with pytest.raises(TypeError, match="must take the object"):
        Controller(ConfigMap, reconcile=lambda: None)
    with pytest.raises(ValueError, match="unique"):
        Manager(Controller(ConfigMap), Controller(ConfigMap))
    with pytest.raises(RuntimeError, match="no reconcile function"):
        Controller(ConfigMap).start()


def test_the_controllers_cached_reads_have_a_name_of_their_own():
    from cloudcoil_cache import caching, controller

    assert controller.CachedKind is controller.CachedResources  # the old name stays importable
    assert controller.CachedKind is not caching.CachedResources  # cloudcoil's, with another contract


@pytest.mark.parametrize("leadership", ["controller", "manager"])
def test_the_first_sync_reconciles_each_object_once(config, fake_api_server, make_cm, leadership):
    # Every cached object is queued once when the workers start: by the handlers' replay of the
    # cache, never also by a loop beside them whose keys the handlers' late initial adds queue again.
    names = [f"cm-{i:04d}" for i in range(600)]
    for name in names:
        make_cm(name)
    ctl = Controller(ConfigMap, config=config, workers=1)  # one worker: keys are taken in queue order
    calls = Calls()

    @ctl.reconcile()
    def reconcile(cm):
        calls.add(cm.name)

    with Manager(ctl, config=config) if leadership == "manager" else ctl:
        calls.wait(lambda c: len(set(c)) == len(names))
        make_cm("last")  # its add follows every initial add in the lane; its key, every key they queued
        calls.wait(lambda c: "last" in c)
    counts = Counter(calls.snapshot())
    assert {name: n for name, n in counts.items() if n != 1} == {}


def test_the_first_sync_reconciles_a_primary_once_however_many_watched_objects_map_to_it(
    config, fake_api_server, make_cm
):
    # Only the primary kind's registration replays the cache: a watched kind's cached objects would
    # queue their primary again after a worker took it (each startup reconcile reads them anyway).
    make_cm("p")
    make_cm("last")
    for i in range(400):
        fake_api_server.create("secrets", {"metadata": {"name": f"s-{i:03d}"}}, "default")
    ctl = Controller(ConfigMap, config=config, workers=1)  # one worker: keys are taken in queue order
    calls = Calls()

    @ctl.watch(Secret)
    def owner_of(secret):
        return "default/last" if secret.name == "barrier" else "default/p"

    @ctl.reconcile()
    def reconcile(cm):
        calls.add(cm.name)

    with ctl:
        calls.wait(lambda c: {"p", "last"} <= set(c))
        # on the Secrets' lane, after anything a replay would have queued: p's key before last's
        fake_api_server.create("secrets", {"metadata": {"name": "barrier"}}, "default")
        calls.wait(lambda c: c.count("last") == 2)
        assert calls.snapshot().count("p") == 1
        fake_api_server.create("secrets", {"metadata": {"name": "s-new"}}, "default")  # a change still maps
        calls.wait(lambda c: c.count("p") == 2)


def test_stopping_waits_for_a_busy_event_mapper_only_up_to_the_shutdown_timeout(config, fake_api_server, make_cm):
    make_cm("p")
    ctl = Controller(ConfigMap, config=config, shutdown_timeout=0.2)
    in_mapper, release = threading.Event(), threading.Event()

    @ctl.watch(Secret)
    def owner_of(secret):
        in_mapper.set()
        release.wait(60)  # a live call hanging (a partition: why a replica loses its lease)
        return "default/p"

    @ctl.reconcile()
    def reconcile(cm):
        pass

    ctl.start()
    try:
        fake_api_server.create("secrets", {"metadata": {"name": "slow"}}, "default")
        assert in_mapper.wait(10)
        stopper = threading.Thread(target=ctl.stop, name="test-controller-stop")
        stopper.start()
        stopper.join(30)  # the mapper is still blocked: only the timeouts can end the stop
        assert not stopper.is_alive()
        assert not ctl.running
    finally:
        release.set()
        stopper.join(30)
