"""Controller defects a new-user pass found: keys outside the scope, requeues years away, own writes."""

from __future__ import annotations

import contextvars
import logging
import math
import threading

import pytest

from cloudcoil_cache.apimachinery import ObjectMeta, OwnerReference
from cloudcoil_cache.controller import Controller, Result
from cloudcoil_cache.controller._observe import ControllerObserver
from cloudcoil_cache.controller._workers import Reconciler, Workers
from cloudcoil_cache.errors import CacheUnavailableError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Secret


class _Failures(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "reconcile failed" in record.getMessage():
            self.messages.append(record.getMessage())


def _cm(name: str) -> dict:
    return {"metadata": {"name": name, "namespace": "default"}, "data": {"k": "v"}}


def test_a_key_outside_the_controllers_namespace_is_rejected_not_retried_forever(server, make_config):
    """enqueue("kube-system/x") on a controller of namespace "default" (or a mapper returning such a key)
    is accepted, then fails in every worker pass with a ValueError and is retried with backoff for ever
    (up to 1000 s apart), logging an ERROR each time."""
    server.create("configmaps", _cm("a"), "default")
    config = make_config(namespace="default", resources=[])
    ctl = Controller(ConfigMap, config=config, workers=1)
    later = threading.Event()

    @ctl.reconcile()
    def sync(cm):
        if cm.name == "later":
            later.set()

    failures = _Failures()
    logger = logging.getLogger("cloudcoil_cache.controller")
    logger.addHandler(failures)
    try:
        with ctl:
            try:
                ctl.enqueue("kube-system/elsewhere")
            except ValueError:
                pass  # rejecting it at once, typed, is fine
            server.create("configmaps", _cm("later"), "default")  # queued behind it: one worker, FIFO
            assert later.wait(10)
            stats = ctl.queue_stats()
    finally:
        logger.removeHandler(failures)
    assert stats is not None
    assert failures.messages == [] and stats.retries == 0, (failures.messages, stats)


def test_a_requeue_years_away_leaves_the_workers_running_and_an_infinite_one_is_refused(server, make_config):
    """Result(requeue_after=1e10) made the worker's next get() wait Condition.wait(1e10): OverflowError,
    the only worker died and the controller silently stopped reconciling. inf passed validation too."""
    with pytest.raises(ValueError, match="finite number of seconds"):
        Result(requeue_after=math.inf)
    server.create("configmaps", _cm("a"), "default")
    config = make_config(namespace="default", resources=[])
    ctl = Controller(ConfigMap, config=config, workers=1)
    reconciled: list[str] = []
    first = threading.Event()
    later = threading.Event()

    @ctl.reconcile()
    def sync(cm):
        reconciled.append(cm.name)
        first.set()
        if cm.name == "later":
            later.set()
        return Result(requeue_after=1e10)

    with ctl:
        # "a" asks for 1e10 s first: "later" is created once it did (a change created before the
        # start's replay of "a" is taken would go first: the queue serves changes before the replay)
        assert first.wait(10)
        server.create("configmaps", _cm("later"), "default")
        assert later.wait(10), reconciled  # the worker is still alive after "a" asked for 1e10 s
    # "a" first; a relist under load may reconcile "a" again before "later" (seen once: ['a', 'a', 'later'])
    assert reconciled[0] == "a" and "later" in reconciled, reconciled


def test_ctx_cached_sees_the_reconciles_own_create_of_an_owned_kind_on_the_next_pass(server, make_config):
    """README: ctx.cached "sees the reconcile's own writes on the next pass". With the primary informer
    shared with config.cache and the owned kind in the controller's own cache, the write goes through
    config (no note_write on the owned kind's cache): the next pass reads None and would create again."""
    server.create("configmaps", _cm("a"), "default")
    config = make_config(namespace="default", resources=[ConfigMap], namespaces=["default"])
    ctl = Controller(ConfigMap, config=config).owns(Secret)
    seen: list[object] = []
    recorded = threading.Event()

    @ctl.reconcile()
    def sync(cm, ctx):
        if not seen:
            owner = OwnerReference(
                api_version="v1", kind="ConfigMap", name=cm.name, uid=cm.metadata.uid, controller=True
            )
            Secret(metadata=ObjectMeta(name="a-secret", namespace="default", owner_references=[owner])).create()
            seen.append("created")
            return Result(requeue_after=0)  # the next pass at once
        if len(seen) == 1:
            try:
                seen.append(ctx.cached(Secret).get("a-secret"))
            except CacheUnavailableError as exc:  # "write not yet observed" is an honest answer too
                seen.append(exc)
            recorded.set()
        return None

    server.stall_watches()  # the watch delivers nothing: only read-your-writes can make the create visible
    try:
        with ctl:
            assert ctl.sources[ConfigMap].shared and not ctl.sources[Secret].shared  # the set-up under test
            assert recorded.wait(10)
    finally:
        server.resume_watches()
    assert seen[1] is not None, "ctx.cached(Secret).get() said the Secret this reconcile created does not exist"


def test_workers_stopped_before_their_threads_start_stop_cleanly_and_never_start():
    """The controller publishes a run's Workers under its lock and starts their threads after
    releasing it: a stop in between joined threads never started (RuntimeError)."""
    workers = Workers(
        "early-stop",
        object,
        Reconciler.of(lambda obj: None),
        count=2,
        context=contextvars.copy_context(),
        sources=dict,
        in_scope=lambda obj: True,
        observer=ControllerObserver,
        logger=logging.getLogger("test"),
    )
    assert workers.stop(1.0) is True
    workers.start()
    assert all(t.ident is None for t in workers.threads())
