"""Helpers for the fake API server's tests: a raw-socket chunked reader and request wrappers."""

from __future__ import annotations

import json
import socket
from typing import Any

import requests


class RawResponse:
    """An HTTP/1.1 GET over a raw socket that exposes the chunked framing (one call per chunk)."""

    def __init__(self, port: int, path: str, *, timeout: float = 5.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n".encode())
        self.file = self.sock.makefile("rb")
        status = self.file.readline().decode()
        self.status = int(status.split()[1])
        self.headers: dict[str, str] = {}
        while True:
            line = self.file.readline().decode().strip()
            if not line:
                break
            key, _, value = line.partition(":")
            self.headers[key.strip().lower()] = value.strip()

    def chunk(self) -> bytes | None:
        """The next chunk's payload; None for the terminating zero chunk; EOFError when cut."""
        size_line = self.file.readline()
        if not size_line:
            raise EOFError("connection closed without a terminating chunk")
        size = int(size_line.strip(), 16)
        if size == 0:
            self.file.readline()
            return None
        data = self.file.read(size)
        if len(data) < size:
            raise EOFError("connection closed inside a chunk")
        self.file.read(2)
        return data

    def chunks_until_end(self) -> list[bytes]:
        out: list[bytes] = []
        while True:
            data = self.chunk()
            if data is None:
                return out
            out.append(data)

    def close(self) -> None:
        self.file.close()
        self.sock.close()

    def __enter__(self) -> RawResponse:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def events_of(chunks: list[bytes]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in b"".join(chunks).splitlines() if line]


def watch(url: str, path: str, **params: Any) -> requests.Response:
    params.setdefault("watch", "true")
    resp = requests.get(url + path, params=params, stream=True, timeout=5)
    return resp


def read_events(resp: requests.Response, count: int | None = None) -> list[dict[str, Any]]:
    """Read events until ``count`` were read, or until the stream ends (resumable per response)."""
    lines = getattr(resp, "_fake_lines", None)
    if lines is None:
        lines = resp.iter_lines(chunk_size=None)
        resp._fake_lines = lines  # type: ignore[attr-defined]
    events: list[dict[str, Any]] = []
    if count == 0:
        return events
    for line in lines:
        if line:
            events.append(json.loads(line))
            if count is not None and len(events) >= count:
                break
    return events


def names(events: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(e["type"], e["object"].get("metadata", {}).get("name")) for e in events]
