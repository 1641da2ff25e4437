"""Malformed kubeconfigs: each row is one defect; the error is a ConfigError naming the file, the
field and the problem (never a secret), from ``load_connection`` and from a cached Config's scope,
which leaves no thread and no cache running."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
import trustme
import yaml
from _clean import fails_cleanly

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.client._kubeconfig import build_transport, load_connection
from cloudcoil_cache.errors import ConfigError
from cloudcoil_cache.models.kubernetes.core.v1 import Pod

SECRET = "tok-BADINPUT-SECRET-9f3"
SERVER = "https://127.0.0.1:1"  # never reached: every row fails before any request


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def doc(
    cluster: dict[str, Any] | None = None,
    user: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
    **top: Any,
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": {"server": SERVER, **(cluster or {})}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u", **(context or {})}}],
        "users": [{"name": "u", "user": user if user is not None else {"token": SECRET}}],
        **top,
    }


def yaml_text(d: dict[str, Any]) -> str:
    return yaml.safe_dump(d)


def without(d: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node: Any = d[path[0]][0]  # the first entry of that list
    for key in path[1:-1]:
        node = node[key]
    del node[path[-1]]
    return d


def _exec(**spec: Any) -> dict[str, Any]:
    base = {"apiVersion": "client.authentication.k8s.io/v1", "command": "true", "interactiveMode": "Never"}
    base.update(spec)
    return {"exec": {k: v for k, v in base.items() if v is not None}}


_CA = trustme.CA()
_OTHER = trustme.CA().issue_cert("x")

# (id, kubeconfig text or bytes, or a function of the directory writing it and returning its path,
#  the words the error must contain)
ROWS: list[tuple[str, Any, str]] = [
    ("not-yaml", "clusters: [unclosed\n  - x", r"not valid YAML"),
    ("top-level-list", "- a\n- b\n", r"the top level must be a mapping"),
    ("not-utf8", b"\xff\xfe\x00clusters", r"not UTF-8 text"),
    ("a-directory", lambda d: str(d), r"file not found"),
    ("missing-file", lambda d: str(d / "nope"), r"file not found"),
    ("clusters-not-a-list", yaml_text({**doc(), "clusters": {"c": {}}}), r"clusters: must be a list"),
    ("entry-without-name", yaml_text({**doc(), "users": [{"user": {}}]}), r"users\[0\]: 'name' is required"),
    (
        "no-current-context",
        yaml_text({k: v for k, v in doc().items() if k != "current-context"}),
        r"no current-context is set .*contexts: ctx",
    ),
    (
        "unknown-current-context",
        yaml_text({**doc(), "current-context": "gone"}),
        r"context 'gone' is not defined \(contexts: ctx\)",
    ),
    (
        "context-without-cluster",
        yaml_text(without(doc(), ("contexts", "context", "cluster"))),
        r"contexts\[0\]\.context\.cluster: is required",
    ),
    (
        "missing-cluster",
        yaml_text(doc(context={"cluster": "elsewhere"})),
        r"refers to cluster 'elsewhere' which is not defined",
    ),
    ("missing-user", yaml_text(doc(context={"user": "nobody"})), r"refers to user 'nobody' which is not defined"),
    (
        "missing-server",
        yaml_text(without(doc(), ("clusters", "cluster", "server"))),
        r"clusters\[0\]\.cluster\.server: is required",
    ),
    ("server-bad-scheme", yaml_text(doc(cluster={"server": "ftp://k8s:21"})), r"server.*scheme 'ftp'"),
    (
        "server-with-password",
        yaml_text(doc(cluster={"server": "https://me:pw@k8s:6443"})),
        r"must not contain a user name or password",
    ),
    ("server-bad-port", yaml_text(doc(cluster={"server": "https://k8s:99999"})), r"bad host or port"),
    (
        "bad-base64-ca",
        yaml_text(doc(cluster={"certificate-authority-data": "%%%not base64"})),
        r"certificate-authority-data: is not valid base64",
    ),
    (
        "ca-data-not-pem",
        yaml_text(doc(cluster={"certificate-authority-data": b64(b"not a certificate")})),
        r"cannot load the certificate authority data",
    ),
    (
        "missing-ca-file",
        yaml_text(doc(cluster={"certificate-authority": "/nonexistent/ca.crt"})),
        r"certificate-authority: file /nonexistent/ca.crt does not exist",
    ),
    (
        "bad-base64-client-key",
        yaml_text(doc(user={"client-certificate-data": b64(b"x"), "client-key-data": "!!" + SECRET})),
        r"client-key-data: is not valid base64",
    ),
    (
        "cert-without-key",
        yaml_text(doc(user={"client-certificate-data": b64(_OTHER.cert_chain_pems[0].bytes())})),
        r"needs both a certificate and a key; the client key is missing",
    ),
    (
        "key-does-not-match",
        yaml_text(
            doc(
                user={
                    "client-certificate-data": b64(_OTHER.cert_chain_pems[0].bytes()),
                    "client-key-data": b64(_CA.issue_cert("y").private_key_pem.bytes()),
                }
            )
        ),
        r"cannot load the client certificate/key \(inline data\)",
    ),
    (
        "skip-verify-not-bool",
        yaml_text(doc(cluster={"insecure-skip-tls-verify": "yes"})),
        r"insecure-skip-tls-verify: must be true or false",
    ),
    (
        "auth-provider",
        yaml_text(doc(user={"auth-provider": {"name": "gcp", "config": {"access-token": SECRET}}})),
        r"auth-provider plugins are not supported",
    ),
    (
        "exec-unknown-api-version",
        yaml_text(doc(user=_exec(apiVersion="client.authentication.k8s.io/v1alpha1"))),
        r"'apiVersion' must be one of",
    ),
    ("exec-without-command", yaml_text(doc(user=_exec(command=None))), r"exec: 'command' is required"),
    ("exec-args-not-strings", yaml_text(doc(user=_exec(args=[1, 2]))), r"'args' must be a list of strings"),
    (
        "exec-bad-interactive-mode",
        yaml_text(doc(user=_exec(interactiveMode="Sometimes"))),
        r"'interactiveMode' must be one of",
    ),
    (
        "exec-env-without-value",
        yaml_text(doc(user=_exec(env=[{"name": "X"}]))),
        r"env\[0\]: 'name' and 'value' are required",
    ),
    (
        "token-and-basic-auth",
        yaml_text(doc(user={"token": SECRET, "username": "a", "password": "b"})),
        r"more than one authentication method",
    ),
    (
        "token-with-newline",
        yaml_text(doc(user={"token": SECRET + "\nX-Evil: 1"})),
        r"token: has characters not allowed in an HTTP header \(value not shown\)",
    ),
    (
        "missing-token-file",
        yaml_text(doc(user={"tokenFile": "/nonexistent/token"})),
        r"tokenFile: file /nonexistent/token does not exist",
    ),
    (
        "empty-token-file",
        lambda d: _with_file(d, "token", b"  \n", {"tokenFile": "token"}),
        r"token file .*cannot be read, is empty or holds an invalid token",
    ),
    (
        "namespace-not-a-string",
        yaml_text(doc(context={"namespace": ["a"]})),
        r"contexts\[0\]\.context\.namespace: must be a string",
    ),
]


def _with_file(d: Path, name: str, data: bytes, user: dict[str, Any]) -> str:
    (d / name).write_bytes(data)
    path = d / "kubeconfig"
    path.write_text(yaml_text(doc(user=user)))
    return str(path)


def materialise(tmp_path: Path, content: Any) -> str:
    if callable(content):
        return content(tmp_path)
    path = tmp_path / "kubeconfig"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return str(path)


def connect(path: str) -> Any:
    return build_transport(load_connection(kubeconfig=path)).close()


@pytest.mark.parametrize("content,words", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_a_malformed_kubeconfig_is_a_config_error_naming_the_problem(tmp_path, content, words):
    path = materialise(tmp_path, content)
    error = fails_cleanly(lambda: connect(path), ConfigError, words)
    assert SECRET not in str(error) and SECRET not in repr(error.__cause__ or "")


@pytest.mark.parametrize("content,words", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_a_cached_scope_on_a_malformed_kubeconfig_fails_and_starts_nothing(tmp_path, content, words):
    path = materialise(tmp_path, content)
    cache = Cache(resources=[Pod])
    made: list[Config] = []

    def make_and_enter() -> None:
        # Config() checks the kubeconfig (issue 19); TLS material that does not load fails at the scope.
        made.append(Config(kubeconfig=path, cache=cache))
        with made[0]:
            pass

    try:
        error = fails_cleanly(make_and_enter, ConfigError, words)
        assert SECRET not in str(error)
        status = cache.status()
        assert not status.started and not status.ready and status.errors == {}
    finally:
        for config in made:
            config.close()


def test_an_unreadable_kubeconfig_names_the_os_error(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads files whatever their mode")
    path = tmp_path / "kubeconfig"
    path.write_text(yaml_text(doc()))
    path.chmod(0)
    fails_cleanly(lambda: connect(str(path)), ConfigError, r"cannot be read: Permission denied")
