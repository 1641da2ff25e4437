"""CLI: ``python -m cloudcoil_cache.testing serve|real --kubeconfig PATH`` runs the fake or a real API server."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import Any, Sequence

from ._objects import seed_pods
from ._real import RealAPIServer
from ._server import FakeAPIServer

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m cloudcoil_cache.testing",
        description="A fake Kubernetes API server for local testing.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve until Ctrl-C / SIGTERM")
    serve.add_argument("--kubeconfig", required=True, help="write a kubeconfig for the server here")
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
        "--crd", action="append", default=[], metavar="GROUP/VERSION/KIND/PLURAL[:cluster]",
        help="serve a custom resource (namespaced unless ':cluster' follows); repeatable",
    )
    serve.add_argument("-v", "--verbose", action="store_true", help="log every request")
    real = sub.add_parser("real", help="run a real kube-apiserver + etcd until Ctrl-C / SIGTERM")
    real.add_argument("--kubeconfig", required=True, help="write the admin kubeconfig here once ready")
    real.add_argument("--assets", help="folder with kube-apiserver, etcd, kubectl (default: KUBEBUILDER_ASSETS, "
                      "then the cache folder of tools/real-apiserver/build)")
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
        print(f"kubeconfig written to {args.kubeconfig}; etcd at {server.etcd_url}; pids {server.pids}; "
              "Ctrl-C to stop", file=sys.stderr, flush=True)
        while not done.wait(1.0):
            if len(server.pids) < 2:
                print(f"error: a server process exited; logs in {server.workdir}", file=sys.stderr)
                return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "real":
        real_done = threading.Event()
        signal.signal(signal.SIGINT, lambda signum, frame: real_done.set())
        signal.signal(signal.SIGTERM, lambda signum, frame: real_done.set())
        return _real(args, real_done)
    if args.pods < 0:
        print("error: --pods must be >= 0", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    done = threading.Event()

    def _stop(signum: int, frame: Any) -> None:
        done.set()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    crds = []
    for spec in args.crd:
        path, _, scope = spec.partition(":")
        parts = path.split("/")
        if len(parts) != 4 or not all(parts) or scope not in ("", "cluster", "namespaced"):
            print(f"error: --crd {spec!r}: expected GROUP/VERSION/KIND/PLURAL[:cluster]", file=sys.stderr)
            return 2
        crds.append((*parts, scope != "cluster"))
    server = FakeAPIServer(port=args.port, bookmark_interval=args.bookmark_interval,
                           expected_token=args.token)
    for group, version, kind, plural, namespaced in crds:
        server.register_resource(group, version, kind, plural, namespaced)
    with server:
        seed_pods(server, args.pods)
        server.write_kubeconfig(args.kubeconfig, namespace=args.namespace, token=args.token)
        print(server.url, flush=True)
        print(
            f"kubeconfig written to {args.kubeconfig}; {args.pods} pods; Ctrl-C to stop",
            file=sys.stderr,
            flush=True,
        )
        while not done.wait(1.0):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
