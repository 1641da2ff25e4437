"""Fork awareness: which process this is, and the hooks that re-arm the library's objects in a fork child.

A ``fork()`` copies the process but only the thread that called it: a reflector thread, a handler
lane, a held lock and a socket shared with the parent come across as things that must never be
used. ``os.register_at_fork`` runs ``_after_in_child`` in the child of every fork made through
Python (``os.fork``, multiprocessing's fork, gunicorn, Celery's prefork pool); under uWSGI, which
forks in C and runs no such hook by default, the same function is appended to
``uwsgidecorators.postfork_chain`` (run in every worker whatever the flags); and ``check()``
compares the process id on the paths that are not hot (scopes, ``set_default()``, ``close()``,
``status()``), for any other fork made without the hooks.

In the child the hook only bumps ``epoch``, records the process id and calls each registered
object's own hook, which swaps its locks for new ones and *abandons* what it inherited (threads,
sockets, pools): kept referenced here (``abandon``) and never stopped, closed or shut down, since
they are the parent's as well. No I/O, no thread, no logging there: the hook also runs in a
``subprocess`` child with ``preexec_fn`` just before it execs. The objects start again in the child
at their next use (an informer resumes its watch from the resourceVersion it inherited: no LIST),
or at ``cloudcoil_cache.after_fork()``.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any, Callable

__all__ = ["abandon", "check", "epoch", "on_fork", "parent_pid", "pid", "renew_locks", "threads_unavailable"]

#: How many forks this process is from the one that imported the library (bumped in each child).
epoch = 0
#: This process's id as the hooks last saw it.
pid = os.getpid()
#: The process this one was forked from (None in the process that imported the library).
parent_pid: int | None = None

_hooks: list[Callable[[], Callable[[], None] | None]] = []  # weak: registering keeps nothing alive
_hooks_lock = threading.Lock()  # guards _hooks in this process (a new one in each child)
_prune_at = 256  # len(_hooks) at which the dead references are dropped (doubles with the live ones)
_abandoned: list[Any] = []  # what children inherited and must never touch again


def on_fork(hook: Callable[[], None]) -> None:
    """Call ``hook`` in every fork child (a bound method is held weakly: it dies with its object).

    It runs before anything else of the library in the child, in a process with one thread: it
    must only swap locks for new ones and drop references; no I/O, no threads, no logging.
    """
    ref: Callable[[], Callable[[], None] | None]
    if hasattr(hook, "__self__") and hasattr(hook, "__func__"):
        ref = weakref.WeakMethod(hook)
    else:
        ref = lambda: hook  # noqa: E731 - a plain function lives as long as its module
    global _hooks, _prune_at
    with _hooks_lock:
        _hooks.append(ref)
        if len(_hooks) >= _prune_at:  # a program that makes Configs and drops them: no growth
            _hooks = [r for r in _hooks if r() is not None]
            _prune_at = max(256, 2 * len(_hooks))


def renew_locks(namespace: dict[str, Any], **factories: Callable[[], Any]) -> None:
    """In every fork child, replace the module-level locks ``namespace[name]`` with new ones made
    by ``factories[name]`` (a lock held at the fork by a thread that is gone is held for ever)."""

    def renew() -> None:
        for name, factory in factories.items():
            namespace[name] = factory()

    on_fork(renew)


def abandon(obj: Any) -> None:
    """Keep ``obj`` referenced for the life of this process and never use it again (inherited I/O:
    closing it would run code on locks held by threads that do not exist here, and shutting a
    socket down would cut the parent's connection)."""
    _abandoned.append(obj)


def check() -> bool:
    """Re-arm the library if this process was forked without the hooks running (True if it was)."""
    if os.getpid() == pid:
        return False
    _after_in_child()
    return True


def _after_in_child() -> None:
    global epoch, pid, parent_pid, _hooks, _hooks_lock
    if os.getpid() == pid:
        return  # the hooks already ran in this process (uWSGI's chain after Python's own hook)
    _hooks_lock = threading.Lock()  # the parent's may be held by a thread that is gone
    parent_pid, pid = pid, os.getpid()
    epoch += 1
    hooks, _hooks = _hooks, []
    for ref in hooks:
        hook = ref()
        if hook is None:
            continue  # its object is gone: forget it
        _hooks.append(ref)
        try:
            hook()
        except Exception:  # noqa: BLE001 - one object's failure must not leave the others unarmed
            pass  # (no logging here: its lock may be held by a thread that is gone)


os.register_at_fork(after_in_child=_after_in_child)


def threads_unavailable() -> str | None:
    """Why this process cannot run the library's threads, or None. Under uWSGI without
    ``enable-threads`` (or ``threads``) Python threads never run while a worker waits for
    requests: a reflector would hold the cache still for good, and a scope would wait for a sync
    that never comes."""
    try:
        import uwsgi
    except ImportError:
        return None
    options = getattr(uwsgi, "opt", {}) or {}

    def on(name: str) -> bool:
        value = options.get(name, options.get(name.encode(), None))
        if isinstance(value, (list, tuple)):
            value = value[-1] if value else None
        if isinstance(value, bytes):
            value = value.decode(errors="replace")
        return value not in (None, False, "", "0", "false", "False")

    if not (on("enable-threads") or on("threads")):
        return (
            "uWSGI runs without threads: its Python threads (the cache's reflector and handler threads) never "
            "run while a worker waits for requests. Start uWSGI with --enable-threads (or --threads N)"
        )
    worker_id = getattr(uwsgi, "worker_id", lambda: -1)()
    if worker_id == 0 and not (on("lazy-apps") or on("lazy") or on("py-call-uwsgi-fork-hooks")):
        # uWSGI forks in C without taking the GIL first: a worker forked while the reflector
        # thread held it waits for it for ever (unbit/uwsgi#2387), and no Python fork hook runs
        return (
            "uWSGI loads this app in its master and forks the workers from it without Python's fork hooks "
            "(a worker forked while a cache thread holds the GIL hangs for good): start uWSGI with "
            "--py-call-uwsgi-fork-hooks (the workers then resume the master's cache: one LIST for all), "
            "or --lazy-apps (each worker loads the app and starts its own cache)"
        )
    return None


def _register_with_uwsgi() -> None:
    """Under uWSGI: run the hook in every worker after every fork (uWSGI forks in C, without Python's)."""
    try:
        import uwsgi  # noqa: F401 - importable only inside uWSGI
        import uwsgidecorators
    except ImportError:
        return
    uwsgidecorators.postfork_chain.append(_after_in_child)


_register_with_uwsgi()
