"""load_connection(): discovery order, kubeconfig merging, contexts, in-cluster, errors naming file+field."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trustme
from _kubeconfigs import SECRET_TOKEN, b64, simple_kubeconfig, write_kubeconfig

from cloudcoil_cache import errors
from cloudcoil_cache._http import TLSConfig
from cloudcoil_cache.client._auth import ReloadingCredentials, StaticToken, TokenFile
from cloudcoil_cache.client._kubeconfig import build_transport, load_connection

CA = trustme.CA()
CA_PEM = CA.cert_pem.bytes()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    """No real kubeconfig, home directory or pod environment leaks into these tests."""
    for var in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def sa_dir(tmp_path) -> Path:
    d = tmp_path / "serviceaccount"
    d.mkdir()
    (d / "token").write_text("sa-token-1\n")
    (d / "ca.crt").write_bytes(CA_PEM)
    (d / "namespace").write_text("team-a\n")
    return d


def header(conn) -> str | None:
    return conn.credentials.auth_header() if conn.credentials else None


def test_a_token_user_gives_server_namespace_ca_and_bearer_header(tmp_path):
    path = simple_kubeconfig(
        tmp_path / "config",
        {"token": SECRET_TOKEN},
        namespace="dev",
        cluster={"certificate-authority-data": b64(CA_PEM)},
    )
    conn = load_connection(kubeconfig=path)
    assert (conn.server, conn.namespace) == ("https://k8s.example.test:6443", "dev")
    assert conn.tls == TLSConfig(ca_data=CA_PEM)
    assert header(conn) == f"Bearer {SECRET_TOKEN}"
    assert isinstance(conn.credentials, ReloadingCredentials)
    assert conn.source == f"kubeconfig {path} (context ctx)"


def test_relative_file_paths_resolve_against_the_kubeconfig_directory(tmp_path):
    d = tmp_path / "cfgdir"
    d.mkdir()
    leaf = CA.issue_cert("bob")
    (d / "ca.crt").write_bytes(CA_PEM)
    (d / "bob.crt").write_bytes(leaf.cert_chain_pems[0].bytes())
    (d / "bob.key").write_bytes(leaf.private_key_pem.bytes())
    (d / "token").write_text("file-token")
    path = simple_kubeconfig(
        d / "config",
        {"client-certificate": "bob.crt", "client-key": "bob.key", "tokenFile": "token"},
        cluster={"certificate-authority": "ca.crt"},
    )
    conn = load_connection(kubeconfig=path)
    assert conn.tls == TLSConfig(ca_file=str(d / "ca.crt"), cert_file=str(d / "bob.crt"), key_file=str(d / "bob.key"))
    assert isinstance(conn.credentials.current, TokenFile)
    assert header(conn) == "Bearer file-token"
    build_transport(conn).close()  # the files load into an SSLContext


def test_client_certificate_and_key_data_are_base64_decoded(tmp_path):
    path = simple_kubeconfig(
        tmp_path / "config", {"client-certificate-data": b64(b"CERT-PEM"), "client-key-data": b64(b"KEY-PEM")}
    )
    conn = load_connection(kubeconfig=path)
    assert (conn.tls.cert_data, conn.tls.key_data) == (b"CERT-PEM", b"KEY-PEM")
    assert conn.credentials is None


def test_insecure_skip_tls_verify_and_tls_server_name_are_read(tmp_path):
    path = simple_kubeconfig(
        tmp_path / "config", {}, cluster={"insecure-skip-tls-verify": True, "tls-server-name": "kubernetes"}
    )
    tls = load_connection(kubeconfig=path).tls
    assert (tls.insecure_skip_verify, tls.server_name) == (True, "kubernetes")


def two_contexts(path: Path) -> Path:
    return write_kubeconfig(
        path,
        clusters={"prod": {"server": "https://prod:6443"}, "dev": {"server": "https://dev:6443"}},
        contexts={
            "prod": {"cluster": "prod", "user": "p"},
            "dev": {"cluster": "dev", "user": "d", "namespace": "sandbox"},
        },
        users={"p": {"token": "prod-token"}, "d": {"token": "dev-token"}},
        current="prod",
    )


@pytest.mark.parametrize(
    "context,server,namespace,token",
    [
        (None, "https://prod:6443", "default", "prod-token"),
        ("dev", "https://dev:6443", "sandbox", "dev-token"),
    ],
    ids=["current-context", "chosen-context"],
)
def test_the_context_selects_cluster_user_and_namespace(tmp_path, context, server, namespace, token):
    conn = load_connection(kubeconfig=two_contexts(tmp_path / "config"), context=context)
    assert (conn.server, conn.namespace, header(conn)) == (server, namespace, f"Bearer {token}")


def test_an_unknown_context_raises_config_error_listing_the_defined_ones(tmp_path):
    path = two_contexts(tmp_path / "config")
    with pytest.raises(errors.ConfigError, match=r"context 'staging' is not defined \(contexts: dev, prod\)"):
        load_connection(kubeconfig=path, context="staging")


def test_kubeconfig_env_files_merge_like_kubectl(tmp_path, monkeypatch):
    first = write_kubeconfig(
        tmp_path / "a.yaml", clusters={"shared": {"server": "https://first:1"}}, users={"u": {"token": "first-token"}}
    )
    second = write_kubeconfig(
        tmp_path / "b.yaml",
        clusters={"shared": {"server": "https://second:2"}},
        contexts={"c": {"cluster": "shared", "user": "u"}},
        users={"u": {"token": "second-token"}},
        current="c",
    )
    third = write_kubeconfig(tmp_path / "c.yaml", contexts={"x": {"cluster": "shared"}}, current="x")
    missing = tmp_path / "missing.yaml"
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join(map(str, [missing, first, second, third])))
    conn = load_connection()
    # first file to define a name wins; current-context from the first file that sets one
    assert (conn.server, header(conn)) == ("https://first:1", "Bearer first-token")
    assert conn.source == f"kubeconfig {first}:{second}:{third} (context c)"


def test_home_kube_config_is_used_when_kubeconfig_is_not_set(tmp_path):
    simple_kubeconfig(tmp_path / "home" / ".kube" / "config", {"token": "home-token"})
    assert header(load_connection()) == "Bearer home-token"


def test_in_cluster_uses_the_service_account_token_ca_and_namespace(monkeypatch, sa_dir):
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    conn = load_connection(service_account_dir=sa_dir)
    assert (conn.server, conn.namespace) == ("https://10.96.0.1:443", "team-a")
    assert conn.tls == TLSConfig(ca_file=str(sa_dir / "ca.crt"))
    assert isinstance(conn.credentials, TokenFile) and header(conn) == "Bearer sa-token-1"
    assert conn.source == f"in-cluster (service account {sa_dir})"


def test_in_cluster_brackets_an_ipv6_service_host(monkeypatch, sa_dir):
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    assert load_connection(service_account_dir=sa_dir).server == "https://[fd00::1]:443"


def test_without_any_configuration_the_error_names_everything_tried(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "nope.yaml"))
    with pytest.raises(errors.ConfigError) as info:
        load_connection(service_account_dir=tmp_path / "sa")
    text = str(info.value)
    assert "no Kubernetes configuration found" in text
    for tried in (
        f"KUBECONFIG={tmp_path / 'nope.yaml'}",
        str(tmp_path / "home" / ".kube" / "config"),
        "KUBERNETES_SERVICE_HOST",
    ):
        assert tried in text


def test_explicit_arguments_are_used_without_reading_any_kubeconfig(tmp_path):
    simple_kubeconfig(tmp_path / "home" / ".kube" / "config", {"token": "home-token"})
    (tmp_path / "ca.crt").write_bytes(CA_PEM)
    conn = load_connection(
        server="https://explicit:6443/", token="arg-token", cafile=tmp_path / "ca.crt", namespace="ns1"
    )
    assert (conn.server, conn.namespace, conn.source) == ("https://explicit:6443", "ns1", "explicit arguments")
    assert isinstance(conn.credentials, StaticToken) and header(conn) == "Bearer arg-token"
    assert conn.tls == TLSConfig(ca_file=str(tmp_path / "ca.crt"))


def test_explicit_arguments_override_the_kubeconfigs_values(tmp_path):
    leaf = CA.issue_cert("carol")
    for name, data in (
        ("ca.crt", CA_PEM),
        ("c.crt", leaf.cert_chain_pems[0].bytes()),
        ("c.key", leaf.private_key_pem.bytes()),
    ):
        (tmp_path / name).write_bytes(data)
    path = simple_kubeconfig(
        tmp_path / "config",
        {"token": "kube-token", "client-key-data": b64(b"K"), "client-certificate-data": b64(b"C")},
        cluster={"certificate-authority-data": b64(b"CA")},
        namespace="kube-ns",
    )
    conn = load_connection(
        kubeconfig=path,
        server="https://other:1",
        token="arg-token",
        cafile=tmp_path / "ca.crt",
        certfile=tmp_path / "c.crt",
        keyfile=tmp_path / "c.key",
        namespace="arg-ns",
        skip_verify=True,
    )
    assert (conn.server, conn.namespace, header(conn)) == ("https://other:1", "arg-ns", "Bearer arg-token")
    assert conn.tls == TLSConfig(
        ca_file=str(tmp_path / "ca.crt"),
        cert_file=str(tmp_path / "c.crt"),
        key_file=str(tmp_path / "c.key"),
        insecure_skip_verify=True,
    )


def test_in_cluster_token_and_namespace_can_be_overridden(monkeypatch, sa_dir):
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    conn = load_connection(service_account_dir=sa_dir, token="arg-token", namespace="mine")
    assert (header(conn), conn.namespace) == ("Bearer arg-token", "mine")


BAD_ARGUMENTS = [
    ({"server": "https://x", "cafile": "/nonexistent/ca.crt"}, "cafile=/nonexistent/ca.crt: file does not exist"),
    ({"server": "https://x", "token": ""}, "token must be a non-empty string"),
    ({"server": "https://x", "skip_verify": "yes"}, "skip_verify must be True or False"),
    ({"server": "ftp://x"}, "server=: server must be an http(s) URL"),
    ({"kubeconfig": "/nonexistent/config"}, "kubeconfig /nonexistent/config: file not found"),
]


@pytest.mark.parametrize(
    "kwargs,message",
    BAD_ARGUMENTS,
    ids=["missing-cafile", "empty-token", "skip-verify-type", "bad-server", "missing-kubeconfig"],
)
def test_bad_arguments_raise_config_error_naming_the_argument(kwargs, message):
    with pytest.raises(errors.ConfigError) as info:
        load_connection(**kwargs)
    assert message in str(info.value)


def broken(tmp_path: Path, **kwargs) -> Path:
    return write_kubeconfig(tmp_path / "config", **kwargs)


MALFORMED = [
    (
        "context-names-missing-cluster",
        dict(clusters={"c": {"server": "https://a"}}, contexts={"dev": {"cluster": "c9"}}, current="dev"),
        "context 'dev' refers to cluster 'c9' which is not defined",
    ),
    (
        "context-names-missing-user",
        dict(
            clusters={"c": {"server": "https://a"}}, contexts={"dev": {"cluster": "c", "user": "ghost"}}, current="dev"
        ),
        "context 'dev' refers to user 'ghost' which is not defined",
    ),
    (
        "context-without-cluster",
        dict(contexts={"dev": {"user": "u"}}, current="dev"),
        "contexts[0].context.cluster: is required",
    ),
    (
        "cluster-without-server",
        dict(clusters={"c": {}}, contexts={"dev": {"cluster": "c"}}, current="dev"),
        "clusters[0].cluster.server: is required",
    ),
    (
        "no-current-context",
        dict(clusters={"c": {"server": "https://a"}}, contexts={"dev": {"cluster": "c"}}),
        "no current-context is set and no context was given (contexts: dev)",
    ),
    (
        "bad-base64-ca",
        dict(
            clusters={"c": {"server": "https://a", "certificate-authority-data": "%%%"}},
            contexts={"dev": {"cluster": "c"}},
            current="dev",
        ),
        "clusters[0].cluster.certificate-authority-data: is not valid base64",
    ),
    (
        "insecure-not-bool",
        dict(
            clusters={"c": {"server": "https://a", "insecure-skip-tls-verify": "yes"}},
            contexts={"dev": {"cluster": "c"}},
            current="dev",
        ),
        "clusters[0].cluster.insecure-skip-tls-verify: must be true or false",
    ),
    (
        "missing-client-cert-file",
        dict(
            clusters={"c": {"server": "https://a"}},
            contexts={"dev": {"cluster": "c", "user": "u"}},
            users={"u": {"client-certificate": "nope.crt"}},
            current="dev",
        ),
        "users[0].user.client-certificate: file {dir}/nope.crt does not exist",
    ),
    (
        "exec-without-command",
        dict(
            clusters={"c": {"server": "https://a"}},
            contexts={"dev": {"cluster": "c", "user": "u"}},
            users={"u": {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "interactiveMode": "Never"}}},
            current="dev",
        ),
        "users[0].user.exec: 'command' is required",
    ),
    (
        "exec-old-api-version",
        dict(
            clusters={"c": {"server": "https://a"}},
            contexts={"dev": {"cluster": "c", "user": "u"}},
            users={"u": {"exec": {"command": "x", "apiVersion": "client.authentication.k8s.io/v1alpha1"}}},
            current="dev",
        ),
        "users[0].user.exec: 'apiVersion' must be one of",
    ),
    (
        "exec-v1-without-interactive-mode",
        dict(
            clusters={"c": {"server": "https://a"}},
            contexts={"dev": {"cluster": "c", "user": "u"}},
            users={"u": {"exec": {"command": "x", "apiVersion": "client.authentication.k8s.io/v1"}}},
            current="dev",
        ),
        "users[0].user.exec: 'interactiveMode' is required",
    ),
    (
        "exec-env-without-value",
        dict(
            clusters={"c": {"server": "https://a"}},
            contexts={"dev": {"cluster": "c", "user": "u"}},
            users={
                "u": {
                    "exec": {
                        "command": "x",
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "env": [{"name": "A"}],
                    }
                }
            },
            current="dev",
        ),
        "users[0].user.exec: env[0]: 'name' and 'value' are required strings",
    ),
    (
        "auth-provider",
        dict(
            clusters={"c": {"server": "https://a"}},
            contexts={"dev": {"cluster": "c", "user": "u"}},
            users={"u": {"auth-provider": {"name": "gcp"}}},
            current="dev",
        ),
        "users[0].user.auth-provider: auth-provider plugins are not supported",
    ),
    (
        "token-and-password",
        dict(
            clusters={"c": {"server": "https://a"}},
            contexts={"dev": {"cluster": "c", "user": "u"}},
            users={"u": {"token": SECRET_TOKEN, "username": "a", "password": "b"}},
            current="dev",
        ),
        "users[0].user: more than one authentication method",
    ),
    (
        "token-with-a-newline",
        dict(
            clusters={"c": {"server": "https://a"}},
            contexts={"dev": {"cluster": "c", "user": "u"}},
            users={"u": {"token": f"{SECRET_TOKEN}\nX-Injected: 1"}},
            current="dev",
        ),
        "users[0].user.token: has characters not allowed in an HTTP header (value not shown)",
    ),
    ("clusters-not-a-list", dict(raw={"clusters": {"c": 1}}), "clusters: must be a list"),
    ("entry-without-name", dict(raw={"users": [{"user": {"token": SECRET_TOKEN}}]}), "users[0]: 'name' is required"),
    ("top-level-list", dict(raw=[1, 2]), "the top level must be a mapping"),
]


@pytest.mark.parametrize("kwargs,message", [(k, m) for _, k, m in MALFORMED], ids=[i for i, _, _ in MALFORMED])
def test_a_malformed_kubeconfig_raises_config_error_naming_the_file_and_field(tmp_path, kwargs, message):
    path = broken(tmp_path, **kwargs)
    with pytest.raises(errors.ConfigError) as info:
        load_connection(kubeconfig=path)
    text = str(info.value)
    assert text.startswith(f"kubeconfig {path}")
    assert message.format(dir=tmp_path) in text
    assert SECRET_TOKEN not in text


def test_invalid_yaml_names_the_position_but_never_shows_the_line(tmp_path):
    path = tmp_path / "config"
    path.write_text(f"users:\n- name: u\n  user:\n    token: {SECRET_TOKEN}\n   bad: [unclosed\n")
    with pytest.raises(errors.ConfigError) as info:
        load_connection(kubeconfig=path)
    assert str(info.value).startswith(f"kubeconfig {path}: not valid YAML")
    assert "line" in str(info.value) and SECRET_TOKEN not in str(info.value)
