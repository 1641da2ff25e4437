"""Checks of the command-line flags before anything connects: each error is one line naming the flag."""

from __future__ import annotations

import math
import re
from typing import Any, NoReturn

from cloudcoil_cache._listwatch import parse_field_selector, parse_label_selector
from cloudcoil_cache.cli._errors import CliError
from cloudcoil_cache.errors import InvalidSelector

__all__ = [
    "MAX_FAKE_PODS",
    "MAX_RATE",
    "MAX_SECONDS",
    "adopt_positionals",
    "check_cluster_flags",
    "check_count",
    "check_get_flags",
    "check_namespace",
    "check_rate",
    "check_seconds",
]

# The longest wait a flag may ask for (about 11.6 days): far below threading.TIMEOUT_MAX, the most a
# thread can wait at once (a larger value overflows in Event.wait), and longer than any use of a timeout.
MAX_SECONDS = 1_000_000

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def check_seconds(flag: str, value: float, *, zero: bool = False) -> float:
    """``value`` when it is a number of seconds > 0 (>= 0 with ``zero``) and at most ``MAX_SECONDS``,
    else a CliError naming ``flag``."""
    if not (math.isfinite(value) and (value > 0 or (zero and value == 0))):
        _bad(flag, f"must be a number of seconds {'>= 0' if zero else '> 0'}", value)
    if value > MAX_SECONDS:
        _bad(flag, f"must be at most {MAX_SECONDS} seconds", value)
    return value


#: The most pods the embedded fake cluster is asked to hold (it keeps each in memory, ~20 KB of
#: Python objects per pod there, besides the cache's own copy).
MAX_FAKE_PODS = 200_000
#: The most changes per second the demo is asked to make (the fake cluster applies ~1,000/s).
MAX_RATE = 10_000


def check_count(flag: str, value: int, maximum: int = MAX_FAKE_PODS) -> int:
    """``value`` when it is a whole number in ``[0, maximum]``, else a CliError naming ``flag``."""
    if value < 0:
        _bad(flag, "must be a whole number >= 0", value)
    if value > maximum:
        _bad(flag, f"must be at most {maximum}", value)
    return value


def check_rate(flag: str, value: float) -> float:
    """``value`` when it is a finite number in ``[0, MAX_RATE]``, else a CliError naming ``flag``."""
    if not (math.isfinite(value) and value >= 0):
        _bad(flag, "must be a number >= 0", value)
    if value > MAX_RATE:
        _bad(flag, f"must be at most {MAX_RATE} per second", value)
    return value


def _bad(flag: str, rule: str, value: float) -> NoReturn:
    shown = f"{value:g}" if isinstance(value, float) else str(value)
    raise CliError(f"{flag} {rule}, got {shown}", 2)


def check_namespace(namespace: str | None, flag: bool) -> None:
    """A namespace the API server would accept (a DNS-1123 label); ``flag``: it came from ``-n``."""
    if namespace is None or _DNS1123_LABEL.fullmatch(namespace):
        return
    where = "-n/--namespace" if flag else "the kubeconfig context's namespace"
    raise CliError(
        f"{where}: {namespace!r} is not a valid namespace name (at most 63 lowercase letters, "
        "digits and '-', starting and ending with a letter or digit)",
        2 if flag else 1,
    )


def check_cluster_flags(args: Any) -> None:
    """The flags every cluster command takes (``--timeout``, ``--fake-pods``, ``-n``)."""
    check_seconds("--timeout", args.timeout)
    check_count("--fake-pods", args.fake_pods)
    if args.namespace and not args.all_namespaces:
        check_namespace(args.namespace, flag=True)


def check_get_flags(args: Any) -> None:
    """``get``'s flags: the cluster flags, NAME, ``-l`` and ``--field-selector``."""
    check_cluster_flags(args)
    if args.name is not None and not args.name.strip():
        raise CliError("NAME must not be empty; leave it out to list every object", 2)
    if args.all_namespaces and args.name:
        raise CliError("a resource cannot be retrieved by name across all namespaces; drop -A or give -n", 2)
    for flag, text, parse in (
        ("-l/--selector", args.selector, parse_label_selector),
        ("--field-selector", args.field_selector, parse_field_selector),
    ):
        if text is None:
            continue
        try:
            parse(text)
        except InvalidSelector as exc:  # its text without the "400 BadRequest" of the API's form
            raise CliError(f"{flag}: {exc.message}", 2) from None


def adopt_positionals(args: Any, rest: list[str]) -> list[str]:
    """Positional arguments argparse left over after options (``get pods -n a web``): give them to
    NAME (``get``) or KIND... (``status``), as kubectl does; returns what is still unrecognized."""
    if args.command not in ("get", "status"):
        return rest
    loose = [item for item in rest if not item.startswith("-")]
    if args.command == "status":
        args.kinds = [*args.kinds, *loose]
    elif args.name is None and len(loose) == 1:
        args.name = loose[0]
    else:
        return rest
    return [item for item in rest if item not in loose]
