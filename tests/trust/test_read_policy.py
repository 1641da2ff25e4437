"""The read policy is one pure function of (cache facts, informer facts, request, mode): a table test."""

from __future__ import annotations

from typing import Any

import pytest

from cloudcoil_cache.caching import Informer, InformerKey
from cloudcoil_cache.caching._pages import encode_token
from cloudcoil_cache.caching._policy import (
    CacheFacts,
    InformerFacts,
    Mode,
    ReadLive,
    ReadRequest,
    Refuse,
    Serve,
    WaitForSync,
    WaitForWrites,
    decide,
    get_request,
    in_scope,
    informer_facts,
    informer_state,
    serves_at,
    serving_verdict,
)
from cloudcoil_cache.caching._reader import hit_facts
from cloudcoil_cache.errors import Forbidden, ResourceNotFound, ServerError
from cloudcoil_cache.models.kubernetes.core.v1 import Pod

CACHE = CacheFacts(enabled=True, paused=False, started=True, kind_enabled=True, kind_cached=True, lazy=False)
LIST = ReadRequest("Pod", "default")
GET = ReadRequest("Pod", "default", name="web-0")
ERR = ServerError("503 Service Unavailable", code=503)
SELECTED = InformerKey(Pod, None, "app=web")
CACHE_TOKEN = encode_token(("default", "web-0"))
PAUSED = CacheFacts(True, True, True, True, True, False)


def facts(**changes: object) -> InformerFacts:
    base = dict(
        key=InformerKey(Pod, None),
        namespace=None,
        synced=True,
        state="current",
        seconds_since_current=0.0,
        max_staleness=60.0,
        last_error=None,
        complete=True,
        incomplete_reason=lambda: "informer incomplete",
        selector_problem=None,
        pending_write=False,
    )
    base.update(changes)
    return InformerFacts(**base)  # type: ignore[arg-type]


ROWS = [
    ("current", CACHE, facts(), LIST, Serve, Serve),
    (
        "degraded within max_staleness",
        CACHE,
        facts(state="degraded", seconds_since_current=30.0, last_error=ERR),
        LIST,
        Serve,
        Serve,
    ),
    ("stale", CACHE, facts(state="stale", seconds_since_current=62.0, last_error=ERR), LIST, Refuse, ReadLive),
    ("failing 403", CACHE, facts(state="failing", last_error=Forbidden("no", code=403)), GET, Refuse, ReadLive),
    ("not synced", CACHE, facts(synced=False, state="syncing"), LIST, Refuse, ReadLive),
    ("namespace outside", CACHE, facts(namespace="other"), LIST, Refuse, ReadLive),
    ("selector not servable", CACHE, facts(selector_problem="selector not servable: x"), LIST, Refuse, ReadLive),
    ("incomplete list", CACHE, facts(complete=False), LIST, Refuse, ReadLive),
    ("incomplete get is served", CACHE, facts(complete=False), GET, Serve, Serve),
    ("pending write", CACHE, facts(pending_write=True), GET, WaitForWrites, WaitForWrites),
    ("kind not cached", CACHE, None, LIST, Refuse, ReadLive),
    ("lazy first read", CacheFacts(True, False, True, True, False, True), None, LIST, WaitForSync, WaitForSync),
    ("not started", CacheFacts(True, False, False, True, True, False), facts(), LIST, Refuse, ReadLive),
    ("paused", CacheFacts(True, True, True, True, True, False), facts(), LIST, ReadLive, ReadLive),
    ("disabled", CacheFacts(False, False, True, True, True, False), facts(), LIST, ReadLive, ReadLive),
    # a get the informer does not hold: "not found" only where the informer would hold it
    ("get miss: not found", CACHE, facts(found=False), GET, Serve, Serve),
    ("get miss, selector informer", CACHE, facts(found=False, key=SELECTED), GET, Refuse, ReadLive),
    ("get miss, evicting informer", CACHE, facts(found=False, complete=False), GET, Refuse, ReadLive),
    (
        "get miss outside ctx.cached's selector",
        CACHE,
        facts(found=False, key=SELECTED),
        GET._replace(selector_is_scope=True),
        Serve,
        Serve,
    ),
    # continue tokens: the API server continues its own pages, the cache its own
    ("the API server's token", CACHE, facts(), LIST._replace(continue_="abc"), Refuse, ReadLive),
    ("the cache's token", CACHE, facts(), LIST._replace(continue_=CACHE_TOKEN), Serve, Serve),
    ("a malformed cache token", CACHE, facts(), LIST._replace(continue_="cc-cache:!!!"), Refuse, Refuse),
    ("the cache's token, read live", PAUSED, facts(), LIST._replace(continue_=CACHE_TOKEN), Refuse, Refuse),
]


@pytest.mark.parametrize("name, cache, informer, request_, strict, fallback", ROWS, ids=[r[0] for r in ROWS])
def test_the_policy_decides_by_the_facts_alone(name, cache, informer, request_, strict, fallback):
    assert type(decide(cache, informer, request_, Mode.STRICT)) is strict
    assert type(decide(cache, informer, request_, Mode.FALLBACK)) is fallback


def test_a_stale_refusal_names_the_seconds_and_the_last_error():
    decision = decide(CACHE, facts(state="stale", seconds_since_current=62.4, last_error=ERR), LIST, Mode.STRICT)
    assert isinstance(decision, Refuse)
    assert decision.reason.startswith("informer stale: no healthy watch for 62 s")
    assert "last error: ServerError: 503" in decision.reason and decision.last_error is ERR


def test_a_cache_page_the_cache_cannot_continue_is_refused_naming_why():
    decision = decide(PAUSED, facts(), LIST._replace(continue_=CACHE_TOKEN), Mode.FALLBACK)
    assert decision == Refuse("the cache is paused", continuing=True)


def test_a_write_not_seen_after_the_wait_is_refused_or_read_live():
    decision = decide(CACHE, facts(pending_write=True), GET, Mode.STRICT, writes_waited=True)
    assert isinstance(decision, Refuse) and decision.reason.startswith("write not yet observed")
    assert isinstance(decide(CACHE, facts(pending_write=True), GET, Mode.FALLBACK, writes_waited=True), ReadLive)


def test_the_fast_constructors_build_the_same_facts_as_the_named_tuples():
    assert get_request("Pod", "default", "web-0") == GET
    assert get_request("Pod", "default", "web-0", Mode.STRICT, True) == GET._replace(
        mode=Mode.STRICT, selector_is_scope=True
    )
    built = facts()
    assert (
        informer_facts(built.key, True, "current", 0.0, 60.0, None, True, built.incomplete_reason, None, False, True)
        == built
    )


@pytest.mark.parametrize(
    "watched, namespace, inside",
    [
        (None, "default", True),
        (None, None, True),
        ("", "default", True),
        ("default", "default", True),
        ("default", "other", False),
        ("default", None, False),
        ("default", "", False),
    ],
)
def test_one_scope_rule_for_every_scope_check(watched, namespace, inside):
    # a namespace-scoped watch holds its namespace only; None/"" asks for all namespaces
    assert in_scope(watched, namespace) is inside


@pytest.mark.parametrize(
    "limit, elapsed, state",
    [
        (60.0, 0.0, "degraded"),
        (60.0, 60.0, "degraded"),
        (60.0, 60.5, "stale"),
        (0.0, 0.0, "stale"),
        (None, 10**6, "degraded"),
    ],
)
def test_informer_state_counts_from_when_it_was_last_current(limit, elapsed, state):
    assert informer_state(
        started=True, synced=True, last_error=ERR, unhealthy_since=100.0, max_staleness=limit, now=100.0 + elapsed
    ) == (state, elapsed)


def test_hard_failures_fail_at_once_and_a_healthy_informer_is_current():
    assert (
        informer_state(
            started=True,
            synced=True,
            last_error=Forbidden("x", code=403),
            unhealthy_since=5.0,
            max_staleness=60,
            now=5.0,
        )[0]
        == "failing"
    )
    assert informer_state(
        started=True, synced=True, last_error=None, unhealthy_since=None, max_staleness=60, now=9.0
    ) == ("current", 0.0)
    assert (
        informer_state(started=False, synced=False, last_error=None, unhealthy_since=None, max_staleness=60, now=9.0)[0]
        == "stopped"
    )


def test_the_serving_verdict_serves_exactly_when_the_state_is_current_or_degraded():
    """An informer's ``serving`` (built at each state change) against the clock is ``informer_state``'s
    "current"/"degraded", on every combination: a reader's hit (``CacheReader.hit``) is one decide serves."""
    since = 1000.25
    errors = (None, ERR, Forbidden("no", code=403), ResourceNotFound("gone", code=404))
    limits = (None, 0.0, -1.0, 1e-9, 0.1, 30.0, 60.0, float("nan"), float("inf"))
    nows = [0.0, since - 1, since, since + 1e-9, since + 0.1, since + 0.3, since + 30, since + 60, since + 1e7]
    nows += [since + 0.1 + d for d in (-1e-13, 1e-13)] + [(since + 0.1) * (1 + 1e-16)]  # around a deadline
    checked = 0
    for started in (False, True):
        for synced in (False, True):
            for err in errors:
                for unhealthy_since in (None, since):
                    for limit in limits:
                        facts_ = dict(started=started, synced=synced, last_error=err, unhealthy_since=unhealthy_since)
                        verdict = serving_verdict(**facts_, max_staleness=limit)  # type: ignore[arg-type]
                        for now in nows:
                            state, _ = informer_state(**facts_, max_staleness=limit, now=now)  # type: ignore[arg-type]
                            assert serves_at(verdict, now) is (state in ("current", "degraded")), (facts_, limit, now)
                            checked += 1
    assert checked == 2 * 2 * 4 * 2 * 9 * 12


@pytest.mark.parametrize(
    "options, words",
    [
        ({"max_staleness": float("nan")}, "max_staleness"),
        ({"max_staleness": float("inf")}, "max_staleness"),
        ({"max_staleness": -1}, "max_staleness"),
        ({"enabled": "yes"}, "enabled='yes'"),
        ({"wait_for_sync": "no"}, "wait_for_sync='no'"),
        ({"namespaces": ["Bad_NS"]}, "not a valid namespace"),
        ({"read_your_writes_timeout": -1}, "read_your_writes_timeout"),
        ({"transform": "strip"}, "transform"),
    ],
)
def test_bad_cache_options_are_refused_naming_the_option(options, words):
    from cloudcoil_cache.caching import Cache

    with pytest.raises(ValueError, match=words):
        Cache(**options)


def test_the_informer_state_is_an_enum_equal_to_its_name():
    from cloudcoil_cache.caching import InformerState

    state, _ = informer_state(
        started=True, synced=True, last_error=None, unhealthy_since=None, max_staleness=60, now=0.0
    )
    assert state is InformerState.CURRENT and state == "current" and f"{state}" == "current"
    assert [s.value for s in InformerState] == ["stopped", "syncing", "current", "degraded", "stale", "failing"]


def _informer(key: InformerKey) -> Informer[Any]:
    """An informer never started (its source is never asked for): what ``hit_facts`` reads of it is its key."""

    def no_source(_: InformerKey) -> Any:
        raise AssertionError("hit_facts must not start the informer")

    return Informer(key, no_source)


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("kind_enabled", [True, False])
@pytest.mark.parametrize("lazy", [True, False])
@pytest.mark.parametrize("key", [InformerKey(Pod, None), InformerKey(Pod, "team-a"), SELECTED], ids=str)
def test_a_readers_hits_are_what_decide_serves_on_the_facts_of_a_serving_informer(enabled, kind_enabled, lazy, key):
    """``CacheReader``'s hit path is derived, once per reader, by asking ``decide`` (``hit_facts``):
    gets hit on exactly an enabled cache and kind, plain lists also need an informer without
    selectors. Each answer is checked against ``decide`` on the facts a hit stands for (a serving
    verdict: "current" or "degraded"; in scope; nothing pending; found; complete), in both modes."""
    cache = CacheFacts(enabled, False, True, kind_enabled, True, lazy)
    gets, lists = hit_facts(cache, _informer(key))
    assert gets is (enabled and kind_enabled)
    assert lists is (enabled and kind_enabled and not key.label_selector)
    namespace = key.namespace or "default"
    for state, since, err in (("current", 0.0, None), ("degraded", 30.0, ERR)):
        served = facts(key=key, namespace=key.namespace, state=state, seconds_since_current=since, last_error=err)
        unselected = served._replace(selector_problem="selector not servable: x" if key.label_selector else None)
        for mode in Mode:
            get = decide(cache, served, get_request("Pod", namespace, "web-0"), mode)
            assert isinstance(get, Serve) is gets, (state, mode, get)
            listed = decide(cache, unselected, ReadRequest("Pod", namespace), mode)
            assert isinstance(listed, Serve) is lists, (state, mode, listed)
