"""``ctl.index(Kind, name, fn)`` (issue 35): declared on the controller, registered on the cache of its
informer at the start, asked from a reconcile's ``ctx.cached(Kind).list(index=...)``; over the fake."""

from __future__ import annotations

from typing import Any

import pytest
from _controller_support import Calls

from cloudcoil_cache.controller import Controller
from cloudcoil_cache.errors import IndexUnavailableError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Secret


def team_of(obj: Any) -> str | None:
    return (obj.metadata.labels or {}).get("team")


def test_a_reconcile_reads_by_the_controllers_index(config, make_cm):
    for name, team in (("a", "blue"), ("b", "blue"), ("c", "red")):
        make_cm(name, labels={"team": team})
    ctl = Controller(ConfigMap, config=config).index(ConfigMap, "team", team_of)
    calls = Calls()

    @ctl.reconcile()
    def reconcile(cm, ctx):
        mates = ctx.cached(ConfigMap).list(index=("team", team_of(cm)))
        for mate in mates:
            mate.data = {"edited": "locally"}  # deep copies: the cache is not touched
        calls.add((cm.name, sorted(m.name for m in mates)))

    with ctl:
        calls.wait(lambda c: len(c) >= 3)
        assert sorted(calls.snapshot()) == [("a", ["a", "b"]), ("b", ["a", "b"]), ("c", ["c"])]
        assert all(m.data != {"edited": "locally"} for m in ctl.cached(ConfigMap).list(index=("team", "blue")))
        with pytest.raises(IndexUnavailableError, match="'owner'"):
            ctl.cached(ConfigMap).list(index=("owner", "x"))
        with pytest.raises(RuntimeError, match="index\\(\\) after the controller started"):
            ctl.index(ConfigMap, "other", team_of)


def test_index_declarations_are_checked_and_an_unwatched_kind_fails_the_start(config):
    ctl = Controller(ConfigMap, config=config)
    with pytest.raises(ValueError, match="non-empty string"):
        ctl.index(ConfigMap, "", team_of)
    with pytest.raises(TypeError, match="expects a callable"):
        ctl.index(ConfigMap, "team", "labels.team")  # type: ignore[arg-type]
    ctl.index(ConfigMap, "team", team_of).index(ConfigMap, "team", team_of)  # the same again: fine
    with pytest.raises(ValueError, match="declared twice"):
        ctl.index(ConfigMap, "team", lambda obj: None)
    ctl.index(Secret, "team", team_of)  # neither owned nor watched
    ctl.reconcile(lambda obj: None)
    with pytest.raises(ValueError, match="index 'team' of Secret, a kind the controller does not watch"):
        ctl.start()
    ctl.stop()
