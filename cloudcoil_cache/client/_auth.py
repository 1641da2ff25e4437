"""Credentials sources: static token, rotating token file, exec plugins, and kubeconfig reloading.

Each class implements ``_http.Credentials`` (``auth_header()``, ``refresh()``) and is thread-safe.
None of them logs a secret, and every ``repr()`` shows ``***`` in place of one.
"""

from __future__ import annotations

import base64
import datetime
import json
import logging
import os
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Mapping

import attrs

from .. import _json
from .._http import ClientCertificateSource, Credentials
from ..errors import ConfigError, DecodeError

__all__ = [
    "BasicAuth",
    "ExecConfig",
    "ExecCredentials",
    "ReloadingCredentials",
    "StaticToken",
    "TokenFile",
    "bearer_token",
]

log = logging.getLogger(__name__)

EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")


def _checked_token(token: str, where: str) -> str:
    """``token`` stripped; ConfigError (without the value) if it cannot go in an HTTP header."""
    token = token.strip()
    if not token:
        raise ConfigError(f"{where}: the token is empty")
    if any(ord(c) < 0x20 or ord(c) > 0x7E for c in token):
        raise ConfigError(f"{where}: the token has characters not allowed in an HTTP header (value not shown)")
    return token


class StaticToken:
    """A bearer token that never changes (``refresh()`` has nothing to reload)."""

    def __init__(self, token: str) -> None:
        if not isinstance(token, str) or not token.strip():
            raise ConfigError("token must be a non-empty string")
        self._header = f"Bearer {_checked_token(token, 'token')}"

    def auth_header(self) -> str | None:
        return self._header

    def refresh(self) -> bool:
        return False

    def _source_key(self) -> object:
        return ("token", self._header)

    def __repr__(self) -> str:
        return "StaticToken(***)"


class BasicAuth:
    """HTTP basic authentication from a kubeconfig ``username``/``password``."""

    def __init__(self, username: str, password: str) -> None:
        self._username = username
        raw = f"{username}:{password}".encode()
        self._header = "Basic " + base64.b64encode(raw).decode("ascii")

    def auth_header(self) -> str | None:
        return self._header

    def refresh(self) -> bool:
        return False

    def _source_key(self) -> object:
        return ("basic", self._header)

    def __repr__(self) -> str:
        return f"BasicAuth(username={self._username!r}, password=***)"


class TokenFile:
    """A bearer token read from a file, re-read every ``reread_interval`` seconds and on refresh().

    Bound service-account tokens are rotated by the kubelet (about hourly), so the file is the
    source of truth. A failed re-read keeps the last good token and logs a warning.

    Raises:
        ConfigError: at construction, when the file cannot be read or is empty.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        reread_interval: float = 60.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = os.fspath(path)
        self._interval = reread_interval
        self._clock = clock
        self._lock = threading.Lock()
        token = self._read()
        if token is None:
            raise ConfigError(f"token file {self.path}: cannot be read, is empty or holds an invalid token")
        self._header = f"Bearer {token}"
        self._read_at = clock()

    def _read(self) -> str | None:
        try:
            with open(self.path, encoding="utf-8") as f:
                token = f.read().strip()
        except (OSError, UnicodeDecodeError) as e:
            log.warning("cannot read token file %s: %s", self.path, getattr(e, "strerror", None) or type(e).__name__)
            return None
        try:
            return _checked_token(token, f"token file {self.path}")
        except ConfigError as e:
            log.warning("%s", e)
            return None

    def _reload_locked(self) -> bool:
        self._read_at = self._clock()
        token = self._read()
        if token is None:
            return False
        self._header = f"Bearer {token}"
        return True

    def auth_header(self) -> str | None:
        with self._lock:
            if self._clock() - self._read_at >= self._interval:
                self._reload_locked()
            return self._header

    def refresh(self) -> bool:
        with self._lock:
            return self._reload_locked()

    def _source_key(self) -> object:
        return ("tokenFile", self.path)

    def __repr__(self) -> str:
        return f"TokenFile({self.path!r}, reread_interval={self._interval})"


@attrs.frozen(repr=False)
class ExecConfig:
    """A kubeconfig ``users[].user.exec`` block, validated; ``where`` names it in error messages."""

    command: str
    api_version: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    interactive_mode: str = "IfAvailable"
    provide_cluster_info: bool = False
    cluster: Mapping[str, Any] | None = None
    install_hint: str | None = None
    where: str = "exec plugin"

    def __repr__(self) -> str:  # env values may be secrets
        # args too may carry secrets (some plugins take a token or password as an argument)
        return (
            f"ExecConfig(command={self.command!r}, args=<{len(self.args)} hidden>, "
            f"api_version={self.api_version!r}, env=[{', '.join(k + '=***' for k, _ in self.env)}])"
        )


@attrs.frozen(repr=False)
class _ExecResult:
    token: str | None
    cert: tuple[bytes, bytes] | None
    expires_at: float | None  # wall-clock epoch seconds; None = until a 401


class ExecCredentials:
    """Credentials printed by an exec plugin (``client.authentication.k8s.io`` v1 / v1beta1).

    The plugin runs on first use; its result is cached until ``status.expirationTimestamp``
    (forever without one) and it runs again on ``refresh()``, i.e. after a 401. The plugin's
    stderr passes through to ours, as kubectl does; its stdout (which holds the secret) never
    appears in logs or errors.

    Runs are serialised *and merged*: requests that got a 401 with the same credentials
    (``generation()``) cause one run, whose result serves them all (``refresh_since``); a request
    that waited for a run that failed gets that failure instead of running the plugin again.
    Requests that need no run read the cached result without waiting for a run in progress.
    """

    def __init__(
        self,
        config: ExecConfig,
        *,
        clock: Callable[[], float] = time.time,
        timeout: float = 60.0,
        stdin_is_tty: bool | None = None,
    ) -> None:
        self.config = config
        self._clock = clock
        self._timeout = timeout
        self._stdin_is_tty = stdin_is_tty
        self._lock = threading.Lock()  # guards the fields below; never held while the plugin runs
        self._run_lock = threading.Lock()  # one plugin run at a time
        self._result: _ExecResult | None = None
        self._generation = 0  # +1 for every successful run
        self._attempts = 0  # +1 for every run, successful or not
        self._last_failure: str | None = None  # the message of the last run, if it failed

    def auth_header(self) -> str | None:
        token = self._current().token
        return f"Bearer {token}" if token else None

    def client_certificate(self) -> tuple[bytes, bytes] | None:
        return self._current().cert

    def generation(self) -> object:
        with self._lock:
            return self._generation

    def refresh(self) -> bool:
        self._run_merged(self.generation())
        return True

    def refresh_since(self, generation: object) -> bool:
        self._run_merged(generation)
        return True

    def _usable(self, result: _ExecResult | None) -> bool:
        return result is not None and (result.expires_at is None or self._clock() < result.expires_at)

    def _current(self) -> _ExecResult:
        with self._lock:
            result, generation = self._result, self._generation
        if result is not None and self._usable(result):
            return result
        return self._run_merged(generation)

    def _run_merged(self, generation: object) -> _ExecResult:
        """Run the plugin unless a run since ``generation`` already produced a usable result."""
        with self._lock:
            attempts = self._attempts
        with self._run_lock:
            with self._lock:
                result = self._result
                if self._generation != generation and result is not None and self._usable(result):
                    return result  # another thread's run, made while we waited, serves us too
                if self._attempts != attempts and self._last_failure is not None:
                    raise ConfigError(self._last_failure)  # it failed: the same answer, no rerun
                self._attempts += 1
            try:
                result = self._run()
            except ConfigError as e:
                with self._lock:
                    self._last_failure = str(e)
                raise
            with self._lock:
                self._result = result
                self._generation += 1
                self._last_failure = None
            return result

    def _source_key(self) -> object:
        return ("exec", self.config)

    def __repr__(self) -> str:
        return f"ExecCredentials({self.config!r})"

    def _run(self) -> _ExecResult:
        cfg = self.config
        interactive = self._interactive()
        env = dict(os.environ)
        env.update(dict(cfg.env))
        env["KUBERNETES_EXEC_INFO"] = json.dumps(self._exec_info(interactive))
        argv = [cfg.command, *cfg.args]
        log.debug("%s: running exec plugin %s", cfg.where, cfg.command)
        try:
            proc = subprocess.run(
                argv,
                env=env,
                stdin=None if interactive else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                timeout=self._timeout,
                check=False,
            )
        except FileNotFoundError:
            hint = f" ({cfg.install_hint.strip()})" if cfg.install_hint else ""
            raise ConfigError(f"{cfg.where}: exec plugin command {cfg.command!r} was not found{hint}") from None
        except subprocess.TimeoutExpired:
            raise ConfigError(
                f"{cfg.where}: exec plugin {cfg.command!r} did not finish within {self._timeout:g} s"
            ) from None
        except OSError as e:
            raise ConfigError(
                f"{cfg.where}: cannot run exec plugin {cfg.command!r}: {e.strerror or type(e).__name__}"
            ) from None
        if proc.returncode != 0:
            raise ConfigError(f"{cfg.where}: exec plugin {cfg.command!r} failed with exit status {proc.returncode}")
        return self._parse(proc.stdout)

    def _interactive(self) -> bool:
        cfg = self.config
        is_tty = self._stdin_is_tty
        if is_tty is None:
            is_tty = bool(sys.stdin) and sys.stdin.isatty()
        interactive = cfg.interactive_mode != "Never" and is_tty
        if cfg.interactive_mode == "Always" and not interactive:
            raise ConfigError(
                f"{cfg.where}: exec plugin {cfg.command!r} needs an interactive "
                "terminal (interactiveMode: Always) but stdin is not one"
            )
        return interactive

    def _exec_info(self, interactive: bool) -> dict[str, Any]:
        spec: dict[str, Any] = {"interactive": interactive}
        if self.config.provide_cluster_info and self.config.cluster is not None:
            spec["cluster"] = dict(self.config.cluster)
        return {"apiVersion": self.config.api_version, "kind": "ExecCredential", "spec": spec}

    def _parse(self, stdout: bytes) -> _ExecResult:
        cfg = self.config
        bad = f"{cfg.where}: exec plugin {cfg.command!r} printed"
        try:
            cred = _json.loads(stdout)
        except DecodeError:
            raise ConfigError(f"{bad} something that is not JSON (expected an ExecCredential)") from None
        if not isinstance(cred, dict) or cred.get("kind") != "ExecCredential":
            raise ConfigError(f"{bad} JSON that is not an ExecCredential")
        if cred.get("apiVersion") != cfg.api_version:
            raise ConfigError(
                f"{bad} an ExecCredential of another apiVersion (expected {cfg.api_version!r}; "
                "the value is not shown: the plugin's output may hold credentials)"
            )
        status = cred.get("status")
        if not isinstance(status, dict):
            raise ConfigError(f"{bad} an ExecCredential without 'status'")
        token = status.get("token") or None
        cert_pem, key_pem = status.get("clientCertificateData"), status.get("clientKeyData")
        if bool(cert_pem) != bool(key_pem):
            raise ConfigError(f"{bad} only one of status.clientCertificateData and status.clientKeyData")
        if not token and not cert_pem:
            raise ConfigError(f"{bad} neither status.token nor a client certificate")
        if token is not None and not isinstance(token, str):
            raise ConfigError(f"{bad} a status.token that is not a string")
        if token is not None:
            token = _checked_token(token, f"{cfg.where}: exec plugin {cfg.command!r} status.token")
        cert = (str(cert_pem).encode(), str(key_pem).encode()) if cert_pem else None
        return _ExecResult(token, cert, self._expiry(status.get("expirationTimestamp"), bad))

    @staticmethod
    def _expiry(value: object, bad: str) -> float | None:
        if value in (None, ""):
            return None
        try:
            when = datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            raise ConfigError(
                f"{bad} a status.expirationTimestamp that is not an RFC 3339 time (the value "
                "is not shown: the plugin's output may hold credentials)"
            ) from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.timezone.utc)
        return when.timestamp()


class ReloadingCredentials:
    """A kubeconfig user's credentials; after a 401 they are reloaded from the kubeconfig once.

    ``refresh()`` re-reads the kubeconfig file(s) through ``reload``. If the user's credentials
    changed there (a new token, another token file, another exec command) they replace the
    current ones; otherwise the current ones reload from their own source (token file re-read,
    exec plugin re-run). So a rotated token is picked up without a restart.
    """

    def __init__(self, current: Credentials, reload: Callable[[], Credentials | None], source: str) -> None:
        self._current = current
        self._reload = reload
        self._source = source
        self._lock = threading.Lock()  # guards _current and _swaps (held only briefly)
        self._refresh_lock = threading.Lock()  # one refresh at a time; auth_header() never waits for it
        self._swaps = 0

    @property
    def current(self) -> Credentials:
        with self._lock:
            return self._current

    def auth_header(self) -> str | None:
        return self.current.auth_header()

    def client_certificate(self) -> tuple[bytes, bytes] | None:
        cur = self.current
        return cur.client_certificate() if isinstance(cur, ClientCertificateSource) else None

    def generation(self) -> object:
        with self._lock:
            swaps, cur = self._swaps, self._current
        return (swaps, _generation_of(cur))

    def refresh(self) -> bool:
        return self.refresh_since(self.generation())

    def refresh_since(self, generation: object) -> bool:
        """Reload after a 401 on a request sent with ``generation``; merged like ``ExecCredentials``."""
        with self._refresh_lock:
            if self.generation() != generation:
                return True  # refreshed since that request was sent: retry with what we have now
            try:
                new = self._reload()
            except ConfigError as e:
                log.warning("%s: cannot reload credentials after a 401: %s", self._source, e)
                new = None
            with self._lock:
                cur = self._current
                changed = new is not None and _source_key(new) != _source_key(cur)
                if changed:
                    self._current = new  # type: ignore[assignment]
                    self._swaps += 1
            if not changed:
                inner = generation[1] if isinstance(generation, tuple) else None
                refresh_since = getattr(cur, "refresh_since", None)
                if inner is not None and callable(refresh_since):
                    return bool(refresh_since(inner))
                return cur.refresh()
        log.info("%s: credentials changed in the kubeconfig; using the new ones", self._source)
        return True

    def __repr__(self) -> str:
        return f"ReloadingCredentials({self.current!r}, source={self._source!r})"


def _generation_of(creds: Credentials) -> object:
    generation = getattr(creds, "generation", None)
    return generation() if callable(generation) else None


def _source_key(creds: Credentials) -> object:
    key = getattr(creds, "_source_key", None)
    return key() if callable(key) else id(creds)


def bearer_token(creds: Credentials | None) -> str | None:
    """The bearer token ``creds`` send now, without running anything to get one.

    A static token, or a token file's current contents; ``None`` for basic auth, client
    certificates and exec plugins (their token exists only once the plugin has run, at the
    first request; cloudcoil's ``Config.token`` is ``None`` for them too).
    """
    if isinstance(creds, ReloadingCredentials):
        creds = creds.current
    if not isinstance(creds, (StaticToken, TokenFile)):
        return None
    header = creds.auth_header()
    if header is None or not header.startswith("Bearer "):
        return None
    return header[len("Bearer ") :]
