"""The demo's two views: a live ``rich`` screen on a terminal, and plain lines when piped."""

from __future__ import annotations

import time
from typing import Any, TextIO

from cloudcoil_cache.cli._snapshot import Snapshot

__all__ = ["LiveView", "PlainView"]

_MB = 1_000_000
_STATE_STYLE = {
    "current": "bold green",
    "degraded": "bold yellow",
    "stale": "bold red",
    "failing": "bold red",
    "syncing": "cyan",
    "starting": "cyan",
}
_EVENT_STYLE = {
    "ADDED": "green",
    "MODIFIED": "cyan",
    "DELETED": "magenta",
    "FAULT": "bold red",
    "RECOVERED": "bold green",
    "WAITING": "yellow",
}


def _since(snap: Snapshot) -> str:
    return "-" if snap.seconds_since_current is None else f"{snap.seconds_since_current:.1f} s"


def _ends(snap: Snapshot) -> str:
    return "Ctrl-C to stop" if snap.remaining is None else f"ends in {snap.remaining:.0f} s · Ctrl-C to stop"


class PlainView:
    """Lines of text: loading progress, then a status line per second and every fault and recovery."""

    event_lines = 50

    def __init__(self, out: TextIO, url: str, args: Any) -> None:
        self._out = out
        self._url = url
        self._args = args
        self._last_line = 0.0
        self._last_event = 0.0
        self._announced_sync = False

    def __enter__(self) -> PlainView:
        self._print(
            f"cloudcoil_cache demo: fake API server at {self._url} with {self._args.pods} pods; "
            f"churn {self._args.rate:g} changes/s; a fault every {self._args.fault_every:g} s"
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self._out.flush()

    def _print(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()

    def frame(self, snap: Snapshot) -> None:
        now = time.monotonic()
        if snap.loading:
            if now - self._last_line >= 0.5:
                self._last_line = now
                self._print(
                    f"loading: {snap.loaded_objects}/{snap.total_objects} pods "
                    f"({snap.loaded_bytes / _MB:.1f}/{snap.total_bytes / _MB:.1f} MB) listed"
                )
            return
        if not self._announced_sync:
            self._announced_sync = True
            self._print(
                f"synced: {snap.cache_objects} pods ({snap.total_bytes / _MB:.1f} MB) listed in "
                f"{(snap.load_seconds or 0) * 1000:.0f} ms; handlers receive them as on_add"
            )
        for at, kind, _key, text in snap.notes:
            if at > self._last_event:
                self._last_event = at
                self._print(f"{kind.lower()}: {text}")
        if snap.final or now - self._last_line >= 1.0:
            self._last_line = now
            self._print(
                f"t={snap.elapsed:4.1f}s state={snap.state} pods cache={snap.cache_objects} "
                f"server={snap.server_objects} rv={snap.resource_version} events/s={snap.events_per_second:.0f} "
                f"backlog={snap.backlog} relists={snap.relists} added={snap.counts['added']} "
                f"modified={snap.counts['modified']} deleted={snap.counts['deleted']} "
                f"Pod.list(team-a)={snap.read_count} pods in {snap.read_micros:.0f} µs"
            )

    def finish(
        self, agreed: bool, count: int, rv: str, counts: dict[str, int], churn_error: BaseException | None
    ) -> None:
        if churn_error is not None:
            self._print(f"churn stopped early: {churn_error}")
        self._print(
            f"handlers received {counts['initial']} initial objects, {counts['added']} adds, "
            f"{counts['modified']} updates and {counts['deleted']} deletes"
        )
        if agreed:
            self._print(f"verified: the cache holds exactly the server's {count} pods (resource version {rv})")
        else:
            self._print(f"MISMATCH: the cache ({count} pods) did not converge to the server within 10 s")


class LiveView:
    """A ``rich`` screen redrawn every frame: progress bar while listing, then status and an event stream."""

    def __init__(self, out: TextIO, url: str, args: Any) -> None:
        from rich.console import Console

        self._console = Console(file=out)
        self._url = url
        self._args = args
        self._live: Any = None
        self.event_lines = max(5, min(20, self._console.size.height - 26))

    def __enter__(self) -> LiveView:
        from rich.live import Live

        self._live = Live(console=self._console, auto_refresh=False, transient=False)
        self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.__exit__(None, None, None)

    def frame(self, snap: Snapshot) -> None:
        self._live.update(self._render(snap), refresh=True)

    def _render(self, snap: Snapshot) -> Any:
        from rich.console import Group
        from rich.panel import Panel
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        title = (
            f"[bold]cloudcoil_cache demo[/] · fake API server {self._url} · churn {self._args.rate:g}/s · {_ends(snap)}"
        )
        parts: list[Any] = []
        load = Table.grid(padding=(0, 1))
        load.add_column(width=16)
        load.add_column(width=40)
        load.add_column()
        if snap.loading:
            label = Text("initial LIST", style="bold cyan")
            load.add_row(
                label,
                ProgressBar(total=max(1, snap.total_objects), completed=snap.loaded_objects, width=40),
                f"{snap.loaded_objects}/{snap.total_objects} pods · "
                f"{snap.loaded_bytes / _MB:.1f}/{snap.total_bytes / _MB:.1f} MB",
            )
        else:
            load.add_row(
                Text("initial LIST", style="bold green"),
                ProgressBar(total=1, completed=1, width=40),
                f"{snap.total_objects} pods · {snap.total_bytes / _MB:.1f} MB in "
                f"{(snap.load_seconds or 0) * 1000:.0f} ms",
            )
        parts.append(load)

        status = Table.grid(padding=(0, 2))
        for _ in range(4):
            status.add_column()
        style = _STATE_STYLE.get(snap.state, "bold")
        status.add_row("informer state", Text(snap.state, style=style), "resource version", snap.resource_version)
        status.add_row("pods in cache", str(snap.cache_objects), "pods on server", str(snap.server_objects))
        status.add_row("events/s", f"{snap.events_per_second:.0f}", "handler backlog", str(snap.backlog))
        status.add_row("relists", str(snap.relists), "since current", _since(snap))
        status.add_row("faults injected", str(snap.faults), "API LISTs since sync", str(snap.lists_since_sync))
        status.add_row(
            "adds / updates / deletes",
            f"{snap.counts['added']} / {snap.counts['modified']} / {snap.counts['deleted']}",
            "initial objects",
            str(snap.counts["initial"]),
        )
        if snap.read_count:
            status.add_row(
                "cached read",
                f"Pod.list(namespace='team-a') → {snap.read_count} pods in {snap.read_micros:.0f} µs (from memory)",
                "",
                "",
            )
        if snap.last_error:
            status.add_row("last error", Text(snap.last_error, style="yellow"), "", "")
        parts.append(Panel(status, title="Pod informer", title_align="left"))

        if snap.notes:
            notes = Table.grid(padding=(0, 1))
            notes.add_column(width=7, justify="right")
            notes.add_column(width=9)
            notes.add_column()
            for at, kind, _key, text in snap.notes[-4:]:
                notes.add_row(
                    f"{at - (time.monotonic() - snap.elapsed):6.1f}s",
                    Text(kind, style=_EVENT_STYLE.get(kind, "")),
                    text,
                )
            parts.append(
                Panel(notes, title="faults injected into the fake API server, and recovery", title_align="left")
            )

        events = Table(box=None, show_header=True, header_style="bold", padding=(0, 1))
        events.add_column("t", width=7, justify="right")
        events.add_column("event", width=9)
        events.add_column("pod", width=34, overflow="ellipsis", no_wrap=True)
        events.add_column("detail", overflow="ellipsis", no_wrap=True)
        start = time.monotonic() - snap.elapsed
        rows = snap.recent[-self.event_lines :]
        for at, kind, key, detail in rows:
            events.add_row(f"{at - start:6.1f}s", Text(kind, style=_EVENT_STYLE.get(kind, "")), key, detail)
        for _ in range(self.event_lines - len(rows)):
            events.add_row("", "", "", "")
        parts.append(Panel(events, title="events seen by the handlers", title_align="left"))
        return Panel(Group(*parts), title=title, title_align="left")

    def finish(
        self, agreed: bool, count: int, rv: str, counts: dict[str, int], churn_error: BaseException | None
    ) -> None:
        console = self._console
        if churn_error is not None:
            console.print(f"[yellow]churn stopped early: {churn_error}[/]")
        console.print(
            f"handlers received {counts['initial']} initial objects, {counts['added']} adds, "
            f"{counts['modified']} updates and {counts['deleted']} deletes"
        )
        if agreed:
            console.print(
                f"[green]verified:[/] the cache holds exactly the server's {count} pods (resource version {rv})"
            )
        else:
            console.print(f"[red]MISMATCH:[/] the cache ({count} pods) did not converge to the server within 10 s")
