"""The ``cloudcoil-cache`` / ``python -m cloudcoil_cache`` argument parser and command dispatch."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Sequence

from cloudcoil_cache import __version__
from cloudcoil_cache.cli._errors import CliError, explain
from cloudcoil_cache.cli._flags import adopt_positionals

__all__ = ["build_parser", "main"]

PROG = "python -m cloudcoil_cache"


def _cluster_options() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("cluster")
    group.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
    group.add_argument("--context", help="kubeconfig context to use (default: its current-context)")
    group.add_argument(
        "--fake",
        action="store_true",
        help="use an embedded fake cluster with realistic pods, deployments and configmaps",
    )
    group.add_argument("--fake-pods", type=int, default=24, metavar="N", help="pods in the --fake cluster (24)")
    group.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="how long to wait for the cluster: discovery, the first request and the "
        "cache's initial sync together (30)",
    )
    group.add_argument("-n", "--namespace", help="namespace (default: the context's)")
    group.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")
    return parent


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="cloudcoil_cache: a client-side Kubernetes informer cache for Python.",
        epilog=f"Start with: {PROG} demo",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks and the library's log")
    parser.add_argument("--version", action="version", version=f"cloudcoil_cache {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="a live view of an informer cache on an embedded fake cluster",
        description="Start an embedded fake cluster with churning pods, cache it and show "
        "the cache live: the initial list, events, status, and recovery from "
        "injected faults. Ends after --duration seconds or on Ctrl-C.",
    )
    demo.add_argument("--pods", type=int, default=2000, help="pods to start with (2000)")
    demo.add_argument(
        "--duration",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="end by itself after this many seconds (30; 0 runs until Ctrl-C)",
    )
    demo.add_argument(
        "--rate", type=float, default=40.0, metavar="PER_SECOND", help="changes per second made by the churn (40)"
    )
    demo.add_argument(
        "--fault-every",
        type=float,
        default=7.0,
        metavar="SECONDS",
        help="inject a fault (dropped watch, 410 Gone, 503s) this often, none too near the end to recover (7; 0 never)",
    )
    demo.add_argument("--plain", action="store_true", help="plain text output even on a terminal")

    get = sub.add_parser(
        "get",
        parents=[_cluster_options()],
        help="list objects of a kind from an informer cache",
        description="Like kubectl get, served from an informer cache: KIND is a kubectl name "
        "(pods, po, deploy, svc, cm, ns, no, deployments.apps, a CRD's plural).",
    )
    get.add_argument("kind", metavar="KIND")
    get.add_argument("name", metavar="NAME", nargs="?")
    get.add_argument("-l", "--selector", help="label selector, e.g. app=web,tier!=cache")
    get.add_argument("--field-selector", help="field selector, e.g. status.phase=Running")
    get.add_argument("-o", "--output", choices=["wide", "yaml", "json", "name"], help="output format")
    get.add_argument("-w", "--watch", action="store_true", help="after listing, print changes until Ctrl-C")
    get.add_argument(
        "--output-watch-events", action="store_true", help="with -w, add an EVENT column (ADDED, MODIFIED, DELETED)"
    )

    status = sub.add_parser(
        "status",
        parents=[_cluster_options()],
        help="sync informers for some kinds and print the cache's status",
        description="Sync one informer per KIND (pods when none is given; all namespaces "
        "unless -n) and print cache.status() as a table.",
    )
    status.add_argument("kinds", metavar="KIND", nargs="*")

    sub.add_parser("serve", add_help=False, help="run the fake API server (python -m cloudcoil_cache.testing serve)")
    sub.add_parser(
        "real",
        add_help=False,
        help="run a real kube-apiserver + etcd on loopback (python -m cloudcoil_cache.testing real)",
    )
    return parser


def _delegate(command: str, rest: list[str]) -> int:
    from cloudcoil_cache import testing
    from cloudcoil_cache.testing.__main__ import main as testing_main

    if command == "real" and not hasattr(testing, "RealAPIServer"):
        raise CliError(
            "the real API server is not available in this version of cloudcoil_cache "
            "(cloudcoil_cache.testing has no RealAPIServer); use 'serve' for the fake server",
            2,
        )
    return int(testing_main([command, *rest], prog="python -m cloudcoil_cache") or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit status (errors: one line on stderr, 1 or 2)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args, rest = parser.parse_known_args(args_list)
    if args.command != "serve":  # serve configures logging itself (-v: every request)
        # A one-shot command's one-line error says it all: the library's own log stays quiet. A
        # watch (get -w) keeps its ERRORs: a handler that fails to print an event says so.
        quiet = logging.ERROR if getattr(args, "watch", False) or args.command == "real" else logging.CRITICAL
        logging.basicConfig(level=logging.DEBUG if args.debug else quiet, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.command in ("serve", "real"):
            if args.debug and args.command == "serve":
                rest = [*rest, "--verbose"]
            return _delegate(args.command, rest)
        rest = adopt_positionals(args, rest)  # get pods -n ns NAME, as kubectl takes it
        if rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        if args.command == "demo":
            from cloudcoil_cache.cli._demo import run_demo

            return run_demo(args)
        if args.command == "get":
            from cloudcoil_cache.cli._get import run_get

            return run_get(args)
        from cloudcoil_cache.cli._status import run_status

        return run_status(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # every failure: one line, unless --debug asks for the traceback
        if args.debug:
            raise
        message, code = explain(exc)
        print(f"error: {message}", file=sys.stderr)
        return code
