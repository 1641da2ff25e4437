"""Find and load the connection settings: explicit arguments, KUBECONFIG, ~/.kube/config, in-cluster.

``load_connection()`` returns a frozen ``Connection`` (server, namespace, TLS, credentials and a
human description of where they came from); ``build_transport()`` turns it into a ``Transport``.
Errors are ``ConfigError``s naming the file and the field, never a secret value.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
from typing import Any, Callable, Mapping, Sequence

import attrs
import yaml

from .._http import Credentials, TLSConfig, Transport, normalise_server
from .._yaml import describe_error
from ..errors import ConfigError
from ._auth import (
    EXEC_API_VERSIONS,
    INTERACTIVE_MODES,
    BasicAuth,
    ExecConfig,
    ExecCredentials,
    ReloadingCredentials,
    StaticToken,
    TokenFile,
)

__all__ = ["SERVICE_ACCOUNT_DIR", "Connection", "build_transport", "check_connection", "load_connection"]

log = logging.getLogger(__name__)

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
_KINDS = (("clusters", "cluster"), ("contexts", "context"), ("users", "user"))


@attrs.frozen(repr=False)
class Connection:
    """Where and how to connect; immutable. ``repr()`` never shows secrets."""

    server: str
    namespace: str
    tls: TLSConfig
    credentials: Credentials | None
    source: str

    def __repr__(self) -> str:
        return (
            f"Connection(server={self.server!r}, namespace={self.namespace!r}, "
            f"source={self.source!r}, tls={self.tls!r}, credentials={self.credentials!r})"
        )


def build_transport(connection: Connection, **options: Any) -> Transport:
    """A ``Transport`` for ``connection``; ``options`` are Transport's keyword arguments
    (``connect_timeout``, ``read_timeout``, ``max_retries``, ...)."""
    return Transport(connection.server, tls=connection.tls, credentials=connection.credentials, **options)


@attrs.frozen
class _Overrides:
    server: str | None = None
    namespace: str | None = None
    token: str | None = attrs.field(default=None, repr=False)  # never in a repr (or a debugger's locals)
    cafile: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    skip_verify: bool | None = None


def load_connection(
    kubeconfig: str | os.PathLike[str] | None = None,
    server: str | None = None,
    namespace: str | None = None,
    token: str | None = None,
    cafile: str | os.PathLike[str] | None = None,
    certfile: str | os.PathLike[str] | None = None,
    keyfile: str | os.PathLike[str] | None = None,
    context: str | None = None,
    skip_verify: bool | None = None,
    *,
    service_account_dir: str | os.PathLike[str] | None = None,
) -> Connection:
    """Discover the connection settings, in this order.

    1. ``kubeconfig=`` (that file; the other arguments override its values);
    2. ``server=`` (explicit arguments only, no file is read);
    3. ``KUBECONFIG``: a ``os.pathsep``-separated list merged like kubectl (the first file to
       define a cluster/context/user name wins; the first ``current-context`` wins; missing
       files are skipped);
    4. ``~/.kube/config``;
    5. in-cluster: ``KUBERNETES_SERVICE_HOST``/``_PORT`` and the service account's token (re-read
       periodically), ``ca.crt`` and ``namespace`` in ``service_account_dir``.

    ``token``, ``cafile``, ``certfile``, ``keyfile``, ``skip_verify`` and ``namespace`` override
    what a kubeconfig or the service account says.

    Raises:
        ConfigError: nothing found (names what was tried), or a malformed kubeconfig (names the
            file and field), an unknown context (lists the defined ones), or a bad argument.
    """
    ov = _overrides(server, namespace, token, cafile, certfile, keyfile, skip_verify)
    tried: list[str] = []
    paths = _locate(kubeconfig, server, tried)
    if paths:
        return _from_kubeconfig(paths, context, ov)
    if server is not None:
        return _explicit(ov)
    sa_dir = os.fspath(service_account_dir) if service_account_dir is not None else SERVICE_ACCOUNT_DIR
    found = _in_cluster(sa_dir, ov, tried)
    if found is not None:
        return found
    raise ConfigError(
        "no Kubernetes configuration found; tried: "
        + "; ".join(tried)
        + ". Pass server= or kubeconfig=, set KUBECONFIG, or run inside a pod."
    )


def check_connection(
    kubeconfig: str | os.PathLike[str] | None = None,
    server: str | None = None,
    namespace: str | None = None,
    token: str | None = None,
    cafile: str | os.PathLike[str] | None = None,
    certfile: str | os.PathLike[str] | None = None,
    keyfile: str | os.PathLike[str] | None = None,
    context: str | None = None,
    skip_verify: bool | None = None,
) -> Connection | None:
    """Check, as ``load_connection()`` would, the arguments and the kubeconfig they lead to; the
    ``Connection`` that ``load_connection()`` would give when it comes from them alone, else None.

    Only files are read (no network, no exec plugin run: exec credentials run at their first
    use). When no kubeconfig is found and no ``server`` is given, nothing more is checked and
    None is returned: in-cluster discovery and "nothing found" are left to ``load_connection()``.

    Raises:
        ConfigError: what ``load_connection()`` raises for a bad argument or a malformed kubeconfig.
    """
    ov = _overrides(server, namespace, token, cafile, certfile, keyfile, skip_verify)
    paths = _locate(kubeconfig, server, [])
    if paths:
        return _from_kubeconfig(paths, context, ov)
    if server is not None:
        return _explicit(ov)
    return None


def _overrides(
    server: str | None,
    namespace: str | None,
    token: str | None,
    cafile: str | os.PathLike[str] | None,
    certfile: str | os.PathLike[str] | None,
    keyfile: str | os.PathLike[str] | None,
    skip_verify: bool | None,
) -> _Overrides:
    ov = _Overrides(
        server=server,
        namespace=namespace,
        token=token,
        cafile=_opt_path(cafile),
        certfile=_opt_path(certfile),
        keyfile=_opt_path(keyfile),
        skip_verify=skip_verify,
    )
    _check_overrides(ov)
    return ov


def _locate(kubeconfig: str | os.PathLike[str] | None, server: str | None, tried: list[str]) -> list[str]:
    """The kubeconfig file(s) to read, in discovery order; [] when none applies (``tried`` says why)."""
    if kubeconfig is not None:
        path = os.fspath(kubeconfig)
        if not os.path.isfile(path):
            raise ConfigError(f"kubeconfig {path}: file not found")
        return [path]
    if server is not None:
        return []
    env = os.environ.get("KUBECONFIG", "")
    if env.strip():
        paths = list(dict.fromkeys(p for p in env.split(os.pathsep) if p))
        existing = [p for p in paths if os.path.isfile(p)]
        if existing:
            return existing
        tried.append(f"KUBECONFIG={env} (no such file)")
    else:
        tried.append("KUBECONFIG (not set)")
    home = os.path.join(os.path.expanduser("~"), ".kube", "config")
    if os.path.isfile(home):
        return [home]
    tried.append(f"{home} (not found)")
    return []


def _opt_path(p: str | os.PathLike[str] | None) -> str | None:
    return os.fspath(p) if p is not None else None


def _check_overrides(ov: _Overrides) -> None:
    for name in ("cafile", "certfile", "keyfile"):
        value = getattr(ov, name)
        if value is not None and not os.path.isfile(value):
            raise ConfigError(f"{name}={value}: file does not exist")
    if ov.skip_verify is not None and not isinstance(ov.skip_verify, bool):
        raise ConfigError(f"skip_verify must be True or False, got {ov.skip_verify!r}")
    if ov.token is not None and (not isinstance(ov.token, str) or not ov.token.strip()):
        raise ConfigError("token must be a non-empty string")
    if ov.namespace is not None and (not isinstance(ov.namespace, str) or not ov.namespace):
        raise ConfigError(f"namespace must be a non-empty string, got {ov.namespace!r}")


def _explicit(ov: _Overrides) -> Connection:
    tls = _apply_tls_overrides(TLSConfig(), ov)
    creds = StaticToken(ov.token) if ov.token else None
    return Connection(
        server=_server(ov.server or "", "server="),
        namespace=ov.namespace or "default",
        tls=tls,
        credentials=creds,
        source="explicit arguments",
    )


def _apply_tls_overrides(tls: TLSConfig, ov: _Overrides) -> TLSConfig:
    if ov.cafile is not None:
        tls = attrs.evolve(tls, ca_file=ov.cafile, ca_data=None)
    if ov.certfile is not None:
        tls = attrs.evolve(tls, cert_file=ov.certfile, cert_data=None)
    if ov.keyfile is not None:
        tls = attrs.evolve(tls, key_file=ov.keyfile, key_data=None)
    if ov.skip_verify is not None:
        tls = attrs.evolve(tls, insecure_skip_verify=ov.skip_verify)
    return tls


def _server(value: str, where: str) -> str:
    try:
        return normalise_server(value)
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None


# -- in-cluster --------------------------------------------------------------------------------


def _in_cluster(sa_dir: str, ov: _Overrides, tried: list[str]) -> Connection | None:
    host = os.environ.get("KUBERNETES_SERVICE_HOST", "")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        tried.append("in-cluster (KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT not set)")
        return None
    token_path = os.path.join(sa_dir, "token")
    if not ov.token and not os.path.isfile(token_path):
        tried.append(f"in-cluster ({token_path} not found)")
        return None
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # IPv6
    ca = os.path.join(sa_dir, "ca.crt")
    tls = TLSConfig(ca_file=ca if os.path.isfile(ca) else None)
    namespace = "default"
    try:
        with open(os.path.join(sa_dir, "namespace"), encoding="utf-8") as f:
            namespace = f.read().strip() or "default"
    except OSError:
        pass
    creds: Credentials = StaticToken(ov.token) if ov.token else TokenFile(token_path)
    return Connection(
        server=_server(f"https://{host}:{port}", "in-cluster"),
        namespace=ov.namespace or namespace,
        tls=_apply_tls_overrides(tls, ov),
        credentials=creds,
        source=f"in-cluster (service account {sa_dir})",
    )


# -- kubeconfig --------------------------------------------------------------------------------


@attrs.frozen
class _Entry:
    """One named cluster/context/user and where it was defined."""

    file: str
    where: str  # e.g. "users[0].user"
    data: Mapping[str, Any]

    def err(self, field: str, problem: str) -> ConfigError:
        return ConfigError(f"kubeconfig {self.file}: {self.where}.{field}: {problem}")


@attrs.frozen
class _Merged:
    files: tuple[str, ...]
    entries: Mapping[str, Mapping[str, _Entry]]  # "clusters" -> name -> entry
    current_context: str | None


def _read_kubeconfig(path: str) -> Mapping[str, Any]:
    problem: str | None = None
    doc: Any = None
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except OSError as e:
        problem = f"cannot be read: {e.strerror}"
    except UnicodeDecodeError:
        problem = "not UTF-8 text"
    except yaml.YAMLError as e:  # its marks hold the document: described here, raised outside
        problem = f"not valid YAML: {describe_error(e)}"
    if problem is not None:
        raise ConfigError(f"kubeconfig {path}: {problem}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise ConfigError(
            f"kubeconfig {path}: the top level must be a mapping, not "
            f"{'a list' if isinstance(doc, list) else 'a single value'}"
        )
    return doc


def _merge(paths: Sequence[str]) -> _Merged:
    entries: dict[str, dict[str, _Entry]] = {kind: {} for kind, _ in _KINDS}
    current: str | None = None
    for path in paths:
        doc = _read_kubeconfig(path)
        for kind, inner in _KINDS:
            items = doc.get(kind) or []
            if not isinstance(items, list):
                raise ConfigError(f"kubeconfig {path}: {kind}: must be a list")
            for i, item in enumerate(items):
                where = f"{kind}[{i}]"
                if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
                    raise ConfigError(f"kubeconfig {path}: {where}: 'name' is required")
                data = item.get(inner) or {}
                if not isinstance(data, dict):
                    raise ConfigError(f"kubeconfig {path}: {where}.{inner}: must be a mapping")
                entries[kind].setdefault(item["name"], _Entry(path, f"{where}.{inner}", data))
        cc = doc.get("current-context")
        if current is None and isinstance(cc, str) and cc:
            current = cc
    return _Merged(tuple(paths), entries, current)


def _describe(files: Sequence[str]) -> str:
    return "kubeconfig " + ":".join(files)


def _from_kubeconfig(paths: Sequence[str], context: str | None, ov: _Overrides) -> Connection:
    merged = _merge(paths)
    ctx_name, ctx, cluster, user = _select(merged, context)
    if ov.server:
        server = _server(ov.server, "server=")
    else:
        server = _server(_required_str(cluster, "server"), f"kubeconfig {cluster.file}: {cluster.where}.server")
    tls = _cluster_tls(cluster)
    if user is not None:
        tls = attrs.evolve(tls, **_user_tls(user))
    tls = _apply_tls_overrides(tls, ov)
    creds = _credentials(merged, ctx_name, user, cluster, ov)
    namespace = ov.namespace or ctx.data.get("namespace") or "default"
    if not isinstance(namespace, str):
        raise ctx.err("namespace", "must be a string")
    source = f"{_describe(merged.files)} (context {ctx_name})"
    return Connection(server=server, namespace=namespace, tls=tls, credentials=creds, source=source)


def _select(merged: _Merged, context: str | None) -> tuple[str, _Entry, _Entry, _Entry | None]:
    contexts = merged.entries["contexts"]
    available = ", ".join(sorted(contexts)) or "none"
    name = context or merged.current_context
    if not name:
        raise ConfigError(
            f"{_describe(merged.files)}: no current-context is set and no context was given (contexts: {available})"
        )
    if name not in contexts:
        raise ConfigError(f"{_describe(merged.files)}: context {name!r} is not defined (contexts: {available})")
    ctx = contexts[name]
    cluster_name = ctx.data.get("cluster")
    if not isinstance(cluster_name, str) or not cluster_name:
        raise ctx.err("cluster", "is required")
    cluster = merged.entries["clusters"].get(cluster_name)
    if cluster is None:
        raise ConfigError(
            f"kubeconfig {ctx.file}: context {name!r} refers to cluster {cluster_name!r} which is not defined"
        )
    user_name = ctx.data.get("user")
    user = None
    if user_name:
        user = merged.entries["users"].get(str(user_name))
        if user is None:
            raise ConfigError(
                f"kubeconfig {ctx.file}: context {name!r} refers to user {user_name!r} which is not defined"
            )
    return name, ctx, cluster, user


def _required_str(entry: _Entry, field: str) -> str:
    value = entry.data.get(field)
    if not value:
        raise entry.err(field, "is required")
    if not isinstance(value, str):
        raise entry.err(field, "must be a string")
    return value


def _opt_str(entry: _Entry, field: str) -> str | None:
    value = entry.data.get(field)
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise entry.err(field, "must be a string")
    return value


def _b64(entry: _Entry, field: str) -> bytes | None:
    value = _opt_str(entry, field)
    if value is None:
        return None
    try:
        return base64.b64decode("".join(value.split()), validate=True)
    except (binascii.Error, ValueError):
        raise entry.err(field, "is not valid base64") from None


def _file(entry: _Entry, field: str) -> str | None:
    value = _opt_str(entry, field)
    if value is None:
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(entry.file)), os.path.expanduser(value))
    if not os.path.isfile(path):
        raise entry.err(field, f"file {path} does not exist")
    return path


def _cluster_tls(cluster: _Entry) -> TLSConfig:
    insecure = cluster.data.get("insecure-skip-tls-verify", False)
    if not isinstance(insecure, bool):
        raise cluster.err("insecure-skip-tls-verify", "must be true or false")
    ca_data = _b64(cluster, "certificate-authority-data")
    ca_file = None if ca_data is not None else _file(cluster, "certificate-authority")
    return TLSConfig(
        ca_data=ca_data,
        ca_file=ca_file,
        insecure_skip_verify=insecure,
        server_name=_opt_str(cluster, "tls-server-name"),
    )


def _user_tls(user: _Entry) -> dict[str, Any]:
    cert_data = _b64(user, "client-certificate-data")
    key_data = _b64(user, "client-key-data")
    return {
        "cert_data": cert_data,
        "cert_file": None if cert_data is not None else _file(user, "client-certificate"),
        "key_data": key_data,
        "key_file": None if key_data is not None else _file(user, "client-key"),
    }


def _credentials(
    merged: _Merged, ctx_name: str, user: _Entry | None, cluster: _Entry, ov: _Overrides
) -> Credentials | None:
    if ov.token:
        return StaticToken(ov.token)
    if user is None:
        return None
    creds = _user_credentials(user, cluster)
    if creds is None:
        return None
    return ReloadingCredentials(creds, _reloader(merged.files, ctx_name), _describe(merged.files))


def _reloader(files: Sequence[str], ctx_name: str) -> Callable[[], Credentials | None]:
    def reload() -> Credentials | None:
        existing = [f for f in files if os.path.isfile(f)]
        if not existing:
            raise ConfigError(f"{_describe(files)}: no longer exists")
        _, _, cluster, user = _select(_merge(existing), ctx_name)
        return _user_credentials(user, cluster) if user is not None else None

    return reload


def _user_credentials(user: _Entry, cluster: _Entry) -> Credentials | None:
    """The user's credentials: tokenFile, then token, then exec, then basic auth (client-go order)."""
    if user.data.get("auth-provider") is not None:
        raise user.err("auth-provider", "auth-provider plugins are not supported; use an exec plugin")
    token = _opt_str(user, "token")
    username, password = _opt_str(user, "username"), _opt_str(user, "password")
    if token and (username or password):
        raise ConfigError(
            f"kubeconfig {user.file}: {user.where}: more than one authentication "
            "method (token and username/password); only one is allowed"
        )
    token_file = _file(user, "tokenFile")
    if token_file:
        return TokenFile(token_file)
    if token:
        try:
            return StaticToken(token)
        except ConfigError:
            raise user.err("token", "has characters not allowed in an HTTP header (value not shown)") from None
    if user.data.get("exec") is not None:
        return ExecCredentials(_exec_config(user, cluster))
    if username or password:
        return BasicAuth(username or "", password or "")
    return None


def _exec_config(user: _Entry, cluster: _Entry) -> ExecConfig:
    raw = user.data["exec"]
    where = f"{user.where}.exec"

    def err(problem: str) -> ConfigError:
        return ConfigError(f"kubeconfig {user.file}: {where}: {problem}")

    if not isinstance(raw, dict):
        raise err("must be a mapping")
    command = raw.get("command")
    if not isinstance(command, str) or not command:
        raise err("'command' is required")
    if os.sep in command and not os.path.isabs(command):  # relative to the kubeconfig, like kubectl
        command = os.path.join(os.path.dirname(os.path.abspath(user.file)), command)
    api_version = raw.get("apiVersion")
    if api_version not in EXEC_API_VERSIONS:
        raise err(f"'apiVersion' must be one of {', '.join(EXEC_API_VERSIONS)}, got {api_version!r}")
    args = raw.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise err("'args' must be a list of strings")
    env = []
    for i, item in enumerate(raw.get("env") or []):
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("name"), str)
            or not isinstance(item.get("value"), str)
        ):
            raise err(f"env[{i}]: 'name' and 'value' are required strings")
        env.append((item["name"], item["value"]))
    mode = raw.get("interactiveMode")
    if mode is None and api_version.endswith("/v1"):
        raise err("'interactiveMode' is required for client.authentication.k8s.io/v1")
    mode = mode or "IfAvailable"
    if mode not in INTERACTIVE_MODES:
        raise err(f"'interactiveMode' must be one of {', '.join(INTERACTIVE_MODES)}, got {mode!r}")
    provide = raw.get("provideClusterInfo", False)
    if not isinstance(provide, bool):
        raise err("'provideClusterInfo' must be true or false")
    return ExecConfig(
        command=command,
        api_version=api_version,
        args=tuple(args),
        env=tuple(env),
        interactive_mode=mode,
        provide_cluster_info=provide,
        cluster=_exec_cluster_info(cluster) if provide else None,
        install_hint=raw.get("installHint") if isinstance(raw.get("installHint"), str) else None,
        where=f"kubeconfig {user.file}: {where}",
    )


def _exec_cluster_info(cluster: _Entry) -> dict[str, Any]:
    """``spec.cluster`` of KUBERNETES_EXEC_INFO (client-go's clientauthentication.Cluster)."""
    data = cluster.data
    info: dict[str, Any] = {"server": data.get("server", "")}
    for key in (
        "tls-server-name",
        "insecure-skip-tls-verify",
        "certificate-authority-data",
        "proxy-url",
        "disable-compression",
    ):
        if data.get(key) not in (None, ""):
            info[key] = data[key]
    if "certificate-authority-data" not in info and data.get("certificate-authority"):
        path = _file(cluster, "certificate-authority")
        if path:
            with open(path, "rb") as f:
                info["certificate-authority-data"] = base64.b64encode(f.read()).decode("ascii")
    for ext in data.get("extensions") or []:
        if isinstance(ext, dict) and ext.get("name") == "client.authentication.k8s.io/exec":
            info["config"] = ext.get("extension")
    return info
