"""`python -m cloudcoil_cache.testing serve` options: --token, --crd and --tls."""

from __future__ import annotations

import subprocess
import sys

import requests
import yaml


def test_serve_requires_the_token_and_serves_the_custom_resources_it_is_given(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cloudcoil_cache.testing",
            "serve",
            "--kubeconfig",
            str(kubeconfig),
            "--token",
            "t0ken",
            "--crd",
            "example.com/v1/Widget/widgets",
            "--crd",
            "example.com/v1/Gadget/gadgets:cluster",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        auth = {"Authorization": "Bearer t0ken"}
        assert requests.get(f"{url}/apis/example.com/v1/widgets", timeout=5).status_code == 401
        assert (
            requests.get(f"{url}/apis/example.com/v1/namespaces/a/widgets", headers=auth, timeout=5).status_code == 200
        )
        assert requests.get(f"{url}/apis/example.com/v1/gadgets", headers=auth, timeout=5).status_code == 200
        config = yaml.safe_load(kubeconfig.read_text())
        assert config["users"][0]["user"]["token"] == "t0ken"
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_a_malformed_crd_option_is_rejected_with_the_expected_form(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "cloudcoil_cache.testing",
            "serve",
            "--kubeconfig",
            str(tmp_path / "k"),
            "--crd",
            "example.com/Widget",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2 and "GROUP/VERSION/KIND/PLURAL" in result.stderr


def test_a_client_accepting_only_aggregated_discovery_gets_406_and_one_with_a_fallback_gets_json(fake_api_server):
    aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    only = requests.get(f"{fake_api_server.url}/apis", headers={"Accept": aggregated}, timeout=5)
    assert only.status_code == 406 and only.json()["reason"] == "NotAcceptable"
    fallback = requests.get(
        f"{fake_api_server.url}/apis", headers={"Accept": f"{aggregated},application/json"}, timeout=5
    )
    assert fallback.status_code == 200 and fallback.json()["kind"] == "APIGroupList"


def test_serve_tls_writes_its_ca_and_seeds_consistent_objects(tmp_path):
    import base64
    import functools

    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cloudcoil_cache.testing",
            "serve",
            "--kubeconfig",
            str(kubeconfig),
            "--tls",
            "--token",
            "t0ken",
            "--pods",
            "10",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("https://127.0.0.1:")
        cluster = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]
        ca = tmp_path / "ca.crt"
        ca.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
        session = requests.Session()
        session.headers["Authorization"] = "Bearer t0ken"
        session.request = functools.partial(session.request, verify=str(ca))  # type: ignore[method-assign]
        pods = session.get(f"{url}/api/v1/pods", timeout=5).json()["items"]
        namespaces = {n["metadata"]["name"] for n in session.get(f"{url}/api/v1/namespaces", timeout=5).json()["items"]}
        nodes = {n["metadata"]["name"] for n in session.get(f"{url}/api/v1/nodes", timeout=5).json()["items"]}
        owners = {
            r["metadata"]["uid"] for r in session.get(f"{url}/apis/apps/v1/replicasets", timeout=5).json()["items"]
        }
        assert len(pods) == 10
        for pod in pods:
            assert pod["metadata"]["namespace"] in namespaces
            assert pod["spec"]["nodeName"] in nodes
            assert pod["metadata"]["ownerReferences"][0]["uid"] in owners
        missing = session.post(f"{url}/api/v1/namespaces/nope/configmaps", timeout=5, json={"metadata": {"name": "c"}})
        assert missing.status_code == 404  # serve checks namespaces
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()
