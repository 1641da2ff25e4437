"""The fake server's shipped OpenAPI data is what tools/generate_fake_schema.py makes from the spec."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "data" / "k8s-swagger-v1.30.2.json"
DATA = ROOT / "cloudcoil_cache" / "testing" / "_data"


@pytest.mark.skipif(not SPEC.exists(), reason="the 1.30 spec is not checked out next to the repo")
def test_the_shipped_data_is_regenerated_identically(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("generate_fake_schema", ROOT / "tools" / "generate_fake_schema.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("generate_fake_schema", module)
    spec.loader.exec_module(module)
    written = module.generate(SPEC, tmp_path)
    assert {p.name for p in written} <= {p.name for p in DATA.glob("*.json.gz")}
    for path in written:
        assert path.read_bytes() == (DATA / path.name).read_bytes(), (
            f"regenerate {path.name} with tools/generate_fake_schema.py"
        )


def test_the_shipped_data_is_small() -> None:
    assert sum(p.stat().st_size for p in DATA.glob("*.json.gz")) < 256 * 1024


PROTO_MODULES = Path.home() / "go" / "pkg" / "mod" / "k8s.io"


@pytest.mark.skipif(
    not (PROTO_MODULES / "api@v0.33.13").exists(),
    reason="Kubernetes' generated.proto files are not in the Go module cache",
)
def test_the_shipped_protobuf_table_is_regenerated_identically(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "generate_fake_protobuf", ROOT / "tools" / "generate_fake_protobuf.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("generate_fake_protobuf", module)
    spec.loader.exec_module(module)
    out = module.generate(PROTO_MODULES, tmp_path / "protobuf.json.gz")
    assert out.read_bytes() == (DATA / "protobuf.json.gz").read_bytes(), (
        "regenerate with tools/generate_fake_protobuf.py"
    )
