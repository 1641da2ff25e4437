"""The README's usage snippet runs as written against the fake cluster."""

from __future__ import annotations

from pathlib import Path

from cloudcoil_cache.testing import FakeAPIServer, seed_pods

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_usage_snippet_runs(tmp_path, monkeypatch, capsys):
    source = README.read_text().split("## Using it")[1].split("```python")[1].split("```")[0]
    with FakeAPIServer() as server:
        seed_pods(server, 20)
        monkeypatch.setenv("KUBECONFIG", str(server.write_kubeconfig(tmp_path / "kubeconfig")))
        namespace: dict[str, object] = {}
        exec(compile(source, str(README), "exec"), namespace)
        namespace["config"].close()  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    assert "CacheStatus(enabled=True, started=True, ready=True" in out
