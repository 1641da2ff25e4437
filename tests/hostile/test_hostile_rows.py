"""The hostile-server table (issue 20): one row per way a server can lie, and what ``status()`` shows.

Each row scripts a real server on loopback; the reflector's waits run on a ``FakeClock`` that the
test advances one backoff at a time (socket timeouts stay real, and short).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from _hostile_server import Exchange, HostileServer, bookmark_line, event_line, filler, pod

from cloudcoil_cache.caching import Backoff, InformerStatus
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CacheUnavailableError
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeClock

GARBAGE_RV = "not-a-resource-version!"


def status(config: Config) -> InformerStatus:
    cache = config.cache
    assert cache is not None
    (informer,) = cache.status().informers
    return informer


def backing_off(clock: FakeClock, config: Config) -> InformerStatus:
    """Wait until the reflector sits in a backoff wait on the fake clock; its status then."""
    assert clock.wait_for_sleepers(1), "the reflector never went into a backoff wait"
    st = status(config)
    assert st.next_retry_in is not None and st.next_retry_in > 0
    return st


def retry(clock: FakeClock, config: Config, server: HostileServer, verb: str) -> float:
    """Advance the clock past the current backoff wait; returns its length once the retry (a
    request of ``verb``) reached the server."""
    delay = backing_off(clock, config).next_retry_in
    assert delay is not None
    seen = server.count(verb)
    clock.advance(delay + 0.001)
    server.wait_for(lambda s: s.count(verb) > seen)
    return delay


def wait_state(config: Config, state: str, timeout: float = 10.0) -> None:
    cache = config.cache
    assert cache is not None
    with cache._sync_cond:  # notified at every change of an informer's health
        assert cache._sync_cond.wait_for(lambda: status(config).state == state, timeout), status(config)


def list_ok(*items: dict[str, Any], rv: int = 10) -> Any:
    return lambda ex: ex.reply_list(list(items) or [pod("pod-0", rv)], rv)


def names(config: Config) -> set[Any]:
    return {p.metadata.name for p in Pod.list(namespace="default")}


# ------------------------------------------------------------------ hot loops and poisoned state


def test_row1_watches_ending_after_one_bookmark_back_off_and_turn_stale(hostile, cached, clock, tuned):
    """Before: 357-800 watch requests/s, `current`, nothing in status(). After: a backoff step per
    empty watch, `degraded` naming the empty watch, `stale` past max_staleness, no relist."""

    def on_watch(ex: Exchange) -> None:
        ex.start_chunked()
        ex.chunk(bookmark_line(10))  # confirms the RV the informer has: no progress
        ex.end_chunks()

    server = hostile(list_ok(), on_watch)
    config = cached(server, tuned())
    with config:
        started = clock.now()
        st = backing_off(clock, config)
        assert st.state == "degraded" and "EmptyWatchError" in (st.last_error or "")
        assert server.count("watch") == 1  # waiting, not re-watching
        delays = []
        while clock.now() - started <= 5:
            assert status(config).state == "degraded"
            delays.append(retry(clock, config, server, "watch"))
        st = backing_off(clock, config)
        assert st.state == "stale" and st.seconds_since_current is not None and st.seconds_since_current > 5
        # doubling; the second's jitter capped within the last half of what is left before
        # max_staleness (itself jittered), the third capped to its base
        assert delays == pytest.approx([1.5, 2.62425, 4.0], abs=1e-3)
        assert server.count("watch") == 4 and server.count("list") == 1
        with pytest.raises(CacheUnavailableError, match="stale"):
            Pod.list(namespace="default")


def test_row2_a_garbage_bookmark_rv_is_dropped_and_never_asked_for(hostile, cached, clock, tuned):
    """Before: every relist asked for the garbage RV and got 400, `stale` forever. After: the
    bookmark is dropped (counted in status), the next watch resumes from the last real RV."""

    def on_watch(ex: Exchange) -> None:
        if not ex.query["resourceVersion"].isdigit():
            ex.reply_status(400, "BadRequest", f"invalid resourceVersion {ex.query['resourceVersion']!r}")
            return
        ex.start_chunked()
        if ex.query["resourceVersion"] == "10":
            ex.chunk(bookmark_line(GARBAGE_RV))
            ex.chunk(event_line("MODIFIED", pod("pod-0", 11)))
            ex.end_chunks()
            return
        ex.hold()

    server = hostile(list_ok(), on_watch)
    config = cached(server, tuned())
    with config:
        server.wait_for(lambda s: s.count("watch") >= 2)  # progress: re-watched at once
        second = server.of("watch")[1]
        assert second.query["resourceVersion"] == "11"
        st = status(config)
        assert st.refused_events == 1 and st.resource_version == "11"
        assert all(r.query.get("resourceVersion") != GARBAGE_RV for r in server.requests)


def test_row2_a_relist_refused_with_400_at_a_garbage_rv_starts_fresh(hostile, cached, clock, tuned):
    """An object whose RV is garbage moves the informer there; the 400 the relist gets at it makes
    the next LIST a consistent one at "" (before: that 400 repeated forever)."""
    watches = []

    def on_list(ex: Exchange) -> None:
        if ex.query.get("resourceVersion", "").strip("0") and not ex.query["resourceVersion"].isdigit():
            ex.reply_status(400, "BadRequest", "invalid resourceVersion")
            return
        ex.reply_list([pod("pod-0", 12)], 12)

    def on_watch(ex: Exchange) -> None:
        watches.append(ex.query["resourceVersion"])
        if not ex.query["resourceVersion"].isdigit():
            ex.reply_status(400, "BadRequest", "invalid resourceVersion")
            return
        ex.start_chunked()
        if len(watches) == 1:
            ex.chunk(event_line("MODIFIED", pod("pod-0", GARBAGE_RV)))
            ex.end_chunks()
            return
        ex.chunk(bookmark_line(13))
        ex.hold()

    server = hostile(on_list, on_watch)
    config = cached(server, tuned(read_timeout=30.0))
    with config:
        server.wait_for(lambda s: s.count("watch") >= 2)  # the one at the garbage RV: 400
        retry(clock, config, server, "list")  # backoff, then the relist at it (400) and one at ""
        server.wait_for(lambda s: s.count("watch") >= 3)
        lists = [r.query.get("resourceVersion", "") for r in server.of("list")]
        assert lists[-2:] == [GARBAGE_RV, ""]
        assert watches[-1] == "12"
        assert status(config).resource_version in ("12", "13")


def test_row2_a_server_rewound_behind_the_informer_is_found_after_one_silent_watch_and_relisted(
    hostile, cached, clock, tuned
):
    """Issue 32's chaos endgame: after an etcd restore the server is behind the informer's resourceVersion,
    and kube-apiserver answers a watch from it with nothing at all, ending each watch on time. Before:
    every such watch counted as health, `current` for good, and the changes in between were lost. After:
    the reflector asks where the server is (a LIST of one object) after a watch that carried no line, and
    relists at the latest when it is behind."""
    lists: list[dict[str, str]] = []

    def on_list(ex: Exchange) -> None:
        lists.append(dict(ex.query))
        if len(lists) == 1:
            ex.reply_list([pod("pod-0", 1_000_010)], 1_000_010)  # before the restore
        else:
            ex.reply_list([pod("pod-1", 12)], 12)  # the restored server: behind, pod-0 gone

    def on_watch(ex: Exchange) -> None:
        ex.start_chunked()
        if ex.query["resourceVersion"] == "12":
            ex.hold()  # the watch after the relist: the relisted state is what is served
            return
        ex.pause(0.05)
        clock.advance(float(ex.query["timeoutSeconds"]))  # the watch's whole life, with not one line
        ex.end_chunks()

    server = hostile(on_list, on_watch)
    config = cached(server, tuned(watch_timeout=1.0))
    with config:
        server.wait_for(lambda s: s.count("watch") >= 2)
        wait_state(config, "current")
        probe, relist = lists[1], lists[2]
        assert probe.get("limit") == "1" and probe.get("resourceVersion", "") == ""
        assert "limit" not in relist and relist.get("resourceVersion", "") == ""  # at the latest
        assert names(config) == {"pod-1"}  # pod-0, gone in the restored server, is gone here too
        assert [ex.query["resourceVersion"] for ex in server.of("watch")][:2] == ["1000010", "12"]


# ----------------------------------------------------------------------- stalls not detected


def _watch_then(behaviour: str) -> Any:
    def on_watch(ex: Exchange) -> None:
        ex.start_chunked()
        if behaviour == "trickle":
            ex.chunk(b'{"type": "MODIFIED", ')
            while True:  # a byte every 50 ms: never a socket read timeout, never a complete line
                ex.pause(0.05)
                ex.chunk(b" ")
        ex.hold()  # "silent": nothing after the headers

    return on_watch


@pytest.mark.parametrize("behaviour", ["trickle", "silent"])
def test_row3_4_a_watch_without_complete_events_is_a_stall_and_max_staleness_applies(
    hostile, cached, clock, tuned, behaviour
):
    """Before: `current` forever, a strict read served rv 10 while the server had 11 (trickling),
    and a watch re-opened per read timeout counted as healthy (silent). After: each is a
    StalledWatchError, the re-opened watch does not make it current, `stale` past max_staleness.

    "Silent" is a watch the server never ends: nothing for longer than its own timeoutSeconds plus
    the read timeout (a quiet resource's watch is silent too, until the server ends it: that is
    kube-apiserver's way, and healthy). Here timeoutSeconds is 1 s."""
    server = hostile(list_ok(), _watch_then(behaviour))
    config = cached(server, tuned(watch_timeout=1.0))
    with config:
        st = backing_off(clock, config)  # the read timeout (0.5 s, real) ended the first watch
        assert st.state == "degraded" and "StalledWatchError" in (st.last_error or "")
        assert names(config) == {"pod-0"}  # degraded: still served
        retry(clock, config, server, "watch")
        st = backing_off(clock, config)  # the re-opened watch stalled as well
        assert st.state == "degraded" and server.count("watch") == 2
        clock.advance(5.0)
        assert status(config).state == "stale"
        with pytest.raises(CacheUnavailableError, match="stale.*StalledWatchError"):
            Pod.list(namespace="default")
        assert server.count("list") == 1


def test_row3_4_every_watch_silent_after_its_headers_is_caught_within_max_staleness(hostile, cached, clock, tuned):
    """Issue 32. Before: with the default watch_timeout (a watch of 300-600 s), read_timeout 3 and
    max_staleness 5, a server that answers every watch with its headers and then nothing, the
    connection held open, left the informer `current` for the watch's whole life plus the read
    timeout (61 of 61 samples over 15 s), `last_error=None`, and a strict read served rv 10 while
    the server had 11. After: every watch asks for a timeoutSeconds that ends, with the grace,
    inside max_staleness, so the silent watch is a StalledWatchError before the informer would
    turn stale; re-opened silent watches keep it degraded, then `stale`, and strict reads refuse."""
    server_rv = [10]

    def on_list(ex: Exchange) -> None:
        ex.reply_list([pod("pod-0", 10)], 10)

    def on_watch(ex: Exchange) -> None:
        server_rv[0] = 11  # a pod created on the server: the silent watch never delivers it
        ex.start_chunked()
        ex.hold()

    server = hostile(on_list, on_watch)
    config = cached(server, tuned(watch_timeout=300.0, read_timeout=3.0), max_staleness=5)
    with config:
        st = backing_off(clock, config)  # caught on real sockets, without the clock moving at all
        assert st.state == "degraded" and "StalledWatchError" in (st.last_error or "")
        (first,) = [ex for ex in server.requests if ex.verb == "watch"]
        assert 1 <= int(first.query["timeoutSeconds"]) <= 3  # [b/2, b) of 5 - 5/4: ends inside the bound
        retry(clock, config, server, "watch")
        st = backing_off(clock, config)  # the re-opened watch is silent too
        assert st.state == "degraded" and server.count("watch") == 2
        clock.advance(5.0)
        assert status(config).state == "stale" and server_rv[0] == 11
        with pytest.raises(CacheUnavailableError, match="stale.*StalledWatchError"):
            Pod.get("pod-0")
        assert server.count("list") == 1  # a stall re-watches from the last RV: no relist


# ------------------------------------------------------------------------------ unbounded input


def _endless_list(mode: str) -> Any:
    pages = [0]

    def on_list(ex: Exchange) -> None:
        pages[0] += 1
        n = pages[0]
        token = "again" if mode == "repeated-token" else f"token-{n}"
        remaining = 3 if mode == "remaining-count" else None
        ex.reply_list([pod(f"pod-{n}-{i}", 10) for i in range(2)], 10, continue_=token, remaining=remaining)

    return on_list


@pytest.mark.parametrize(
    ("mode", "pages", "words"),
    [
        ("repeated-token", 2, "same continue token"),
        ("remaining-count", 4, "remainingItemCount"),
        ("page-cap", 5, "max_list_pages"),
    ],
)
def test_row5_a_list_whose_continue_never_ends_fails_with_a_typed_error(
    hostile, cached, clock, tuned, mode, pages, words
):
    """Before: 210 pages (52,500 items) in 10 s, `syncing`, no error, RSS growing. After: the
    sync ends at the bound with ListPagingError in status()."""
    server = hostile(_endless_list(mode), _watch_then("silent"))
    config = cached(server, tuned(page_size=2, max_list_pages=5), wait_for_sync=False)
    with config:
        st = backing_off(clock, config)
        assert st.state == "syncing" and not st.synced
        assert "ListPagingError" in (st.last_error or "") and words in (st.last_error or "")
        assert server.count("list") == pages and server.count("watch") == 0


@pytest.mark.parametrize("framing", ["chunked", "content-length"])
def test_row6_a_100_mb_list_body_is_refused_while_read(hostile, cached, clock, tuned, framing):
    """Before: read whole (+204 MB RSS) before failing as invalid JSON. After: refused at the
    configured bound (1 MiB here; 512 MiB by default), BodyTooLarge in status(), the server
    could write only what the socket buffers hold."""
    total = 100 * 1024 * 1024
    ended = threading.Event()
    sent: list[int] = []

    def on_list(ex: Exchange) -> None:
        try:
            if framing == "chunked":
                ex.start_chunked()
                for piece in filler(total):
                    ex.chunk(piece)
            else:
                ex.head(200, {"Content-Length": str(total)})
                for piece in filler(total):
                    ex.write(piece)
        finally:
            sent.append(ex.sent)
            ended.set()

    server = hostile(on_list, _watch_then("silent"))
    config = cached(server, tuned(max_list_bytes=1024 * 1024), wait_for_sync=False)
    with config:
        st = backing_off(clock, config)
        assert "BodyTooLarge" in (st.last_error or "") and "1048576" in (st.last_error or "")
        assert st.state == "syncing"
        assert ended.wait(10)
        assert sent[0] < 32 * 1024 * 1024  # never read whole: the client closed at the bound


def test_row7_objects_of_another_kind_or_without_identity_are_refused_and_counted(hostile, cached, clock, tuned):
    """Before: a ConfigMap or a Deployment in a Pod watch was stored and listed as a Pod, a pod
    without a name or with a null namespace stored under None. After: refused, counted, never stored."""
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": "default", "resourceVersion": "11"},
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": "12"},
    }

    def on_watch(ex: Exchange) -> None:
        ex.start_chunked()
        for obj in (configmap, deployment, pod(None, 13), pod("no-namespace", 14, namespace=None)):
            ex.chunk(event_line("ADDED", obj))
        ex.chunk(event_line("ADDED", pod("good", 15)))
        ex.hold()

    server = hostile(list_ok(pod("pod-0", 10), pod(None, 10)), on_watch)
    config = cached(server, tuned(read_timeout=30.0))
    good = threading.Event()
    informer = config.cache.get_informer(Pod)  # type: ignore[union-attr]
    informer.on_add(lambda p: good.set() if p.metadata.name == "good" else None)
    with config:
        assert good.wait(10)
        assert names(config) == {"pod-0", "good"}
        st = status(config)
        assert st.refused_events == 5 and st.object_count == 2
        assert st.resource_version == "15" and st.state == "current"
        assert all(p.metadata.name and p.metadata.namespace for p in informer.list())


# ------------------------------------------------------------------------------------- backoff


def test_row8_a_watch_that_delivered_resets_the_backoff(hostile, cached, clock, tuned):
    """Empty watches double the wait; one that delivered an event starts it over."""
    watches = [0]

    def on_watch(ex: Exchange) -> None:
        watches[0] += 1
        ex.start_chunked()
        if watches[0] == 3:
            ex.chunk(event_line("MODIFIED", pod("pod-0", 11)))
        else:
            ex.chunk(bookmark_line(ex.query["resourceVersion"]))
        ex.end_chunks()

    server = hostile(list_ok(), on_watch)
    config = cached(server, tuned(), max_staleness=None)
    with config:
        delays = [retry(clock, config, server, "watch"), retry(clock, config, server, "watch")]
        server.wait_for(lambda s: s.count("watch") >= 4)  # the third delivered: re-watched at once
        delays.append(retry(clock, config, server, "watch"))
        assert delays == pytest.approx([1.5, 3.0, 1.5])


def test_row8_jitter_never_carries_a_wait_past_max_staleness_against_a_server_that_answers(
    hostile, cached, clock, tuned
):
    """The soak saw one 48 s wait (30 s cap plus jitter) after 500s on LIST: with max_staleness 25
    and the largest jitter, the waits are 2, 4, 8 and then 11 (not 16), so the retry that works
    comes before the informer turns stale; status() shows each wait."""
    lists = [0]

    def on_list(ex: Exchange) -> None:
        lists[0] += 1
        if 2 <= lists[0] <= 5:  # the relists after the 410 fail, then one works
            ex.reply_status(500, "InternalError", "etcd leader changed")
            return
        ex.reply_list([pod("pod-0", 10 + lists[0])], 10 + lists[0])

    def on_watch(ex: Exchange) -> None:
        if server.count("watch") == 1:
            ex.reply_status(410, "Expired", "too old resource version")
            return
        ex.start_chunked()
        ex.hold()

    server = hostile(on_list, on_watch)
    tuning = tuned(backoff=Backoff(initial=1.0, cap=30.0), rng=lambda: 0.999, read_timeout=30.0)
    config = cached(server, tuning, max_staleness=25)
    with config:
        started = clock.now()
        delays = []
        for _ in range(4):
            assert status(config).state == "degraded" or not delays
            delays.append(round(retry(clock, config, server, "list"), 2))
        assert delays == [2.0, 4.0, 8.0, 11.0]
        server.wait_for(lambda s: s.count("watch") >= 2)  # the fifth relist worked: watching again
        assert clock.now() - started <= 25.01
        wait_state(config, "current")
        st = status(config)
        assert st.state == "current" and st.next_retry_in is None and st.resource_version == "16"


# ------------------------------------------------------------------ what is not hostile


def test_a_quiet_resource_whose_watches_the_server_ends_stays_current_and_recovers_from_an_error(
    hostile, cached, clock, tuned
):
    """kube-apiserver sends nothing on a quiet resource's watch (no bookmark while the RV does not
    move) and ends it at its timeoutSeconds: silence within that is health, not a stall. After a
    failed watch (a 429), the next quiet watch the server ends makes the informer current again."""
    opened = threading.Event()
    proceed = threading.Event()
    finished = threading.Event()

    def on_watch(ex: Exchange) -> None:
        if server.count("watch") == 1:
            ex.reply_status(429, "TooManyRequests", "slow down")
            return
        ex.start_chunked()
        opened.set()
        if not finished.is_set():
            proceed.wait(10)  # silent (longer than the 0.5 s read timeout), until the test lets it end
            proceed.clear()
        ex.end_chunks()

    server = hostile(list_ok(), on_watch)
    config = cached(server, tuned(watch_timeout=5.0))  # timeoutSeconds 7: silence within it is fine
    with config:
        st = backing_off(clock, config)
        assert st.state == "degraded" and "429" in (st.last_error or "")
        retry(clock, config, server, "watch")
        for n in (2, 3):
            assert opened.wait(10)
            opened.clear()
            proceed.wait(0.8)  # real time past the read timeout, nothing sent: not a stall
            clock.advance(1.5)  # the watch lived past min_watch_duration
            proceed.set()
            server.wait_for(lambda s: s.count("watch") > n)  # re-watched at once, no backoff
            st = status(config)
            assert st.state == "current" and st.last_error is None, st
        assert server.count("list") == 1
        finished.set()
        proceed.set()


def test_a_relist_at_an_rv_whose_later_page_is_compacted_away_restarts_at_the_latest(hostile, cached, clock, tuned):
    """kube-apiserver serves a relist's first page at the RV from its watch cache and the next from
    etcd at that revision: once etcd is compacted past it, every later page is a 410 at that RV.
    The restart is a consistent list at "" (asking at the same RV again can never succeed)."""

    def on_list(ex: Exchange) -> None:
        rv, token = ex.query.get("resourceVersion", ""), ex.query.get("continue")
        if server.count("list") == 1:
            ex.reply_list([pod("pod-0", 10)], 10)  # the first sync
        elif token == "page-2-of-10":
            ex.reply_status(410, "Expired", "The provided continue parameter is too old")
        elif rv == "10":
            ex.reply_list([pod("pod-0", 10)], 10, continue_="page-2-of-10")
        else:
            ex.reply_list([pod("pod-0", 12), pod("pod-1", 12)], 12)

    def on_watch(ex: Exchange) -> None:
        if server.count("watch") == 1:
            ex.reply_status(500, "InternalError", "etcd leader changed")  # a relist at the last RV
            return
        ex.start_chunked()
        ex.hold()

    server = hostile(on_list, on_watch)
    config = cached(server, tuned(read_timeout=30.0))
    with config:
        server.wait_for(lambda s: s.count("list") >= 1)
        retry(clock, config, server, "list")
        server.wait_for(lambda s: s.count("watch") >= 2)
        asked = [(r.query.get("resourceVersion", ""), r.query.get("continue")) for r in server.of("list")]
        assert asked == [("", None), ("10", None), ("", "page-2-of-10"), ("", None)], asked
        assert names(config) == {"pod-0", "pod-1"} and status(config).resource_version == "12"


def test_a_server_that_fails_every_watch_after_one_event_still_backs_off(hostile, cached, clock, tuned):
    """One event, then an ERROR 500, on every watch: the event is applied, but the backoff keeps
    growing (a reset per event gave one relist per event: 32 LISTs in 40 s against 6)."""

    def on_watch(ex: Exchange) -> None:
        n = server.count("watch")
        ex.start_chunked()
        ex.chunk(event_line("MODIFIED", pod("pod-0", 10 + n)))
        ex.chunk(
            b'{"type": "ERROR", "object": {"kind": "Status", "code": 500, "reason": "InternalError", '
            b'"message": "etcd leader changed"}}\n'
        )
        ex.end_chunks()

    server = hostile(list_ok(), on_watch)
    config = cached(server, tuned(), max_staleness=None)
    with config:
        delays = [retry(clock, config, server, verb) for verb in ("list", "list", "list")]
        assert delays == pytest.approx([1.5, 3.0, 6.0])


def test_a_list_answering_410_after_a_watch_that_delivered_backs_off(hostile, cached, clock, tuned):
    """A watch delivers one event, then 410; every list after the first sync answers 410 too. The
    relist after the watch's 410 runs at once, but the list's own 410 is a second expiry in a row and
    backs off: the watch's progress counts once (it counted for every list, a relist hot loop)."""

    def on_list(ex: Exchange) -> None:
        if server.count("list") == 1:
            ex.reply_list([pod("pod-0", 10)], 10)
        else:
            ex.reply_status(410, "Expired", "too old resource version: 10 (20)")

    def on_watch(ex: Exchange) -> None:
        ex.start_chunked()
        ex.chunk(event_line("MODIFIED", pod("pod-0", 11)))
        ex.chunk(
            b'{"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired", '
            b'"message": "too old resource version: 11 (20)"}}\n'
        )
        ex.end_chunks()

    server = hostile(on_list, on_watch)
    config = cached(server, tuned(), max_staleness=None)
    with config:
        backing_off(clock, config)
        asked = [(r.query.get("resourceVersion", ""), r.query.get("continue")) for r in server.of("list")]
        assert asked == [("", None), ("11", None), ("", None)], asked  # the relist's own restart at ""
        assert server.count("watch") == 1
        retry(clock, config, server, "list")
        backing_off(clock, config)
        assert server.count("list") <= 5 and server.count("watch") == 1
