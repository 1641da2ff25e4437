"""A real kube-apiserver and etcd on loopback for tests: ``RealAPIServer`` (the envtest model)."""

from __future__ import annotations

import base64
import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any, Callable, Literal, Sequence

import yaml

from ._files import write_private

__all__ = [
    "BUILD_COMMAND",
    "ETCD_VERSION",
    "KUBERNETES_VERSION",
    "RealAPIServer",
    "cache_assets_dir",
    "find_assets",
]

#: The versions ``tools/real-apiserver/build`` pins (its go.mod); a test checks they agree.
KUBERNETES_VERSION = "v1.33.13"
ETCD_VERSION = "v3.5.21"
#: How to build the binaries, from a checkout of this project.
BUILD_COMMAND = "tools/real-apiserver/build"

_REQUIRED = ("kube-apiserver", "etcd")
_PR_SET_PDEATHSIG = 1
_STDERR_TAIL = 4000

User = Literal["admin", "restricted"]


def cache_assets_dir(kubernetes_version: str = KUBERNETES_VERSION, etcd_version: str = ETCD_VERSION) -> Path:
    """The folder ``tools/real-apiserver/build`` fills when ``KUBEBUILDER_ASSETS`` is not set."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cloudcoil_cache" / "real-apiserver" / f"{kubernetes_version}-{etcd_version}"


def _has_binaries(folder: Path) -> bool:
    return all(os.access(folder / name, os.X_OK) for name in _REQUIRED)


def find_assets(assets: str | os.PathLike[str] | None = None) -> Path:
    """The folder holding ``kube-apiserver`` and ``etcd`` (and usually ``kubectl``).

    Looked up in ``assets``, then ``$KUBEBUILDER_ASSETS``, then the build script's cache folder
    (the pinned versions first, then any other version it built).

    Raises:
        RuntimeError: none of those places holds both binaries; the message names each place and
            the build command.
    """
    tried: list[str] = []
    if assets is not None:
        folder = Path(assets)
        if _has_binaries(folder):
            return folder
        tried.append(f"assets={os.fspath(folder)!r} (no executable kube-apiserver and etcd there)")
    else:
        tried.append("assets= (not given)")
    env = os.environ.get("KUBEBUILDER_ASSETS")
    if env:
        if _has_binaries(Path(env)):
            return Path(env)
        tried.append(f"$KUBEBUILDER_ASSETS={env!r} (no executable kube-apiserver and etcd there)")
    else:
        tried.append("$KUBEBUILDER_ASSETS (not set)")
    pinned = cache_assets_dir()
    if _has_binaries(pinned):
        return pinned
    others = sorted((p for p in pinned.parent.glob("*") if p.is_dir() and _has_binaries(p)), reverse=True)
    if others:
        return others[0]
    tried.append(f"{pinned} (the build script's cache folder: not built)")
    raise RuntimeError(
        "RealAPIServer: no kube-apiserver and etcd binaries found; looked in: "
        + "; ".join(tried)
        + f". Build them with `{BUILD_COMMAND}` (needs Go; prints the folder it fills) or point "
        "KUBEBUILDER_ASSETS at an envtest assets folder (setup-envtest use)."
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _child_setup() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child die with SIGKILL when its parent thread goes (Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def setup() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return setup


def _openssl(*args: str, cwd: Path) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("RealAPIServer needs the openssl command to generate its CA and keys")
    done = subprocess.run([openssl, *args], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args[:2])} failed: {done.stderr.strip()[-_STDERR_TAIL:]}")


def _generate_pki(folder: Path) -> None:
    """ca.crt/ca.key, serving.crt/serving.key (127.0.0.1, localhost) and sa.key in ``folder``."""
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "3650",
        "-subj",
        "/CN=cloudcoil-cache-real-ca",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        cwd=folder,
    )
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "serving.key",
        "-out",
        "serving.csr",
        "-subj",
        "/CN=kube-apiserver",
        cwd=folder,
    )
    (folder / "serving.ext").write_text(
        "basicConstraints=CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,"
        "DNS:kubernetes.default,DNS:kubernetes.default.svc\n"
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        "serving.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "serving.crt",
        "-days",
        "3650",
        "-extfile",
        "serving.ext",
        cwd=folder,
    )
    _openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "sa.key", cwd=folder)


def _tail(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-_STDERR_TAIL:].decode("utf-8", "replace")


class RealAPIServer:
    """A real kube-apiserver backed by a real etcd, both on 127.0.0.1, for the duration of a scope.

    ``with RealAPIServer() as server:`` starts etcd (temporary data dir, free ports) and
    kube-apiserver (TLS with a generated CA, a static token file with an ``admin`` user in
    ``system:masters`` and a ``restricted`` user with no RBAC grants, RBAC authorisation, a generated
    service-account signing key, the flags envtest uses, etcd compaction by the API server turned
    off) and waits until ``/readyz`` answers and the ``default`` namespace exists.

    Child processes are started from one long-lived thread of this object and, on Linux, get
    ``PR_SET_PDEATHSIG=SIGKILL``: they die with the Python process even when it is killed.
    On other systems they are stopped by ``stop()`` only. A killed Python process leaves its temporary
    folder (``workdir``, about 125 MB: etcd preallocates its WAL) behind.

    Args:
        assets: folder with ``kube-apiserver``, ``etcd`` and (optionally) ``kubectl``; default:
            ``find_assets()`` (``$KUBEBUILDER_ASSETS``, then the build script's cache folder).
        startup_timeout: seconds each process gets to become ready.
        apiserver_flags: extra ``--flag=value`` arguments for kube-apiserver (appended, so they win).
    """

    def __init__(
        self,
        assets: str | os.PathLike[str] | None = None,
        *,
        startup_timeout: float = 90.0,
        apiserver_flags: Sequence[str] = (),
    ) -> None:
        self.assets = find_assets(assets)
        self.startup_timeout = startup_timeout
        self.apiserver_flags = tuple(apiserver_flags)
        kubectl = self.assets / "kubectl"
        #: ``kubectl`` from the assets folder, or ``None`` when there is none.
        self.kubectl_path: Path | None = kubectl if os.access(kubectl, os.X_OK) else None
        self.tokens: dict[str, str] = {"admin": secrets.token_hex(16), "restricted": secrets.token_hex(16)}
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._launcher: ThreadPoolExecutor | None = None
        self._dir: Path | None = None
        self._etcd: subprocess.Popen[bytes] | None = None
        self._apiserver: subprocess.Popen[bytes] | None = None
        self._logs: list[IO[bytes]] = []
        self.port = 0
        self.etcd_port = 0
        self._etcd_peer_port = 0
        self.ca_cert = b""

    # ---------------------------------------------------------------- properties

    @property
    def url(self) -> str:
        """``https://127.0.0.1:<port>`` of kube-apiserver."""
        return f"https://127.0.0.1:{self.port}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.etcd_port}"

    @property
    def pids(self) -> dict[str, int]:
        """The running processes' ids: ``{"etcd": ..., "kube-apiserver": ...}``."""
        found = {}
        for name, proc in (("etcd", self._etcd), ("kube-apiserver", self._apiserver)):
            if proc is not None and proc.poll() is None:
                found[name] = proc.pid
        return found

    @property
    def workdir(self) -> Path:
        """The temporary folder holding certificates, tokens, etcd's data and the processes' logs."""
        if self._dir is None:
            raise RuntimeError("RealAPIServer is not started")
        return self._dir

    # ---------------------------------------------------------------- lifecycle

    def __enter__(self) -> RealAPIServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start etcd and kube-apiserver and wait until both are ready; idempotent."""
        with self._lock:
            if self._launcher is not None:
                return
            self._stopping.clear()
            self._launcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="RealAPIServer-launcher")
            try:
                self._dir = Path(tempfile.mkdtemp(prefix="cloudcoil-real-apiserver-"))
                (self._dir / "pki").mkdir()
                _generate_pki(self._dir / "pki")
                self.ca_cert = (self._dir / "pki" / "ca.crt").read_bytes()
                self._write_tokens()
                self._start_etcd()
                self.port = _free_port()
                self._start_apiserver()
            except BaseException:
                self.stop()
                raise

    def stop(self) -> None:
        """Stop kube-apiserver, then etcd; remove the temporary folder. Safe to call twice."""
        with self._lock:
            self._stopping.set()
            self._terminate(self._apiserver)
            self._apiserver = None
            self._terminate(self._etcd)
            self._etcd = None
            if self._launcher is not None:
                self._launcher.shutdown(wait=True)
                self._launcher = None
            for log in self._logs:
                log.close()
            self._logs.clear()
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None

    def restart_apiserver(self) -> None:
        """Stop kube-apiserver and start it again on the same port, keeping etcd and its data.

        Clients see their connections dropped; the new process's watch cache starts at etcd's
        current revision (a watch from an older resourceVersion gets 410 Gone).
        """
        with self._lock:
            self._require_started()
            self._terminate(self._apiserver)
            self._apiserver = None
            self._start_apiserver()

    def restart_etcd(self) -> None:
        """Stop etcd and start it again on the same ports and data (kube-apiserver keeps running)."""
        with self._lock:
            self._require_started()
            self._terminate(self._etcd)
            self._etcd = None
            self._start_etcd(keep_ports=True)
            if self._apiserver is not None:
                self._wait_apiserver()

    def set_token(self, user: User, token: str) -> None:
        """Change ``user``'s bearer token in the static token file; takes effect at the next
        ``restart_apiserver()`` (kube-apiserver reads the file at start-up)."""
        with self._lock:
            self._require_started()
            self.tokens[user] = token
            self._write_tokens()

    # ---------------------------------------------------------------- etcd

    def etcd_revision(self) -> int:
        """etcd's current revision (the newest resourceVersion of any object)."""
        reply = self._etcd_post("/v3/kv/range", {"key": base64.b64encode(b"/").decode(), "limit": 1})
        return int(reply["header"]["revision"])

    def compact(self) -> int:
        """Compact etcd's history at its current revision (physically); returns that revision.

        Afterwards a LIST ``continue`` token or a watch from an older resourceVersion that reaches
        etcd gets 410 Gone. Watches served by kube-apiserver's watch cache keep working from
        versions still in the cache; ``restart_apiserver()`` empties the cache.
        """
        revision = self.etcd_revision()
        try:
            self._etcd_post("/v3/kv/compaction", {"revision": str(revision), "physical": True})
        except RuntimeError as exc:
            if "compacted" not in str(exc):  # already compacted at this revision
                raise
        return revision

    def _etcd_post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            self.etcd_url + path,
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                reply: dict[str, Any] = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"etcd {path}: HTTP {exc.code}: {exc.read().decode('utf-8', 'replace')}") from exc
        return reply

    # ---------------------------------------------------------------- clients

    def write_kubeconfig(
        self,
        path: str | os.PathLike[str],
        *,
        user: User = "admin",
        namespace: str = "default",
        server: str | None = None,
        token_file: str | os.PathLike[str] | None = None,
    ) -> str:
        """Write a kubeconfig (CA data, the user's bearer token) for this server; returns the path.

        ``user="admin"`` is in ``system:masters``; ``user="restricted"`` is authenticated but has no
        RBAC grants (every LIST of a namespaced kind gets 403). ``server`` replaces the URL (a proxy
        in front of this server on 127.0.0.1: the serving certificate is for 127.0.0.1 and localhost).
        ``token_file``: write the user's token to this file and reference it as ``tokenFile`` (clients
        re-read it after a 401; see ``set_token``) instead of embedding the token.
        """
        if user not in self.tokens:
            raise ValueError(f"user must be one of {sorted(self.tokens)}, got {user!r}")
        credentials: dict[str, str] = {"token": self.tokens[user]}
        if token_file is not None:
            write_private(token_file, self.tokens[user])
            credentials = {"tokenFile": os.fspath(token_file)}
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "preferences": {},
            "clusters": [
                {
                    "name": "real",
                    "cluster": {
                        "server": server or self.url,
                        "certificate-authority-data": base64.b64encode(self.ca_cert).decode(),
                    },
                }
            ],
            "users": [{"name": user, "user": credentials}],
            "contexts": [{"name": "real", "context": {"cluster": "real", "user": user, "namespace": namespace}}],
            "current-context": "real",
        }
        return write_private(path, yaml.safe_dump(config, sort_keys=False))  # it holds credentials: 0600

    def ssl_context(self) -> ssl.SSLContext:
        """An SSL context that trusts this server's CA."""
        return ssl.create_default_context(cadata=self.ca_cert.decode())

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        user: User = "admin",
        content_type: str = "application/json",
        timeout: float = 30.0,
    ) -> tuple[int, Any]:
        """One raw HTTP request to kube-apiserver; returns ``(status, decoded JSON or text)``.

        ``body`` is sent as JSON unless it is ``bytes``/``str``. Errors are returned, not raised.
        """
        data: bytes | None
        if body is None:
            data = None
        elif isinstance(body, bytes):
            data = body
        elif isinstance(body, str):
            data = body.encode()
        else:
            data = json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={
                "Authorization": f"Bearer {self.tokens[user]}",
                "Accept": "application/json",
                **({"Content-Type": content_type} if data is not None else {}),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=self.ssl_context()) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode("utf-8", "replace")

    def kubectl(
        self, *args: str, user: User = "admin", input: str | None = None, timeout: float = 60.0
    ) -> subprocess.CompletedProcess[str]:
        """Run the assets folder's kubectl against this server (never raises on a non-zero exit)."""
        if self.kubectl_path is None:
            raise RuntimeError(f"no kubectl in {self.assets}; {BUILD_COMMAND} builds one")
        kubeconfig = self.workdir / f"kubeconfig-{user}"
        if not kubeconfig.exists():
            self.write_kubeconfig(kubeconfig, user=user)
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
        env["KUBECONFIG"] = os.fspath(kubeconfig)
        env["HOME"] = os.fspath(self.workdir)  # kubectl's discovery cache stays in the temp folder
        return subprocess.run(
            [os.fspath(self.kubectl_path), *args],
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )

    # ---------------------------------------------------------------- internals

    def _require_started(self) -> None:
        if self._launcher is None or self._dir is None:
            raise RuntimeError("RealAPIServer is not started")

    def _write_tokens(self) -> None:
        assert self._dir is not None
        lines = [
            f'{self.tokens["admin"]},admin,admin-uid,"system:masters"',
            f"{self.tokens['restricted']},restricted,restricted-uid",
        ]
        tmp = self._dir / "tokens.csv.tmp"
        tmp.write_text("\n".join(lines) + "\n")
        tmp.replace(self._dir / "tokens.csv")

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        """Start a child from the launcher thread (PDEATHSIG follows the thread that forks)."""
        assert self._launcher is not None and self._dir is not None
        log = open(self._dir / f"{name}.log", "ab")
        self._logs.append(log)
        setup = _child_setup()

        def launch() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=setup,
                start_new_session=True,
                cwd=self._dir,
            )

        return self._launcher.submit(launch).result()

    @staticmethod
    def _terminate(proc: subprocess.Popen[bytes] | None) -> None:
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(15)

    def _wait_ready(self, name: str, proc: subprocess.Popen[bytes], probe: Callable[[], bool]) -> None:
        assert self._dir is not None
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"{name} exited with status {proc.returncode} while starting; "
                    f"its log ends:\n{_tail(self._dir / f'{name}.log')}"
                )
            try:
                if probe():
                    return
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{name} not ready within {self.startup_timeout} s; "
                    f"its log ends:\n{_tail(self._dir / f'{name}.log')}"
                )
            if self._stopping.wait(0.1):
                raise RuntimeError(f"RealAPIServer stopped while {name} was starting")

    def _start_etcd(self, keep_ports: bool = False) -> None:
        assert self._dir is not None
        if not keep_ports:
            self.etcd_port, self._etcd_peer_port = _free_port(), _free_port()
        client, peer = self.etcd_url, f"http://127.0.0.1:{self._etcd_peer_port}"
        argv = [
            os.fspath(self.assets / "etcd"),
            "--name=default",
            f"--data-dir={self._dir / 'etcd'}",
            f"--listen-client-urls={client}",
            f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=default={peer}",
            "--unsafe-no-fsync=true",
            "--log-level=warn",
        ]
        self._etcd = self._spawn("etcd", argv)

        def healthy() -> bool:
            with urllib.request.urlopen(self.etcd_url + "/health", timeout=2) as response:
                return bool(json.loads(response.read()).get("health") == "true")

        self._wait_ready("etcd", self._etcd, healthy)

    def _start_apiserver(self) -> None:
        assert self._dir is not None
        pki = self._dir / "pki"
        argv = [
            os.fspath(self.assets / "kube-apiserver"),
            f"--etcd-servers={self.etcd_url}",
            "--etcd-compaction-interval=0",  # tests compact with compact(), never behind their back
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={self.port}",
            f"--cert-dir={pki}",
            f"--tls-cert-file={pki / 'serving.crt'}",
            f"--tls-private-key-file={pki / 'serving.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            f"--token-auth-file={self._dir / 'tokens.csv'}",
            "--authorization-mode=RBAC",
            f"--service-account-key-file={pki / 'sa.key'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            # envtest's defaults:
            "--allow-privileged=true",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--disable-admission-plugins=ServiceAccount",
            # loopback only: no endpoints for the kubernetes Service (127.0.0.1 is not a valid endpoint)
            "--endpoint-reconciler-type=none",
            "--profiling=false",
            *self.apiserver_flags,
        ]
        self._apiserver = self._spawn("kube-apiserver", argv)
        self._wait_apiserver()

    def _wait_apiserver(self) -> None:
        assert self._apiserver is not None
        context = self.ssl_context()

        def get(path: str) -> int:
            request = urllib.request.Request(
                self.url + path, headers={"Authorization": f"Bearer {self.tokens['admin']}"}
            )
            try:
                with urllib.request.urlopen(request, timeout=5, context=context) as response:
                    return int(response.status)
            except urllib.error.HTTPError as exc:
                return int(exc.code)

        self._wait_ready(
            "kube-apiserver",
            self._apiserver,
            lambda: get("/readyz") == 200 and get("/api/v1/namespaces/default") == 200,
        )
