"""A controller's run: its informers, then its workers while leading — a run group of two members."""

from __future__ import annotations

import threading
import time
from typing import Any

from cloudcoil_cache._runnable import Group, Step
from cloudcoil_cache.caching import HandlerHandle
from cloudcoil_cache.client import Config, current_config
from cloudcoil_cache.controller._informers import InformerSet, Scope, Source
from cloudcoil_cache.controller._keys import key_of
from cloudcoil_cache.controller._kinds import bind_kinds
from cloudcoil_cache.controller._priorities import EventPriorities
from cloudcoil_cache.controller._queue import Priority
from cloudcoil_cache.controller._shard_labels import and_selectors
from cloudcoil_cache.controller._workers import Workers

__all__ = ["ControllerRun"]


class ControllerRun(Group):
    """What a started ``Controller`` runs: ``informers`` (started first, synced) and ``workers``
    (started while leading; stopped first, bounded by the controller's ``shutdown_timeout``).

    The ``Controller`` is the declaration (kinds, scope, reconcile function); this is its run state.
    ``start()``/``close()`` are the standalone controller's; a ``Manager`` puts ``informers`` and
    ``workers`` in its own group, in its own order (every controller's informers, then the webhooks,
    then the workers while this replica leads).
    """

    def __init__(self, controller: Any) -> None:
        # the declaration (a ``Controller``: it imports this module, so not named here)
        self._decl = controller
        self._run_lock = threading.Lock()  # guards the run state below
        self._informer_set: InformerSet | None = None
        self._handles: list[HandlerHandle] = []
        self._workers: Workers | None = None
        self.synced = threading.Event()  # the informers are synced (wait_ready)
        self.finished = True  # whether the last stop of the workers ended them in time
        self.informers = Step(
            f"controller {controller.name} informers",
            start=lambda: self.start_informers(None),
            stop=self.stop_informers,
            ready=self.synced.is_set,
        )
        self.workers = Step(
            f"controller {controller.name} workers",
            start=self.start_workers,
            stop=lambda: None,  # its join stops it (within what is left of the group's deadline)
            join=self._join_workers,
            ready=lambda: self._workers is not None,
            threads=self.threads,
        )
        super().__init__(f"controller {controller.name}", [self.informers, self.workers])

    def use_ring(self, ring: Any) -> None:
        """Sharded by ``ring`` (a ``Ring``): run standalone, the members are the informers, the ring
        (its members and the sharder), then the workers while this replica holds its shard Lease
        (released at the stop, after the workers ended). A Manager runs the same parts in its own group."""
        lease = ring.lease

        def start_ring() -> None:
            ring._start(self._decl.config or current_config())

        def campaign() -> None:
            started = threading.Event()

            def start_workers() -> None:
                self.start_workers()
                started.set()

            lease._start(self._decl.config or current_config(), started=start_workers, stopped=self.lease_lost)
            # a standalone start returns with the workers running, as an unsharded one does (the first
            # acquisition of a replica's own Lease is at once, unless its previous holder has not released it)
            if started.wait(lease.lease_duration + lease.retry_period):
                # and with this replica in its own view of the ring (its Lease seen by the member informer),
                # so that status() and the labels of a reconcile's creates count it from the first pass
                ring.membership.wait_for(lambda r: ring.identity in r.members, lease.lease_duration)

        release = Step(
            f"shard lease {ring.name}",
            stop=lambda: lease._stop(release=True) if lease.threads() else None,
            threads=lease.threads,
        )
        ring_step = Step(f"ring {ring.name}", start=start_ring, stop=ring._stop, threads=ring.threads)
        self.workers = Step(
            f"controller {self._decl.name} workers",
            start=campaign,
            stop=lease._begin_shutdown,
            join=self._join_workers,
            ready=lambda: self._workers is not None,
            threads=self.threads,
        )
        with self._lock:
            self._members = [release, self.informers, ring_step, self.workers]

    def lease_lost(self) -> None:
        """The shard Lease (or the leader's) is lost: fence the reconciles in flight, stop the workers."""
        self.leadership_lost()
        self.stop_workers()

    # ----------------------------------------------------------- informers
    @property
    def started(self) -> bool:
        return self._informer_set is not None

    @property
    def sources(self) -> dict[Any, Source]:
        informers = self._informer_set
        return dict(informers.sources) if informers is not None else {}

    def start_informers(
        self, config: Config | None = None, *, sync_timeout: float = 30.0, cancel: threading.Event | None = None
    ) -> None:
        """Create the informers (shared with ``config.cache`` where it has the same ones), register the
        event handlers and wait for every informer's sync. Raises the informer's error on failure.
        Setting ``cancel`` (a Manager's stop) ends the wait: the informers are stopped again."""
        decl = self._decl
        decl._reconciler = decl._flow.reconciler(decl._reconciler, decl.name)
        with self._run_lock:
            if self._informer_set is not None:
                return
        config = decl.config or config or current_config()
        # a dynamic kind learns its plural and scope now (discovery: I/O, outside the lock); one the
        # server does not serve fails the start with the client's ConfigError
        bind_kinds([decl.kind, *decl._owned, *(k for k, _ in decl._watches)], config)
        with self._run_lock:
            if self._informer_set is not None:
                return
            decl.config = config
            namespace = decl._scope_namespace(config)
            decl._primary_namespace = namespace if decl.kind.namespaced else None
            ring = decl.sharding
            shard = ring.selector() if ring is not None else None  # (None in the ring's fallback mode)
            scopes = [Scope(decl.kind, decl._primary_namespace, and_selectors(decl.label_selector, shard), shard)]
            scopes += [Scope(k, namespace if k.namespaced else None, shard, shard) for k in decl._owned]
            scopes += [Scope(k, namespace if k.namespaced else None) for k, _ in decl._watches]
            informers = InformerSet(
                decl.name, config, scopes, resync_period=decl.resync_period, sync_timeout=sync_timeout
            )
            self._informer_set = informers
        try:
            decl._add_indexes(informers.sources)  # ctl.index(): on the caches, before the informers list
            started = informers.start(cancel)
        except BaseException:
            self.stop_informers()
            raise
        if not started:  # cancelled
            self.stop_informers()
            return
        primary = informers.sources.get(decl.kind)
        if ring is not None and ring.labels and primary is not None and not primary.shared:
            primary.config.create_labels = ring.child_labels(decl)  # (the controller's own Config, never yours)
        self.synced.set()
        decl.logger.info(
            "controller %s: informers synced (%s)",
            decl.name,
            ", ".join(s.describe() + (" shared" if s.shared else "") for s in informers.sources.values()),
        )

    def stop_informers(self) -> None:
        self.synced.clear()
        with self._run_lock:
            informers, self._informer_set = self._informer_set, None
        if informers is not None:
            informers.stop()
            informers.close()

    # -------------------------------------------------------------- workers
    @property
    def running(self) -> Workers | None:
        """The current run's workers (None: not leading, or stopped)."""
        return self._workers

    def start_workers(self) -> None:
        """Start a run: a new queue, ``workers`` threads, and the event handlers that queue every
        cached primary (their replay) and then what changes."""
        decl = self._decl
        informers = self._informer_set
        if informers is None:
            raise RuntimeError(f"controller {decl.name!r}: start the informers first")
        with self._run_lock:
            if self._workers is not None:
                return
            assert decl._reconciler is not None  # (checked when the informers started)
            workers = Workers(
                decl.name,
                decl.kind,
                decl._reconciler,
                count=decl.workers,
                context=informers.context_for(decl._write_config()),
                sources=lambda: self.sources,
                in_scope=decl.in_scope,
                observer=lambda: decl.observer,
                logger=decl.logger,
                reconcile_timeout=decl.reconcile_timeout,
                counts=decl._counts,
                around=decl._writes.around(decl._reconciler, decl._finalizers, decl.logger),
                needs_loop=any(f.is_async for f in decl._finalizers.values()),
                admit=(lambda obj: ring.admit(decl, obj)) if (ring := decl.sharding) is not None else None,
            )
            self._workers = workers
        workers.start()
        handles = self.subscribe(workers)
        with self._run_lock:
            if self._workers is workers:
                self._handles, handles = handles, []
        for handle in handles:  # stopped meanwhile
            handle.remove(decl.shutdown_timeout)

    def subscribe(self, workers: Workers) -> list[HandlerHandle]:
        """Queue the keys of every event of every source into ``workers``' queue.

        The primary kind's registration replays each cached primary as an add, so this also queues
        every primary the run starts with, once (client-go's initial list: a queue filled beside
        the handlers would see the handlers' late initial adds re-queue keys a worker already
        took). The other kinds are registered first and without a replay: their cached objects
        would only queue again primaries the replay queues (each startup reconcile reads them), and
        a change of theirs made after their registration queues its primary again.
        """
        decl = self._decl

        ring = decl.sharding

        def handle(event: str, priority: int, *objs: Any) -> None:  # the mapping applies each path's predicates
            obj = objs[-1]
            if ring is not None and event != "delete" and isinstance(obj, decl.kind) and ring.draining(obj):
                workers.queue.add(key_of(obj), Priority.EVENT)  # a drain passes every predicate
            for key in decl._mapping.keys_for_event(event, objs):
                workers.queue.add(key, priority)

        sources = self.sources
        primary = sources.get(decl.kind)
        # the replay's adds (and resyncs) queue behind the watch's changes (see EventPriorities)
        priorities = EventPriorities(primary.view.list() if primary is not None else (), warm_restart=decl.warm_restart)

        def on_add(obj: Any) -> None:
            handle("add", priorities.add(obj), obj)

        def on_update(old: Any, new: Any) -> None:
            handle("update", priorities.update(old, new), old, new)

        def on_delete(obj: Any) -> None:
            handle("delete", priorities.delete(obj), obj)

        handles: list[HandlerHandle] = []
        try:
            for source in sources.values():
                if source is not primary:
                    handles += source.view.add_event_handler(on_add, on_update, on_delete, replay=False)
            if primary is not None:
                handles += primary.view.add_event_handler(on_add, on_update, on_delete)
        except BaseException:
            for registered in handles:
                registered.remove(0)
            raise
        return handles

    def stop_workers(self, timeout: float | None = None) -> bool:
        """Stop taking keys, wait up to ``timeout`` (default ``shutdown_timeout``) for reconciles in
        flight, join the workers, then remove the event handlers (what they queue meanwhile is
        dropped), waiting for a mapper in flight with the time left. False when something did not
        finish in time: coroutine reconciles are then cancelled; a plain function (a reconcile, a
        mapper) cannot be interrupted, its thread is left to end."""
        decl = self._decl
        timeout = decl.shutdown_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        with self._run_lock:
            workers, self._workers = self._workers, None
            handles, self._handles = self._handles, []
        done = workers is None or workers.stop(timeout)
        for handle in handles:
            # at least a moment: an idle lane's thread needs one to see the stop and end
            if not handle.remove(max(0.1, deadline - time.monotonic())):
                done = False
                decl.logger.warning("%s: an event mapper was still running at the stop; left to end", decl.name)
        if workers is not None:  # (a second stop of one run, as a lost Lease's then the group's, keeps the first's)
            self.finished = done
        return done

    def _join_workers(self, timeout: float | None) -> None:
        """The workers' member of a group: stopped within ``shutdown_timeout`` and what is left of the
        group's deadline, whichever ends first."""
        limit = self._decl.shutdown_timeout
        self.stop_workers(limit if timeout is None else min(limit, timeout))

    def leadership_lost(self) -> None:
        """The Manager's election stepped down: reconciles of the current run see ``LeadershipLost`` at
        their next ``ctx.check_leadership()`` (the workers are stopped next)."""
        workers = self._workers
        if workers is not None:
            workers.fence.lose()

    def threads(self) -> list[threading.Thread]:
        """The worker and event-loop threads of the current run."""
        with self._run_lock:
            return self._workers.threads() if self._workers is not None else []

    def close(self, timeout: float | None = None) -> list[Any]:
        """Stop the workers, then the informers (``Group.close``); a controller stopped before it
        started its workers stops its informers all the same."""
        late = super().close(timeout)
        if self._workers is not None:  # started by a Manager, outside this group's start()
            self._join_workers(timeout)
        if self._informer_set is not None:
            self.stop_informers()
        return late
