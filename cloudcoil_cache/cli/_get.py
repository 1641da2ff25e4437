"""``get``: a kubectl-like listing served from an informer cache, and ``-w`` to follow its changes."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from typing import Any, Callable, Sequence, TextIO

import yaml

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.cli._cluster import connect
from cloudcoil_cache.cli._columns import columns_for, format_table
from cloudcoil_cache.cli._deadline import BoundedTransport, Deadline
from cloudcoil_cache.cli._errors import CliError
from cloudcoil_cache.cli._flags import check_get_flags, check_namespace
from cloudcoil_cache.cli._kinds import ResolvedKind, resolve_kind
from cloudcoil_cache.cli._signals import stop_on_signals
from cloudcoil_cache.errors import BadRequest, CacheSyncTimeout

__all__ = ["STATE_POLL_SECONDS", "WatchHealth", "list_path", "run_get"]


def list_path(kind: ResolvedKind, namespace: str | None) -> str:
    """The URL path that lists ``kind`` in ``namespace`` (all namespaces when None)."""
    base = f"/api/{kind.group_version}" if "/" not in kind.group_version else f"/apis/{kind.group_version}"
    if kind.namespaced and namespace:
        return f"{base}/namespaces/{namespace}/{kind.plural}"
    return f"{base}/{kind.plural}"


def _wire(obj: Any) -> dict[str, Any]:
    data: dict[str, Any] = obj.to_dict()
    return data


def _scope_text(namespace: str | None, kind: ResolvedKind) -> str:
    return f" in {namespace} namespace" if (namespace and kind.namespaced) else ""


class _Printer:
    """Writes the chosen output format; safe to call from the handler thread and the main thread."""

    def __init__(
        self, kind: ResolvedKind, output: str | None, all_namespaces: bool, out: TextIO, watch_events: bool
    ) -> None:
        self.kind = kind
        self.output = output
        self.out = out
        self.wide = output == "wide"
        self.show_ns = all_namespaces and kind.namespaced
        self.columns = columns_for(kind.kind)
        self.watch_events = watch_events
        self._lock = threading.Lock()
        self._widths: list[int] = []

    def _type_name(self) -> str:
        group = self.kind.group_version.rpartition("/")[0]
        return self.kind.kind.lower() + (f".{group}" if group else "")

    def _row(self, obj: dict[str, Any]) -> list[str]:
        return self.columns.cells(obj, wide=self.wide, namespaced=self.show_ns)

    def _header(self) -> list[str]:
        return self.columns.header(wide=self.wide, namespaced=self.show_ns)

    def _write(self, text: str) -> None:
        with self._lock:
            self.out.write(text)
            self.out.flush()

    def listing(self, objs: Sequence[dict[str, Any]], single: bool) -> None:
        """Print ``objs`` once: a table, names, or one JSON/YAML document (a List unless ``single``)."""
        if self.output in ("json", "yaml"):
            doc: Any = (
                objs[0]
                if single
                else {"apiVersion": "v1", "kind": "List", "items": list(objs), "metadata": {"resourceVersion": ""}}
            )
            self._write(json.dumps(doc, indent=4) + "\n" if self.output == "json" else yaml.safe_dump(doc))
            return
        if self.output == "name":
            self._write("".join(f"{self._type_name()}/{o['metadata']['name']}\n" for o in objs))
            return
        rows = [self._header()] + [self._row(o) for o in objs]
        if self.watch_events:
            rows = [["EVENT", *rows[0]]] + [["ADDED", *r] for r in rows[1:]]
        lines = format_table(rows)
        self._widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        self._write("".join(line + "\n" for line in lines))

    def event(self, event: str, obj: dict[str, Any]) -> None:
        """Print one change seen by the informer (a row aligned under the first listing, or a document)."""
        if self.output == "json":
            doc = {"type": event, "object": obj} if self.watch_events else obj
            self._write(json.dumps(doc, indent=4) + "\n")
            return
        if self.output == "yaml":
            doc = {"type": event, "object": obj} if self.watch_events else obj
            self._write("---\n" + yaml.safe_dump(doc))
            return
        if self.output == "name":
            self._write(f"{self._type_name()}/{obj['metadata']['name']}\n")
            return
        cells = ([event] if self.watch_events else []) + self._row(obj)
        widths = self._widths or [len(c) for c in cells]
        text = "   ".join(c.ljust(widths[i]) if i < len(widths) else c for i, c in enumerate(cells)).rstrip()
        self._write(text + "\n")


def run_get(args: Any, out: TextIO | None = None) -> int:
    """List (or follow, with ``-w``) objects of one kind from an informer cache; returns the exit status."""
    out = out or sys.stdout
    check_get_flags(args)
    with connect(args) as connector, contextlib.ExitStack() as scope:
        with Deadline(args.timeout) as deadline:  # discovery, the probe and the sync end by --timeout
            live = connector.config()
            kind = resolve_kind(BoundedTransport(live.transport, deadline), args.kind)
            namespace: str | None = None
            if kind.namespaced and not args.all_namespaces:
                namespace = args.namespace or live.namespace
                check_namespace(namespace, flag=bool(args.namespace))
            _probe(deadline, live.transport, kind, namespace, args)
            cache = Cache(
                resources=[kind.cls],
                namespaces=[namespace] if namespace else None,
                label_selector=args.selector,
                field_selector=args.field_selector,
                mode="strict",
                sync_timeout=deadline.left_for(f"the cache's initial list of {kind.qualified}"),
                resync_period=None,
            )
            config = connector.config(cache)
            assert config.cache is not None
            informer = config.cache.get_informer(kind.cls, sync=True)
            assert informer is not None  # None only for a disabled cache
            try:
                scope.enter_context(config)  # waits for the sync
            except CacheSyncTimeout as exc:
                raise CliError(
                    f"the cache's initial list of {kind.qualified} did not complete in {deadline.waited()}; "
                    "the cluster may be slow or the kind very large: retry with a larger --timeout",
                    1,
                ) from exc
        # kubectl ignores --output-watch-events without --watch
        printer = _Printer(kind, args.output, args.all_namespaces, out, args.output_watch_events and args.watch)
        if args.name:
            found = informer.get(args.name, namespace)
            if found is None:
                raise CliError(f'{kind.qualified} "{args.name}" not found{_scope_text(namespace, kind)}', 1)
            objs = [_wire(found)]
        else:
            objs = sorted(
                (_wire(o) for o in informer.list()),
                key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]),
            )
        if objs or args.watch:
            printer.listing(objs, single=bool(args.name))
        else:
            where = _scope_text(namespace, kind) or ("" if kind.namespaced is False else " in any namespace")
            print(f"No resources found{where}.", file=sys.stderr)
        if args.watch:
            _follow(informer, printer, objs, args.name, kind.qualified)
    return 0


def _probe(deadline: Deadline, transport: Any, kind: ResolvedKind, namespace: str | None, args: Any) -> None:
    """One small LIST: a selector the server refuses (400) or a missing permission (403) fails in a
    moment, instead of the informer retrying it until the sync times out."""
    params = {"limit": "1"}
    if args.selector:
        params["labelSelector"] = args.selector
    if args.field_selector:
        params["fieldSelector"] = args.field_selector
    try:
        deadline.request(
            transport, "GET", list_path(kind, namespace), params=params, headers={"Accept": "application/json"}
        )
    except BadRequest as exc:
        if not (args.selector or args.field_selector):
            raise
        given = ", ".join(
            f"{flag} {text!r}"
            for flag, text in (("-l/--selector", args.selector), ("--field-selector", args.field_selector))
            if text
        )
        raise CliError(
            f"the API server refused the selector ({given}) for {kind.qualified}: {exc.message or exc}", 1
        ) from exc


#: How often ``-w`` looks at the informer's state (to say when the watch is lost and when it recovers).
STATE_POLL_SECONDS = 0.2


def _follow(
    informer: Any,
    printer: _Printer,
    shown: list[dict[str, Any]],
    name: str | None,
    what: str,
    err: TextIO | None = None,
) -> None:
    """Print each change the informer sees until Ctrl-C or SIGTERM, and on stderr a line each time the
    informer stops being current (the API server went away, a 403, ...) and when it is current again."""
    # A handler registered now first receives an add for every cached object: skip those already shown.
    printed = {(o["metadata"].get("uid"), o["metadata"].get("resourceVersion")) for o in shown}
    stop = threading.Event()

    def handler(event: str) -> Callable[..., None]:
        def handle(*objs: Any) -> None:
            obj = _wire(objs[-1])
            meta = obj.get("metadata") or {}
            if name is not None and meta.get("name") != name:
                return
            if event == "ADDED" and (meta.get("uid"), meta.get("resourceVersion")) in printed:
                printed.discard((meta.get("uid"), meta.get("resourceVersion")))
                return
            printer.event(event, obj)

        return handle

    # in one step: a delete arriving between separate registrations would never be printed
    handles = informer.add_event_handler(
        on_add=handler("ADDED"), on_update=handler("MODIFIED"), on_delete=handler("DELETED")
    )
    health = WatchHealth(what, err or sys.stderr)
    try:
        with stop_on_signals(stop):
            health.check(informer.status())
            while not stop.wait(STATE_POLL_SECONDS):
                health.check(informer.status())
    finally:
        for handle in handles:
            handle.remove()


class WatchHealth:
    """Says on ``err``, once per change, when an informer stops being current and when it recovers."""

    def __init__(self, what: str, err: TextIO) -> None:
        self._what = what
        self._err = err
        self._state = "current"  # -w starts from a synced informer

    def check(self, status: Any) -> str | None:
        """Look at an ``InformerStatus``; returns the line printed, if its state changed."""
        state = str(getattr(status, "state", None) or "current")
        if state == self._state:
            return None
        self._state = state
        if state == "current":
            line = f"watch: {self._what}: current again (resource version {status.resource_version}); changes follow"
        else:
            error = " ".join(str(status.last_error or "no error reported").split())  # one line
            line = f"watch: {self._what}: {state}, the listing may be out of date ({error}); retrying"
        self._err.write(line + "\n")
        self._err.flush()
        return line
