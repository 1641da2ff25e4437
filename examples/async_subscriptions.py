"""api.md reference example: direct subscriptions in an async program (run it as a script).

Against the fake server the driver makes one change of each kind (a new pod, an update, a
delete) and stops once the handlers have printed them; against a real cluster (``KUBECONFIG``)
it just watches for ``--seconds`` seconds.
"""

from __future__ import annotations

import argparse

# ---- the code of api.md, verbatim (noqa: its imports repeat the ones above) -------------------
import asyncio  # noqa: E402,F811
import contextlib
import sys
import threading
from typing import Callable, TextIO

from _fake_cluster import cluster

from cloudcoil_cache.caching import Cache  # noqa: E402
from cloudcoil_cache.client import Config  # noqa: E402
from cloudcoil_cache.models.kubernetes.core.v1 import Pod  # noqa: E402
from cloudcoil_cache.testing import FakeAPIServer, make_pod


async def watch_pods(done: asyncio.Event) -> None:
    cfg = Config(cache=Cache(resources=[Pod], wait_for_sync=True))
    await cfg.async_initialize()
    pods = cfg.cache.get_informer(Pod, sync=False)

    @pods.on_add
    def added(pod):
        print("added", pod.namespace, pod.name)

    @pods.on_update
    async def changed(old, new):
        print("changed", new.namespace, new.name)

    @pods.on_delete
    def removed(pod):
        print("removed", pod.namespace, pod.name)

    async with cfg:
        print(len(pods.list()))  # local read, synchronous even on an async informer
        await done.wait()


# ---- end of the api.md code ------------------------------------------------------------------


class Transcript:
    """A stdout that also keeps every printed line. Handlers print from several threads: each
    thread's text is buffered until its newline, so lines never interleave. ``await
    transcript.until(pred)`` waits (on the caller's loop) until ``pred(lines)`` holds."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._lock = threading.Lock()
        self._partial = threading.local()
        self.lines: list[str] = []
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None], Callable[[list[str]], bool]]] = []

    def write(self, text: str) -> int:
        buffered = getattr(self._partial, "text", "") + text
        *complete, self._partial.text = buffered.split("\n")
        if complete:
            with self._lock:
                self.lines.extend(complete)
                self._out.write("".join(line + "\n" for line in complete))
                waiters = list(self._waiters)
            for loop, future, pred in waiters:
                loop.call_soon_threadsafe(self._check, future, pred)
        return len(text)

    def flush(self) -> None:
        self._out.flush()

    def _check(self, future: asyncio.Future[None], pred: Callable[[list[str]], bool]) -> None:
        with self._lock:
            lines = list(self.lines)
        if not future.done() and pred(lines):
            future.set_result(None)

    async def until(self, pred: Callable[[list[str]], bool], timeout: float = 10.0) -> None:
        loop = asyncio.get_running_loop()
        entry = (loop, loop.create_future(), pred)
        with self._lock:
            self._waiters.append(entry)
        try:
            self._check(entry[1], pred)
            await asyncio.wait_for(entry[1], timeout)
        finally:
            with self._lock:
                self._waiters.remove(entry)

    async def line(self, text: str, timeout: float = 10.0) -> None:
        await self.until(lambda lines: text in lines, timeout)


async def drive(server: FakeAPIServer | None, transcript: Transcript, seconds: float) -> None:
    """Run ``watch_pods`` and stop it: after one change of each kind (fake server) or ``seconds``."""
    done = asyncio.Event()
    watcher = asyncio.ensure_future(watch_pods(done))
    try:
        if server is None:
            asyncio.get_running_loop().call_later(seconds, done.set)
        else:
            for namespace, name in (("default", "web-0"), ("default", "web-1"), ("other", "web-0")):
                await transcript.line(f"added {namespace} {name}")
            await transcript.line("3")  # the scope's local read ran before the first change
            server.create("pods", make_pod("web-2", "default"), "default")
            await transcript.line("added default web-2")
            server.patch("pods", "web-0", {"metadata": {"labels": {"tier": "edge"}}}, "default")
            await transcript.line("changed default web-0")
            server.delete("pods", "web-1", "default")
            await transcript.line("removed default web-1")
            done.set()
    finally:
        done.set()
        await watcher


def main(seconds: float = 10.0) -> list[str]:
    """Print what the handlers see; return the printed lines."""
    transcript = Transcript(sys.stdout)
    with cluster() as server, contextlib.redirect_stdout(transcript):
        asyncio.run(drive(server, transcript, seconds))
    return transcript.lines


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to watch a real cluster (default 10)")
    main(parser.parse_args().seconds)
