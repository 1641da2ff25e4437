"""Run in a subprocess by ``test_pure_path``: the library without orjson (``import orjson`` fails), a
cache synced from a fake API server with realistic pods, then a burst of MODIFIED events."""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path

import requests

sys.modules["orjson"] = None  # type: ignore[assignment]  # as installed without the extra

from cloudcoil_cache import _json  # noqa: E402
from cloudcoil_cache.caching import Cache  # noqa: E402
from cloudcoil_cache.client import Config  # noqa: E402
from cloudcoil_cache.models.kubernetes.core.v1 import Pod  # noqa: E402
from cloudcoil_cache.testing import FakeAPIServer, seed_pods  # noqa: E402

PODS = 1500


def main() -> None:
    assert not _json.HAVE_ORJSON and _json.PARSE_BUFFER_FACTOR is None
    with FakeAPIServer() as server, tempfile.TemporaryDirectory() as tmp:
        seed_pods(server, PODS)
        kubeconfig = server.write_kubeconfig(Path(tmp) / "kubeconfig")
        config = Config(kubeconfig=kubeconfig, cache=Cache(resources=[Pod], sync_timeout=120))
        with config:
            view = config.cache.get_informer(Pod, sync=True)
            cached = {(p.namespace, p.name): p for p in view.list()}
            assert len(cached) == PODS, len(cached)
            http = requests.Session()
            http.headers["Authorization"] = f"Bearer {server.expected_token}"
            listed = http.get(f"{server.url}/api/v1/pods", timeout=60).json()["items"]
            assert len(listed) == PODS
            for raw in listed:
                obj = cached[(raw["metadata"]["namespace"], raw["metadata"]["name"])]
                assert obj == Pod.from_dict(raw) and obj.to_dict() == {"apiVersion": "v1", "kind": "Pod", **raw}
            one = next(iter(cached.values()))
            same_spec = [p for p in cached.values() if p.spec == one.spec]
            assert all(p.spec is one.spec for p in same_spec)  # equal specs: one shared object
            seen = threading.Event()
            updated: list[Pod] = []

            def on_update(old: Pod, new: Pod) -> None:
                updated.append(new)
                seen.set()

            view.on_update(on_update)
            answer = http.patch(
                f"{server.url}/api/v1/namespaces/{one.namespace}/pods/{one.name}",
                data=b'{"metadata":{"labels":{"touched":"yes"}}}',
                headers={"Content-Type": "application/merge-patch+json"},
                timeout=60,
            )
            assert answer.status_code == 200, answer.status_code
            assert seen.wait(30), "no MODIFIED event"
            new = updated[-1]
            assert new.metadata.labels["touched"] == "yes" and new.spec is one.spec, new.spec
            now = http.get(f"{server.url}/api/v1/namespaces/{one.namespace}/pods/{one.name}", timeout=60).json()
            assert new == Pod.from_dict(now) and new.to_dict() == now
    print("OK pure path")


if __name__ == "__main__":
    main()
