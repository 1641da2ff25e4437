"""The README's main job, ``python -m cloudcoil_cache demo``, runs end to end."""

from __future__ import annotations

from cloudcoil_cache.__main__ import main


def test_demo_syncs_serves_reads_and_delivers_every_event(capsys):
    assert main(["demo", "--pods", "40", "--events", "5"]) == 0
    out = capsys.readouterr().out
    assert "cache synced" in out and "40 objects" in out
    assert "handlers received 45 adds, 5 updates, 5 deletes" in out
    assert "every reflector and handler thread stopped and joined" in out


def test_unknown_arguments_are_rejected(capsys):
    import pytest
    with pytest.raises(SystemExit):
        main(["demo", "--nope"])
    assert "unrecognized arguments" in capsys.readouterr().err
