"""The README's main job, ``python -m cloudcoil_cache demo``, runs end to end (plain output: not a terminal)."""

from __future__ import annotations

import pytest

from cloudcoil_cache.__main__ import main


def test_demo_lists_follows_the_churn_recovers_from_faults_and_matches_the_server(capsys):
    code = main(["demo", "--pods", "60", "--duration", "4", "--rate", "40", "--fault-every", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "synced: 60 pods" in out
    assert "fault: watch connection dropped" in out
    assert "recovered: watching again" in out
    assert "handlers received 60 initial objects" in out
    assert "verified: the cache holds exactly the server's" in out
    assert out.rstrip().endswith("every thread were shut down and joined")


def test_unknown_arguments_are_rejected(capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--nope"])
    assert "unrecognized arguments" in capsys.readouterr().err
