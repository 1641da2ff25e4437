"""Backoff values and label/field selector parsing and matching."""

from __future__ import annotations

import pytest
from _objects import obj

from cloudcoil_cache._listwatch import parse_field_selector, parse_label_selector
from cloudcoil_cache.caching import Backoff


def test_backoff_doubles_from_0_8_to_a_30_second_cap_with_jitter():
    backoff, delays = Backoff(), []
    for i in range(8):
        delay, backoff = backoff.next(float(i), rand=lambda: 0.0)
        delays.append(delay)
    assert delays == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
    high, _ = Backoff().next(0.0, rand=lambda: 0.999)
    assert 1.59 < high < 1.6


def test_backoff_resets_after_two_healthy_minutes():
    backoff = Backoff()
    for t in range(3):
        _, backoff = backoff.next(float(t), rand=lambda: 0.0)
    delay, _ = backoff.next(2.0 + 121.0, rand=lambda: 0.0)
    assert delay == 0.8


@pytest.mark.parametrize(
    "selector, labels, expected",
    [
        ("app=web", {"app": "web"}, True),
        ("app==web", {"app": "db"}, False),
        ("app!=web", {}, True),
        ("app!=web", {"app": "web"}, False),
        ("tier in (a, b)", {"tier": "b"}, True),
        ("tier in (a,b)", {}, False),
        ("tier notin (a,b)", {}, True),
        ("tier notin (a,b)", {"tier": "a"}, False),
        ("app", {"app": ""}, True),
        ("!app", {"app": "x"}, False),
        ("!app", {}, True),
        ("app=web,tier in (a,b),!legacy", {"app": "web", "tier": "a"}, True),
        ("app.kubernetes.io/name=x", {"app.kubernetes.io/name": "x"}, True),
        ("", {"any": "thing"}, True),
    ],
    ids=lambda v: repr(v),
)
def test_label_selector_full_syntax(selector, labels, expected):
    assert parse_label_selector(selector).matches(labels) is expected


@pytest.mark.parametrize("bad", ["a b c", "rank>-1", "=x", "app=web,", "in (a)x"])
def test_malformed_label_selector_names_the_selector(bad):
    with pytest.raises(ValueError, match="invalid label selector"):
        parse_label_selector(bad)


def test_field_selector_reads_wire_paths_from_objects():
    o = obj("web", "prod")
    sel = parse_field_selector("metadata.name=web,metadata.namespace!=dev")
    assert sel.matches(o)
    assert not parse_field_selector("metadata.name!=web").matches(o)
    with pytest.raises(ValueError, match="invalid field selector"):
        parse_field_selector("metadata.name in (a)")
