"""The README's usage snippet runs as written against the fake cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from cloudcoil_cache.testing import FakeAPIServer, seed_pods

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.parametrize("pods", [20, 0], ids=["pods", "an-empty-namespace"])
def test_the_readme_usage_snippet_runs(tmp_path, monkeypatch, capsys, pods):
    source = README.read_text().split("## Using it")[1].split("```python")[1].split("```")[0]
    with FakeAPIServer() as server:
        if pods:
            seed_pods(server, pods)
        monkeypatch.setenv("KUBECONFIG", str(server.write_kubeconfig(tmp_path / "kubeconfig")))
        namespace: dict[str, object] = {}
        exec(compile(source, str(README), "exec"), namespace)
        namespace["config"].close()  # type: ignore[attr-defined]
        in_default = len(server.list("pods", namespace="default"))
    out = capsys.readouterr().out
    assert "CacheStatus(enabled=True, started=True, ready=True" in out
    assert (in_default > 0) == bool(pods)
    assert out.splitlines()[-1].startswith(f"{in_default} ")  # the count of the namespace's pods


@pytest.mark.parametrize("page", [README, README.parent / "docs" / "index.md"], ids=["README", "docs-index"])
def test_the_promise_that_cloudcoil_code_runs_says_cached_objects_are_read_only(page):
    paragraphs = [p for p in page.read_text().split("\n\n") if "replacing `cloudcoil.`" in p.replace("\n", " ")]
    assert paragraphs, f"{page.name} no longer says that cloudcoil code runs after renaming its imports"
    for paragraph in paragraphs:  # said in the same place: a renamed program that edits a cached object fails
        text = " ".join(paragraph.split())
        assert "shared and read-only" in text and "copy()" in text, text
