"""The command line of an Application: ``run``, ``manifests`` (YAML on stdout) and ``install``."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any, Protocol, Sequence

import yaml

from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CloudcoilError


class CommandTarget(Protocol):
    """What the command line uses of an ``Application``."""

    name: str
    module: str | None
    health_port: int | None
    health_host: str

    def run(self, stop: Any = None, *, health_port: int | None = None, health_host: str | None = None) -> None: ...

    def manifests(
        self,
        namespace: str | None = None,
        image: str | None = None,
        *,
        create_namespace: bool = False,
        config: Config | None = None,
    ) -> list[dict[str, Any]]: ...

    def install(
        self,
        config: Config | None = None,
        *,
        namespace: str | None = None,
        image: str | None = None,
        create_namespace: bool = False,
        wait: bool = False,
        timeout: float = 300.0,
    ) -> list[Any]: ...


__all__ = ["CommandTarget", "main", "parser"]

log = logging.getLogger("cloudcoil_cache.application")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0-65535, got {port}")
    return port


def parser(app: CommandTarget) -> argparse.ArgumentParser:
    """The argument parser of ``app``'s command line."""
    top = argparse.ArgumentParser(prog=app.module or app.name, description=f"The {app.name} application.")
    commands = top.add_subparsers(dest="command", required=True, metavar="{run,manifests,install}")
    run = commands.add_parser("run", help="run the controllers until SIGTERM/SIGINT")
    run.add_argument("--health-port", type=_port, default=None, help=f"health server port (default {app.health_port})")
    run.add_argument("--health-host", default=None, help=f"health server address (default {app.health_host})")
    for name, text in (("manifests", "print the manifests as YAML"), ("install", "server-side apply the manifests")):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("--namespace", "-n", default=None, help="where the application runs")
        sub.add_argument("--image", default=None, help="the container image (no Deployment without one)")
        sub.add_argument("--create-namespace", action="store_true", help="include the Namespace")
        sub.add_argument(
            "--kubeconfig",
            default=None,
            help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config)"
            + ("" if name == "install" else "; asked only for the plural of a kind from discovery"),
        )
        sub.add_argument("--context", default=None, help="kubeconfig context")
    install = commands.choices["install"]
    install.add_argument("--wait", action="store_true", help="wait until the Deployment is available")
    install.add_argument("--timeout", type=float, default=300.0, help="seconds --wait waits (default 300)")
    return top


def _config(args: argparse.Namespace) -> Config | None:
    """The Config ``--kubeconfig``/``--context`` name (None without them: the application's or the environment's)."""
    if args.kubeconfig or args.context:
        return Config(kubeconfig=args.kubeconfig, context=args.context)
    return None


def _manifests(app: CommandTarget, args: argparse.Namespace) -> None:
    config = _config(args)
    try:
        docs = app.manifests(args.namespace, args.image, create_namespace=args.create_namespace, config=config)
    finally:
        if config is not None:
            config.close()
    sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False))


def _install(app: CommandTarget, args: argparse.Namespace) -> None:
    config = _config(args)
    try:
        applied = app.install(
            config,
            namespace=args.namespace,
            image=args.image,
            create_namespace=args.create_namespace,
            wait=args.wait,
            timeout=args.timeout,
        )
    finally:
        if config is not None:
            config.close()
    for obj in applied:
        where = f"{obj.metadata.namespace}/" if obj.metadata.namespace else ""
        print(f"{obj.kind} {where}{obj.metadata.name} applied")


def main(app: CommandTarget, argv: Sequence[str] | None = None) -> None:
    """Parse ``argv`` (default ``sys.argv[1:]``) and run the command; ``SystemExit(1)`` with a one-line
    message on stderr when it fails."""
    args = parser(app).parse_args(argv)
    try:
        if args.command == "run":
            app.run(health_port=args.health_port, health_host=args.health_host)
        elif args.command == "manifests":
            _manifests(app, args)
        else:
            _install(app, args)
    except (CloudcoilError, ValueError, TypeError) as exc:
        print(f"{app.name} {args.command}: {type(exc).__name__}: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
