"""Config as cloudcoil users read it: server/namespace/token, and a malformed kubeconfig failing at Config()."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from _kubeconfigs import SECRET_TOKEN, b64, exec_user, runs, simple_kubeconfig, write_kubeconfig

from cloudcoil_cache import errors
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No real kubeconfig, home directory or pod environment leaks into these tests."""
    for var in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def closing() -> Iterator[list[Config]]:
    """Configs appended here are closed at teardown."""
    made: list[Config] = []
    yield made
    for config in made:
        config.close()


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A listening socket nobody accepts on: a connection attempt to it stays queued, visible."""
    with socket.create_server(("127.0.0.1", 0)) as sock:
        sock.setblocking(False)
        yield sock


def nobody_connected(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return True
    conn.close()
    return False


# ------------------------------------------------------------------ server, namespace, token


def test_the_kubeconfig_in_kubeconfig_env_gives_server_namespace_and_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listener: socket.socket
) -> None:
    url = f"https://127.0.0.1:{listener.getsockname()[1]}"
    path = simple_kubeconfig(tmp_path / "config", {"token": SECRET_TOKEN}, server=url, namespace="team-a")
    monkeypatch.setenv("KUBECONFIG", str(path))
    config = Config()
    assert (config.server, config.namespace, config.token) == (url, "team-a", SECRET_TOKEN)
    assert nobody_connected(listener)  # construction and these attributes use no network


def test_explicit_arguments_give_server_namespace_and_token() -> None:
    config = Config(server="https://custom-server", namespace="custom-ns", token="custom-token")
    assert (config.server, config.namespace, config.token) == ("https://custom-server", "custom-ns", "custom-token")
    bare = Config(server="https://custom-server")
    assert (bare.server, bare.namespace, bare.token) == ("https://custom-server", "default", None)


def test_the_token_argument_overrides_the_kubeconfig_users_token(tmp_path: Path) -> None:
    path = simple_kubeconfig(tmp_path / "config", {"token": SECRET_TOKEN})
    assert Config(kubeconfig=str(path), token="override-token").token == "override-token"
    assert Config(kubeconfig=str(path), namespace="other").namespace == "other"


def test_a_token_file_gives_its_current_contents(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("file-token-1\n")
    config = Config(kubeconfig=str(simple_kubeconfig(tmp_path / "config", {"tokenFile": str(token_file)})))
    assert config.token == "file-token-1"


@pytest.mark.parametrize(
    "user",
    [
        {"client-certificate-data": b64(b"CERT"), "client-key-data": b64(b"KEY")},
        {"username": "admin", "password": "pw-SECRET"},
        {},
    ],
    ids=["client-certificate", "basic-auth", "no-credentials"],
)
def test_credentials_without_a_bearer_token_give_none(tmp_path: Path, user: dict[str, Any]) -> None:
    assert Config(kubeconfig=str(simple_kubeconfig(tmp_path / "config", user))).token is None


def test_an_exec_plugin_runs_at_the_first_request_not_at_construction_nor_for_token(
    tmp_path: Path, closing: list[Config]
) -> None:
    state = tmp_path / "plugin"
    with FakeAPIServer(expected_token="exec-token-1") as server:
        server.create("pods", make_pod("p"), "default")
        path = simple_kubeconfig(tmp_path / "config", exec_user(state), server=server.url)
        config = Config(kubeconfig=str(path))
        closing.append(config)
        assert config.token is None  # as cloudcoil: an exec plugin's token is not an attribute
        assert runs(state) == 0
        assert [p.metadata.name for p in Pod.client(config, cached=False).list()] == ["p"]
        assert runs(state) == 1


def test_repr_names_server_and_namespace_but_never_the_token(tmp_path: Path) -> None:
    path = simple_kubeconfig(tmp_path / "config", {"token": SECRET_TOKEN}, namespace="team-a")
    config = Config(kubeconfig=str(path))
    assert SECRET_TOKEN not in repr(config)
    assert config.token == SECRET_TOKEN  # discovered now: the repr shows where, still not how
    text = repr(config)
    assert "https://k8s.example.test:6443" in text and "team-a" in text
    assert SECRET_TOKEN not in text
    explicit = Config(server="https://h", token="arg-SECRET-token")
    assert "arg-SECRET-token" not in repr(explicit) and explicit.token == "arg-SECRET-token"
    assert "arg-SECRET-token" not in repr(explicit)


# ------------------------------------------------------------------ malformed at Config()


def _doc(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": {"server": "https://k8s.example.test:6443"}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": SECRET_TOKEN}}],
    }
    for key, value in changes.items():
        key = key.replace("_", "-")
        if value is None:
            doc.pop(key)
        else:
            doc[key] = value
    return doc


MALFORMED = [
    ("not-yaml", "clusters: [\n  - name: c\n    cluster: {server: x\n", "not valid YAML"),
    ("a-list", yaml.safe_dump([_doc()]), "top level must be a mapping"),
    ("a-scalar", "just some text\n", "top level must be a mapping"),
    ("empty", "", "no current-context"),
    ("only-current-context", yaml.safe_dump({"current-context": "test-context"}), "'test-context' is not defined"),
    (
        "empty-sections",
        yaml.safe_dump({"current-context": "test-context", "contexts": [], "clusters": [], "users": []}),
        "'test-context' is not defined",
    ),
    ("no-current-context", yaml.safe_dump(_doc(current_context=None)), "no current-context"),
    ("current-context-names-nothing", yaml.safe_dump(_doc(current_context="elsewhere")), "'elsewhere' is not defined"),
    ("no-clusters", yaml.safe_dump(_doc(clusters=None)), "cluster 'c' which is not defined"),
    ("no-contexts", yaml.safe_dump(_doc(contexts=None)), "'ctx' is not defined"),
    ("no-users", yaml.safe_dump(_doc(users=None)), "user 'u' which is not defined"),
    ("clusters-not-a-list", yaml.safe_dump(_doc(clusters={"c": {}})), "clusters: must be a list"),
    (
        "cluster-without-server",
        yaml.safe_dump(_doc(clusters=[{"name": "c", "cluster": {}}])),
        "clusters[0].cluster.server: is required",
    ),
    (
        "cluster-without-name",
        yaml.safe_dump(_doc(clusters=[{"cluster": {"server": "https://h"}}])),
        "clusters[0]: 'name' is required",
    ),
    (
        "bad-server-url",
        yaml.safe_dump(_doc(clusters=[{"name": "c", "cluster": {"server": "ftp://h"}}])),
        "clusters[0].cluster.server",
    ),
    (
        "token-not-a-string",
        yaml.safe_dump(_doc(users=[{"name": "u", "user": {"token": [SECRET_TOKEN]}}])),
        "users[0].user.token: must be a string",
    ),
]


@pytest.mark.parametrize("text,problem", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_a_malformed_kubeconfig_raises_a_value_error_at_construction_naming_file_and_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, problem: str
) -> None:
    path = tmp_path / "config"
    path.write_text(text)
    monkeypatch.setenv("KUBECONFIG", str(path))
    with pytest.raises(ValueError) as info:
        Config()
    assert isinstance(info.value, errors.ConfigError) and isinstance(info.value, errors.CloudcoilError)
    message = str(info.value)
    assert str(path) in message and problem in message
    assert SECRET_TOKEN not in message
    with pytest.raises(errors.ConfigError):  # the kubeconfig= argument is checked alike
        Config(kubeconfig=str(path))


def test_an_unquoted_token_read_as_a_yaml_alias_is_named_by_line_and_column_not_shown(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(_doc()).replace(SECRET_TOKEN, "*" + SECRET_TOKEN))
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if SECRET_TOKEN in text)
    with pytest.raises(ValueError) as info:
        Config(kubeconfig=str(path))
    message = str(info.value)
    assert SECRET_TOKEN not in message and SECRET_TOKEN not in repr(info.value)
    assert str(path) in message and f"line {line}," in message and "alias" in message
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no YAML snippet chained
    assert info.value.__context__ is None  # not even a suppressed one: PyYAML's error holds the document


@pytest.mark.parametrize(
    ("broken", "problem"),
    [
        (f'"{SECRET_TOKEN}', "found unexpected end of stream"),
        (f"{SECRET_TOKEN}\n bad: {SECRET_TOKEN}", "expected <block end>"),
        (f"!{SECRET_TOKEN} x", "could not determine a constructor for the tag"),
    ],
    ids=["unterminated-quote", "bad-indentation", "unknown-tag"],
)
def test_yaml_errors_in_a_kubeconfig_name_the_problem_and_line_never_the_text(
    tmp_path: Path, broken: str, problem: str
) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(_doc()).replace(SECRET_TOKEN, broken))
    with pytest.raises(errors.ConfigError) as info:
        Config(kubeconfig=str(path))
    message = str(info.value)
    assert message.startswith(f"kubeconfig {path}: not valid YAML: ") and problem in message and "(line " in message
    assert SECRET_TOKEN not in message and info.value.__context__ is None


def test_a_missing_kubeconfig_file_or_a_bad_argument_raises_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="file not found"):
        Config(kubeconfig=str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="server must be an http"):
        Config(server="ftp://example.test")
    with pytest.raises(ValueError, match="cafile="):
        Config(server="https://example.test", cafile=str(tmp_path / "no-ca.crt"))


def test_nothing_found_and_in_cluster_discovery_stay_lazy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = Config()  # no kubeconfig anywhere: nothing to check yet
    with pytest.raises(errors.ConfigError, match="no Kubernetes configuration found"):
        config.initialize()
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    Config()  # in-cluster: the service account is read at first use, not here
    with pytest.raises(errors.ConfigError, match="in-cluster"):
        Config().server


# ------------------------------------------------------------------ read once, at Config()


def test_a_kubeconfig_broken_after_construction_is_not_read_again(tmp_path: Path) -> None:
    path = simple_kubeconfig(tmp_path / "config", {"token": SECRET_TOKEN}, namespace="team-a")
    config = Config(kubeconfig=str(path))
    write_kubeconfig(path, raw={"clusters": "not a list"})
    assert config.initialize() is config  # what Config() read and checked is what it uses
    assert (config.server, config.namespace, config.token) == ("https://k8s.example.test:6443", "team-a", SECRET_TOKEN)


@pytest.mark.parametrize("via_env", [False, True], ids=["kubeconfig-argument", "KUBECONFIG"])
def test_a_kubeconfig_rewritten_before_the_first_request_is_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listener: socket.socket, closing: list[Config], via_env: bool
) -> None:
    elsewhere = f"https://127.0.0.1:{listener.getsockname()[1]}"
    with FakeAPIServer(expected_token=SECRET_TOKEN) as server:
        server.create("pods", make_pod("p", "team-a"), "team-a")
        server.create("pods", make_pod("q", "team-b"), "team-b")
        path = simple_kubeconfig(tmp_path / "config", {"token": SECRET_TOKEN}, server=server.url, namespace="team-a")
        if via_env:
            monkeypatch.setenv("KUBECONFIG", str(path))
        config = Config() if via_env else Config(kubeconfig=str(path))
        closing.append(config)
        simple_kubeconfig(path, {"token": "other-token"}, server=elsewhere, namespace="team-b")
        if via_env:
            monkeypatch.setenv("KUBECONFIG", str(tmp_path / "nowhere"))
        assert [p.metadata.name for p in Pod.client(config, cached=False).list()] == ["p"]  # team-a, SECRET_TOKEN
        assert (config.server, config.namespace, config.token) == (server.url, "team-a", SECRET_TOKEN)
    assert nobody_connected(listener)


def test_a_clone_with_another_context_reads_the_kubeconfig_as_it_is_then(tmp_path: Path) -> None:
    path = write_kubeconfig(
        tmp_path / "config",
        clusters={"c": {"server": "https://one.test"}},
        contexts={"ctx": {"cluster": "c", "user": "u"}},
        users={"u": {"token": SECRET_TOKEN}},
        current="ctx",
    )
    config = Config(kubeconfig=str(path))
    write_kubeconfig(
        path,
        clusters={"c": {"server": "https://one.test"}, "d": {"server": "https://two.test"}},
        contexts={"ctx": {"cluster": "c", "user": "u"}, "other": {"cluster": "d", "user": "u"}},
        users={"u": {"token": SECRET_TOKEN}},
        current="ctx",
    )
    assert config.clone(context="other").server == "https://two.test"  # a new Config: its own read
    assert config.server == "https://one.test"
