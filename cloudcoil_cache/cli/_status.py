"""``status``: sync informers for the given kinds and print ``cache.status()`` as a table."""

from __future__ import annotations

import sys
from typing import Any, Sequence, TextIO

from cloudcoil_cache.caching import Cache, CacheStatus
from cloudcoil_cache.cli._cluster import connect
from cloudcoil_cache.cli._columns import format_table
from cloudcoil_cache.cli._console import rich_console
from cloudcoil_cache.cli._deadline import BoundedTransport, Deadline
from cloudcoil_cache.cli._flags import check_cluster_flags
from cloudcoil_cache.cli._kinds import resolve_kind
from cloudcoil_cache.errors import CloudcoilError

__all__ = ["informer_state", "run_status", "status_rows"]

HEADER = [
    "KIND",
    "NAMESPACE",
    "SELECTOR",
    "SYNCED",
    "STATE",
    "OBJECTS",
    "RESOURCE-VERSION",
    "RELISTS",
    "BACKLOG",
    "LAST-ERROR",
]


def informer_state(info: Any) -> str:
    """The informer's state (``current``/``degraded``/``stale``/``failing``), or one inferred when not reported."""
    state = getattr(info, "state", None)
    if state:
        return str(state)
    if not getattr(info, "synced", False):
        return "syncing"
    return "degraded" if getattr(info, "last_error", None) else "current"


def status_rows(status: CacheStatus) -> list[list[str]]:
    """One row per informer, under ``HEADER``."""
    rows = []
    for info in status.informers:
        selector = ",".join(s for s in (info.label_selector, info.field_selector) if s) or "-"
        backlog = sum(info.handler_backlogs.values()) if info.handler_backlogs else 0
        rows.append(
            [
                info.kind,
                info.namespace or "*",
                selector,
                "yes" if info.synced else "no",
                informer_state(info),
                str(info.object_count),
                str(info.resource_version or "-"),
                str(info.relist_count),
                str(backlog),
                info.last_error or "-",
            ]
        )
    return rows


def _summary(status: CacheStatus) -> str:
    return (
        f"cache: ready={status.ready} mode={status.mode} informers={status.informer_count} "
        f"objects={status.resource_count}"
    )


def print_status(status: CacheStatus, out: TextIO) -> None:
    """A table (rich on a terminal, plain otherwise) and a summary line."""
    console = rich_console(out)
    if console is not None:
        from rich.table import Table

        table = Table(title=_summary(status), title_justify="left")
        for name in HEADER:
            table.add_column(name, overflow="fold", no_wrap=name != "LAST-ERROR")
        for row in status_rows(status):
            style = {"current": "green", "degraded": "yellow"}.get(row[4], "red")
            table.add_row(*row[:4], f"[{style}]{row[4]}[/]", *row[5:])
        console.print(table)
        return
    out.write(_summary(status) + "\n")
    out.write("".join(line + "\n" for line in format_table([HEADER, *status_rows(status)])))
    out.flush()


def run_status(args: Any, out: TextIO | None = None) -> int:
    """Sync one informer per kind (``pods`` when none is named), print the status; 1 if any is not synced."""
    out = out or sys.stdout
    names: Sequence[str] = args.kinds or ["pods"]
    check_cluster_flags(args)
    with connect(args) as connector, Deadline(args.timeout) as deadline:  # every wait ends by --timeout
        live = connector.config()
        kinds = [resolve_kind(BoundedTransport(live.transport, deadline), name) for name in names]
        namespace = None if args.all_namespaces or not args.namespace else args.namespace
        cache = Cache(
            resources=[k.cls for k in kinds],
            namespaces=[namespace] if namespace else None,
            sync_timeout=deadline.left_for("the cache's initial sync"),
            resync_period=None,
            mode="fallback",
        )
        config = connector.config(cache)
        assert config.cache is not None
        with config:  # waits for the sync; in fallback mode a kind that fails is reported, not raised
            # A hard failure of one kind ends the scope's wait at once: give every other kind the
            # rest of the timeout, so that the table shows each kind's own outcome.
            for informer in config.cache.informers():
                try:
                    informer.wait_for_sync(deadline.remaining())
                except CloudcoilError:
                    pass  # this kind failed hard: its row says why
            status = config.cache.status()
        print_status(status, out)
    if not status.ready:
        failing = "; ".join(f"{k}: {v}" for k, v in status.errors.items()) or "not synced in time"
        print(f"error: not every informer synced ({failing})", file=sys.stderr)
        return 1
    return 0
