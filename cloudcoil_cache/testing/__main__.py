"""CLI: ``python -m cloudcoil_cache.testing serve|real --kubeconfig PATH`` runs the fake or a real API server."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from typing import Any, Iterator, Sequence

from ._files import write_private
from ._real import RealAPIServer
from .apiserver.seed import seed_pods
from .apiserver.server import FakeAPIServer

__all__ = ["main"]


def _parser(prog: str = "python -m cloudcoil_cache.testing") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="A fake Kubernetes API server for local testing.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve until Ctrl-C / SIGTERM")
    serve.add_argument(
        "--kubeconfig",
        required=True,
        help="write a kubeconfig for the server here (0600; when serve exits it is removed, or what "
        "was there before is put back)",
    )
    serve.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: random)")
    serve.add_argument("--pods", type=int, default=0, help="seed this many realistic pods")
    serve.add_argument("--namespace", default="default", help="the kubeconfig context's namespace")
    serve.add_argument(
        "--bookmark-interval",
        type=float,
        default=60.0,
        help="seconds between watch BOOKMARK events (default 60)",
    )
    serve.add_argument("--token", help="require this bearer token (written into the kubeconfig)")
    serve.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS with a generated CA (written into the kubeconfig; needs trustme or "
        "openssl); kubectl sends --token only over HTTPS",
    )
    serve.add_argument(
        "--no-namespace-lifecycle",
        action="store_true",
        help="accept objects in namespaces that do not exist (as FakeAPIServer() does)",
    )
    serve.add_argument(
        "--crd",
        action="append",
        default=[],
        metavar="GROUP/VERSION/KIND/PLURAL[:cluster]",
        help="serve a custom resource (namespaced unless ':cluster' follows); repeatable",
    )
    serve.add_argument("-v", "--verbose", action="store_true", help="log every request")
    real = sub.add_parser("real", help="run a real kube-apiserver + etcd until Ctrl-C / SIGTERM")
    real.add_argument("--kubeconfig", required=True, help="write the admin kubeconfig here once ready")
    real.add_argument(
        "--assets",
        help="folder with kube-apiserver, etcd, kubectl (default: KUBEBUILDER_ASSETS, "
        "then the cache folder of tools/real-apiserver/build)",
    )
    real.add_argument("--namespace", default="default", help="the kubeconfig context's namespace")
    return parser


def _real(args: argparse.Namespace, done: threading.Event) -> int:
    try:
        server = RealAPIServer(args.assets)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    with server:
        server.write_kubeconfig(args.kubeconfig, namespace=args.namespace)
        print(server.url, flush=True)
        print(
            f"kubeconfig written to {args.kubeconfig}; etcd at {server.etcd_url}; pids {server.pids}; Ctrl-C to stop",
            file=sys.stderr,
            flush=True,
        )
        while not done.wait(1.0):
            if len(server.pids) < 2:
                print(f"error: a server process exited; logs in {server.workdir}", file=sys.stderr)
                return 1
    return 0


def main(argv: Sequence[str] | None = None, prog: str = "python -m cloudcoil_cache.testing") -> int:
    """``serve`` or ``real`` (``prog``: the command named in usage and help texts)."""
    args = _parser(prog).parse_args(argv)
    done = threading.Event()
    with _stopping_on_signals(done):
        if args.command == "real":
            return _real(args, done)
        return _serve(args, done)


@contextlib.contextmanager
def _stopping_on_signals(done: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set ``done`` inside the block (and the handlers found are put back after).

    Only in the main thread (the only one that may): ``main()`` called from another thread stops
    on ``done`` alone. The library installs no signal handler anywhere else.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        done.set()

    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _serve(args: argparse.Namespace, done: threading.Event) -> int:
    if args.pods < 0:
        print("error: --pods must be >= 0", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    crds = []
    for spec in args.crd:
        path, _, scope = spec.partition(":")
        parts = path.split("/")
        if len(parts) != 4 or not all(parts) or scope not in ("", "cluster", "namespaced"):
            print(f"error: --crd {spec!r}: expected GROUP/VERSION/KIND/PLURAL[:cluster]", file=sys.stderr)
            return 2
        crds.append((*parts, scope != "cluster"))
    with contextlib.ExitStack() as cleanup:  # what serve wrote is removed however it ends (SIGTERM included)
        tls: dict[str, Any] = {}
        if args.tls:
            try:
                tls = _tls_files(cleanup)
            except RuntimeError as exc:
                print(f"error: --tls: {exc}", file=sys.stderr)
                return 2
        server = FakeAPIServer(
            port=args.port,
            bookmark_interval=args.bookmark_interval,
            expected_token=args.token,
            namespace_lifecycle=not args.no_namespace_lifecycle,
            **tls,
        )
        for group, version, kind, plural, namespaced in crds:
            server.register_resource(group, version, kind, plural, namespaced)
        folder = os.path.dirname(os.path.abspath(args.kubeconfig))
        if not os.path.isdir(folder):
            print(f"error: --kubeconfig {args.kubeconfig}: no folder {folder}", file=sys.stderr)
            return 2
        try:
            server.start()
        except OSError as exc:
            print(f"error: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        try:
            seed_pods(server, args.pods)
            cleanup.callback(_put_back, args.kubeconfig, _previous(args.kubeconfig))
            server.write_kubeconfig(args.kubeconfig, namespace=args.namespace, token=args.token)
            print(server.url, flush=True)
            print(
                f"kubeconfig written to {args.kubeconfig}; {args.pods} pods; Ctrl-C to stop",
                file=sys.stderr,
                flush=True,
            )
            while not done.wait(1.0):
                pass
        finally:
            server.stop()
    return 0


def _previous(path: str) -> tuple[bytes, int] | None:
    """What was at ``path`` before serve wrote there (a user's own kubeconfig must come back)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(), os.fstat(fh.fileno()).st_mode & 0o777
    except FileNotFoundError:
        return None


def _put_back(path: str, previous: tuple[bytes, int] | None) -> None:
    """Remove what serve wrote at ``path``, or restore what was there before (its content and mode)."""
    if previous is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    content, mode = previous
    write_private(path, content)
    os.chmod(path, mode)


def _tls_files(cleanup: contextlib.ExitStack) -> dict[str, Any]:
    """A CA and a server certificate for 127.0.0.1/localhost: FakeAPIServer TLS arguments.

    The keys are written 0600 in a 0700 folder that ``cleanup`` removes.
    """
    folder = tempfile.mkdtemp(prefix="cloudcoil-fake-tls-")
    cleanup.callback(shutil.rmtree, folder, ignore_errors=True)
    cert, key = os.path.join(folder, "server.crt"), os.path.join(folder, "server.key")
    trustme: Any = None
    try:
        import trustme
    except ImportError:
        pass
    if trustme is not None:
        ca = trustme.CA()
        issued = ca.issue_cert("127.0.0.1", "localhost")
        issued.cert_chain_pems[0].write_to_path(cert)
        write_private(key, issued.private_key_pem.bytes())
        return {"certfile": cert, "keyfile": key, "ca_cert": ca.cert_pem.bytes()}
    ca_cert, ca_key = os.path.join(folder, "ca.crt"), os.path.join(folder, "ca.key")
    for private in (key, ca_key):  # created 0600 before openssl writes into them (it keeps the mode)
        write_private(private, b"")
    ext = os.path.join(folder, "ext.cnf")
    with open(ext, "w", encoding="utf-8") as fh:
        fh.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    commands = [
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "365",
            "-subj",
            "/CN=fake-ca",
            "-keyout",
            ca_key,
            "-out",
            ca_cert,
        ],
        [
            "openssl",
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            key,
            "-out",
            os.path.join(folder, "server.csr"),
        ],
        [
            "openssl",
            "x509",
            "-req",
            "-in",
            os.path.join(folder, "server.csr"),
            "-CA",
            ca_cert,
            "-CAkey",
            ca_key,
            "-CAcreateserial",
            "-days",
            "365",
            "-extfile",
            ext,
            "-out",
            cert,
        ],
    ]
    for command in commands:
        try:
            subprocess.run(command, check=True, capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as exc:
            raise RuntimeError(f"neither trustme nor a working openssl: {exc}") from None
    with open(ca_cert, "rb") as fh:
        return {"certfile": cert, "keyfile": key, "ca_cert": fh.read()}


if __name__ == "__main__":
    sys.exit(main())
