"""Threads are started in one place: ``cloudcoil_cache._runnable`` (``RunnableThread``), read from the source.

No module of the library (the fake API server in testing/ aside: an independent oracle) calls
``threading.Thread(...)``, subclasses ``threading.Thread`` (but through ``RunnableThread``), imports
``Thread`` from ``threading`` or starts a raw thread otherwise (``threading.Timer``,
``_thread.start_new_thread``); a ``ThreadPoolExecutor`` must register its workers (``_runnable.adopt``
from its initializer). ``tests/lifetimes/test_threads_owned.py`` checks the same at run time.
"""

from __future__ import annotations

import ast
from pathlib import Path

import cloudcoil_cache

PACKAGE = Path(cloudcoil_cache.__file__).parent
ALLOWED = {"_runnable.py"}  # the one thread implementation
#: Raw threads in files of another area, not converted yet (they may only go): file -> what.
KNOWN: dict[str, set[str]] = {}
#: Executors whose initializer registers every worker with ``_runnable.adopt``.
ADOPTING = {"_threads.py", "client/_async_client.py"}


def _raw_threads(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(), str(path))
    found: list[tuple[str, int]] = []

    def name_of(node: ast.AST) -> str:
        if isinstance(node, ast.Attribute):
            return f"{name_of(node.value)}.{node.attr}"
        if isinstance(node, ast.Name):
            return node.id
        return ""

    raw = {"threading.Thread", "threading.Timer", "_thread.start_new_thread", "_thread.start_new"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and name_of(node.func) in raw | {"ThreadPoolExecutor"}:
            found.append((name_of(node.func), node.lineno))
        elif isinstance(node, ast.ClassDef):
            found += [(f"class({name_of(b)})", node.lineno) for b in node.bases if name_of(b) in raw]
        elif isinstance(node, ast.ImportFrom) and node.module in ("threading", "_thread"):
            found += [(f"from {node.module} import {a.name}", node.lineno) for a in node.names if a.name != "local"]
        elif isinstance(node, ast.Import) and any(a.name == "_thread" for a in node.names):
            found.append(("import _thread", node.lineno))
    return found


def test_every_thread_is_started_through_the_runnable_module() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in ALLOWED or rel.startswith("testing/"):
            continue
        for what, line in _raw_threads(path):
            if what in KNOWN.get(rel, set()):
                continue
            if what == "ThreadPoolExecutor" and rel in ADOPTING:
                continue
            offenders.append(f"{rel}:{line}: {what}")
    assert not offenders, "start threads with cloudcoil_cache._runnable.RunnableThread: " + "; ".join(offenders)


def test_the_known_exceptions_are_still_there() -> None:
    """A raw thread converted is taken off ``KNOWN`` (the list only shrinks)."""
    for rel, whats in KNOWN.items():
        assert whats <= {what for what, _ in _raw_threads(PACKAGE / rel)}, rel


def test_the_check_sees_a_raw_thread(tmp_path: Path) -> None:
    module = tmp_path / "mod.py"
    module.write_text(
        "import threading\nfrom threading import Thread\n"
        "threading.Thread(target=print).start()\nclass T(threading.Thread):\n    pass\n"
    )
    assert sorted(what for what, _ in _raw_threads(module)) == [
        "class(threading.Thread)",
        "from threading import Thread",
        "threading.Thread",
    ]


def test_the_watch_relay_is_the_one_detached_thread() -> None:
    """Every thread is joined by its owner on stop, but the watch's stop-event relay (``detached``)."""
    detached = sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if path.name != "_runnable.py" and "detached=True" in path.read_text()
    )
    assert detached == ["client/_watch.py"]
