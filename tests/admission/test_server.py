"""WebhookServer over real TLS on loopback: health, routing to the endpoint, limits, keep-alive, handshakes
on workers, disconnects, drain and threads joined on stop."""

from __future__ import annotations

import http.client
import socket
import threading
import time

import pytest
from _server_support import WAIT, Endpoint, client_context, request

from cloudcoil_cache.admission import SelfSignedCertificates, WebhookServer, _server
from cloudcoil_cache.errors import ConfigError


def _webhook_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("webhook-")]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def endpoint() -> Endpoint:
    return Endpoint(max_body_bytes=1024)


@pytest.fixture
def server(endpoint: Endpoint):
    with WebhookServer(endpoint, port=0, max_concurrency=4, shutdown_timeout=5) as srv:
        yield srv


def test_health_and_readiness_on_the_webhook_port(server: WebhookServer, endpoint: Endpoint) -> None:
    assert server.url == f"https://127.0.0.1:{server.port}"
    assert request(server, "/healthz") == (200, b"ok\n")
    assert request(server, "/readyz") == (200, b"ok\n")
    endpoint.not_ready = "informer Secret (adm) not synced"
    assert request(server, "/readyz") == (500, b"informer Secret (adm) not synced\n")
    assert request(server, "/healthz") == (200, b"ok\n")
    assert endpoint.calls == []  # health is answered by the server


def test_the_port_stays_closed_until_the_endpoint_started(endpoint: Endpoint) -> None:
    endpoint.may_start.clear()
    server = WebhookServer(endpoint, port=_free_port())
    starter = threading.Thread(target=server.start, name="test-starter")
    starter.start()
    try:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", server.port), timeout=WAIT).close()
        assert server.readiness() == "webhook server not listening"
    finally:
        endpoint.may_start.set()
        starter.join(WAIT)
    try:
        assert request(server, "/readyz") == (200, b"ok\n")
    finally:
        server.stop()


def test_other_requests_go_to_the_endpoint(server: WebhookServer, endpoint: Endpoint) -> None:
    status, body = request(
        server, "/echo?timeout=2s&x=1&x=2", method="POST", body=b"{}", headers={"Content-Type": "application/json"}
    )
    assert status == 200
    assert body == b'{"method": "POST", "query": {"timeout": "2s", "x": "2"}, "type": "application/json", "size": 2}'
    assert request(server, "/nope", method="POST", body=b"{}") == (404, b'{"message": "no such webhook"}')
    assert request(server, "/healthz", method="POST", body=b"{}")[0] == 404  # only GET is health
    status, body = request(server, "/boom", method="POST", body=b"{}")
    assert (status, body) == (500, b'{"message": "Admission webhook failed: RuntimeError"}')
    assert b"secret detail" not in body
    assert endpoint.calls == ["/echo", "/nope", "/healthz", "/boom"]


def test_a_body_over_the_limit_is_refused_without_reading_it(server: WebhookServer, endpoint: Endpoint) -> None:
    context = client_context(server.ca_bundle)
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            # announce 10 MB, send none of it: the answer comes at once
            tls.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n")
            answer = tls.recv(4096)
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert b"Connection: close" in answer
    assert request(server, "/echo", method="POST", body=b"x" * 1024)[0] == 200  # the limit itself is fine
    assert endpoint.calls == ["/echo"]


def test_chunked_and_malformed_requests_are_refused(server: WebhookServer, endpoint: Endpoint) -> None:
    context = client_context(server.ca_bundle)
    for raw_request, status in (
        (b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", b"411"),
        (b"NOT A REQUEST\r\n\r\n", b"400"),
        (b"POST /echo HTTP/1.1\r\nContent-Length: -1\r\n\r\n", b"400"),
        (b"POST /echo HTTP/1.1\r\nContent-Length: \xb2\r\n\r\n", b"400"),  # a digit, but not ASCII
        (b"POST /echo HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}", b"400"),
    ):
        with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as raw:
            with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                tls.sendall(raw_request)
                assert tls.recv(4096).startswith(b"HTTP/1.1 " + status + b" ")
    assert endpoint.calls == []


def test_expect_100_continue_gets_its_interim_answer(server: WebhookServer) -> None:
    context = client_context(server.ca_bundle)
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            tls.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
            assert tls.recv(4096) == b"HTTP/1.1 100 Continue\r\n\r\n"
            tls.sendall(b"{}")
            answer = tls.recv(4096)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and answer.endswith(b'"size": 2}')


def test_keep_alive_reuses_one_connection(server: WebhookServer) -> None:
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=client_context(server.ca_bundle), timeout=WAIT)
    try:
        conn.request("POST", "/echo", body=b"{}")
        first = conn.getresponse()
        assert first.read() and first.getheader("Connection") == "keep-alive"
        sock = conn.sock
        for _ in range(20):
            conn.request("POST", "/echo", body=b"{}")
            response = conn.getresponse()
            assert response.status == 200 and response.read()
            assert conn.sock is sock  # http.client reconnects silently: the same socket means reuse
        conn.request("GET", "/healthz", headers={"Connection": "close"})
        last = conn.getresponse()
        assert last.read() == b"ok\n" and last.getheader("Connection") == "close"
    finally:
        conn.close()


def test_a_stalled_tls_client_does_not_block_the_others(endpoint: Endpoint) -> None:
    with WebhookServer(endpoint, port=0, max_concurrency=2) as server:
        stalled = [socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) for _ in range(3)]
        try:  # three TCP connections that never start TLS (more than the workers): requests still pass
            half = socket.create_connection(("127.0.0.1", server.port), timeout=WAIT)
            stalled.append(half)
            half.sendall(b"\x16\x03\x01")  # the first bytes of a ClientHello, then nothing
            for _ in range(3):
                assert request(server, "/echo", method="POST", body=b"{}")[0] == 200
        finally:
            for sock in stalled:
                sock.close()


def test_a_client_that_goes_away_sets_disconnected(server: WebhookServer, endpoint: Endpoint) -> None:
    context = client_context(server.ca_bundle)
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as raw:
        tls = context.wrap_socket(raw, server_hostname="127.0.0.1")
        tls.sendall(b"POST /watch HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        assert endpoint.entered.wait(WAIT)
        tls.close()
    assert endpoint.disconnect_seen.wait(WAIT)


def _connect_until_refused(port: int, stopper: threading.Thread) -> None:
    """Connect until ``stop()`` (running in ``stopper``) has closed the listener: raises the refusal.
    Bounded by time, not by tries: under load, stop() may start well after the first connects."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and stopper.is_alive():
        socket.create_connection(("127.0.0.1", port), timeout=WAIT).close()
    socket.create_connection(("127.0.0.1", port), timeout=WAIT).close()  # stop() has closed it by now


def test_stop_drains_requests_in_flight_and_joins_every_thread(endpoint: Endpoint) -> None:
    before = _webhook_threads()
    server = WebhookServer(endpoint, port=0, max_concurrency=3, shutdown_timeout=WAIT).start()
    assert len(_webhook_threads()) == len(before) + 3 + 2  # workers, accept loop, certificate thread
    idle = http.client.HTTPSConnection("127.0.0.1", server.port, context=client_context(server.ca_bundle))
    idle.request("GET", "/healthz")
    assert idle.getresponse().read() == b"ok\n"  # an idle keep-alive connection at stop
    results: list[tuple[int, bytes]] = []
    blocked = threading.Thread(
        target=lambda: results.append(request(server, "/block", method="POST", body=b"{}")), name="test-blocked"
    )
    blocked.start()
    assert endpoint.entered.wait(WAIT)
    stopper = threading.Thread(target=server.stop, name="test-stopper")
    stopper.start()
    try:
        # the listener closes at once, while the request in flight is still being answered
        with pytest.raises((ConnectionRefusedError, ConnectionResetError)):  # (reset: closed with it queued)
            _connect_until_refused(server.port, stopper)
    finally:
        endpoint.release.set()
        blocked.join(WAIT)
        stopper.join(WAIT)
    idle.close()
    assert results == [(200, b'{"released": true}')]
    assert _webhook_threads() == before
    assert endpoint.stopped == 1 and not server.running


def test_stop_answers_a_request_sent_on_an_idle_connection_with_connection_close(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closing idle keep-alive connections at once at stop fails a client that is sending on one
    (kube-apiserver: "use of closed network connection"); such a request is answered, then the
    connection closes."""
    # the grace (1 s) is a timing knob: on 2 loaded cores the request below came after it (a flake)
    monkeypatch.setattr(_server, "_IDLE_GRACE", WAIT)
    server = WebhookServer(endpoint, port=0, max_concurrency=2, shutdown_timeout=WAIT).start()
    idle = http.client.HTTPSConnection("127.0.0.1", server.port, context=client_context(server.ca_bundle))
    stopper = threading.Thread(target=server.stop, name="test-stopper")
    try:
        idle.request("POST", "/echo", body=b"{}")
        assert idle.getresponse().read()  # kept alive, now idle
        stopper.start()
        with pytest.raises((ConnectionRefusedError, ConnectionResetError)):
            _connect_until_refused(server.port, stopper)
        idle.request("POST", "/echo", body=b"{}")
        answer = idle.getresponse()
        assert answer.status == 200 and answer.getheader("Connection") == "close"
        answer.read()
    finally:
        stopper.join(WAIT)
        idle.close()
    assert not server.running


def test_restart_and_double_start(endpoint: Endpoint) -> None:
    server = WebhookServer(endpoint, port=0)
    with server:
        with pytest.raises(RuntimeError, match="already started"):
            server.start()
        assert request(server, "/healthz")[0] == 200
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", server.port), timeout=WAIT).close()
    with server:
        assert request(server, "/healthz")[0] == 200
    assert (endpoint.started, endpoint.stopped) == (2, 2)
    assert _webhook_threads() == []


def test_bad_options_are_refused(endpoint: Endpoint) -> None:
    with pytest.raises(ConfigError, match="port"):
        WebhookServer(endpoint, port=70000)
    with pytest.raises(ConfigError, match="certfile"):
        WebhookServer(endpoint, certfile="/x.crt")
    with pytest.raises(ConfigError, match="max_concurrency"):
        WebhookServer(endpoint, max_concurrency=0)
    with pytest.raises(ConfigError, match="do not cover host 'localhost'"):
        WebhookServer(endpoint, host="localhost", certificates=SelfSignedCertificates(("127.0.0.1",)))
    made_here = WebhookServer(endpoint, host="webhook.example", hostnames=("127.0.0.1",))
    assert made_here.certificates is not None
    assert made_here.certificates.hostnames == ("127.0.0.1", "webhook.example")


def test_stop_past_the_drain_tells_the_endpoint_the_client_is_gone(endpoint: Endpoint) -> None:
    server = WebhookServer(endpoint, port=0, max_concurrency=2, shutdown_timeout=0.2).start()
    failures: list[BaseException] = []

    def call() -> None:
        try:
            request(server, "/watch", method="POST", body=b"{}")
        except (OSError, http.client.HTTPException) as exc:  # the connection is cut: no answer
            failures.append(exc)

    caller = threading.Thread(target=call, name="test-caller")
    caller.start()
    assert endpoint.entered.wait(WAIT)
    server.stop()  # the request outlives shutdown_timeout: disconnected is set, its socket shut
    caller.join(WAIT)
    assert endpoint.disconnect_seen.is_set()
    assert not caller.is_alive() and len(failures) == 1
    assert _webhook_threads() == []
