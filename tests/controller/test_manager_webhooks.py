"""Manager(webhooks=WebhookServer(...)): webhooks alone, the start and stop order around the controllers'
informers, /readyz with the webhook's readiness and without leadership, webhooks served on standbys."""

from __future__ import annotations

import http.client
import ssl
import threading
import urllib.error
import urllib.request

import pytest
from _controller_support import Calls

from cloudcoil_cache.admission import AdmissionWebhook, Answer, Exchange, WebhookServer
from cloudcoil_cache.controller import Controller, LeaderElection, Manager
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap

WAIT = 10.0


class _Metrics:
    def certificate_read(self, ok: bool) -> None:
        pass

    def certificate_expiry(self, timestamp: float) -> None:
        pass


class _Endpoint:
    """Answers every request 200 with its path; records what the controllers' informers were doing
    when the server started and stopped it."""

    max_body_bytes = 4096

    def __init__(self, controllers: list[Controller] | None = None) -> None:
        self.metrics = _Metrics()
        self.controllers = controllers or []
        self.not_ready: str | None = None
        self.synced_at_start: bool | None = None
        self.informers_at_stop: bool | None = None

    def _informers_synced(self) -> bool:
        return all(c.sources and all(s.view.status().synced for s in c.sources.values()) for c in self.controllers)

    def start(self, sync_timeout: float) -> None:
        self.synced_at_start = self._informers_synced()

    def stop(self, timeout: float) -> None:
        self.informers_at_stop = self._informers_synced()

    def readiness(self) -> str | None:
        return self.not_ready

    def answer(self, exchange: Exchange, disconnected: threading.Event) -> Answer:
        return Answer(200, exchange.path.encode())


def _admit(server: WebhookServer) -> tuple[int, bytes]:
    context = ssl.create_default_context(cadata=server.ca_bundle.decode())
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=context, timeout=WAIT)
    try:
        conn.request("POST", "/validate", body=b"{}")
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _get(port: int | None, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=WAIT) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_a_manager_with_webhooks_and_no_controllers(config) -> None:
    endpoint = _Endpoint()
    server = WebhookServer(endpoint, port=0, max_concurrency=2)
    manager = Manager(webhooks=server, config=config, health_port=0)
    with manager:
        assert _admit(server) == (200, b"/validate")
        assert _get(manager.health_port, "/readyz") == (200, "ok\n")
        endpoint.not_ready = "admission informer Secret not synced"
        assert _get(manager.health_port, "/readyz") == (500, "webhooks: admission informer Secret not synced\n")
        assert _get(manager.health_port, "/healthz") == (200, "ok\n")
        threads = manager.threads()
        assert {t.name for t in server.threads()} <= {t.name for t in threads}
    assert not server.running and endpoint.informers_at_stop is not None
    assert not any(t.is_alive() for t in threads) and manager.threads() == []


def test_bad_webhooks_and_an_empty_manager_are_refused(config) -> None:
    with pytest.raises(ValueError, match="at least one Controller or webhooks="):
        Manager(config=config)
    with pytest.raises(TypeError, match="expects a WebhookServer"):
        Manager(webhooks=object(), config=config)  # type: ignore[arg-type]


def test_webhooks_start_after_the_informers_sync_and_stop_before_them(config, make_cm) -> None:
    make_cm("one")
    ctl = Controller(ConfigMap, config=config)
    calls = Calls()
    ctl.reconcile(lambda cm: calls.add(cm.name))
    endpoint = _Endpoint([ctl])
    server = WebhookServer(endpoint, port=0, max_concurrency=2)
    with Manager(ctl, webhooks=server, config=config):
        calls.wait(lambda c: "one" in c)
        assert _admit(server)[0] == 200
    assert endpoint.synced_at_start is True  # the controllers' informers synced before the webhook listened
    assert endpoint.informers_at_stop is True  # the webhook closed before the informers stopped


def test_webhooks_serve_on_the_standby_and_readyz_ignores_leadership(config, make_cm) -> None:
    make_cm("one")
    managers, servers = [], []
    for identity in ("a", "b"):
        ctl = Controller(ConfigMap, config=config)
        ctl.reconcile(lambda cm: None)
        election = LeaderElection(
            "webhook-managers", identity=identity, lease_duration=4, renew_deadline=3, retry_period=0.2
        )
        server = WebhookServer(_Endpoint([ctl]), port=0, max_concurrency=2)
        servers.append(server)
        managers.append(Manager(ctl, webhooks=server, config=config, leader_election=election, health_port=0))
    leading = threading.Event()
    managers[0].leader_election.on_started_leading = leading.set
    try:
        managers[0].start()
        assert leading.wait(WAIT)
        learned = Calls()
        managers[1].leader_election.on_new_leader = learned.add
        managers[1].start()
        learned.wait(lambda leaders: leaders == ["a"])
        standby = managers[1]
        assert not standby.controllers[0].running  # not leading: no workers
        assert _admit(servers[1]) == (200, b"/validate")  # but admission is served
        assert _get(standby.health_port, "/readyz") == (200, "ok\n")
        took_over = threading.Event()
        standby.leader_election.on_started_leading = took_over.set
        managers[0].stop()
        assert not servers[0].running
        assert _admit(servers[1])[0] == 200  # while the Lease moves
        assert took_over.wait(WAIT)
        assert _admit(servers[1])[0] == 200 and _get(standby.health_port, "/readyz") == (200, "ok\n")
    finally:
        for manager in managers:
            manager.stop()
    assert all(not t.is_alive() for m in managers for t in m.threads())


def test_losing_the_lease_stops_the_workers_not_admission(config, make_cm, fake_api_server) -> None:
    make_cm("one")
    ctl = Controller(ConfigMap, config=config)
    ctl.reconcile(lambda cm: None)
    election = LeaderElection("webhook-lost", identity="a", lease_duration=4, renew_deadline=3, retry_period=0.2)
    leading, lost = threading.Event(), threading.Event()
    election.on_started_leading = leading.set
    election.on_stopped_leading = lost.set
    server = WebhookServer(_Endpoint([ctl]), port=0, max_concurrency=2)
    with Manager(ctl, webhooks=server, config=config, leader_election=election, health_port=0) as manager:
        assert leading.wait(WAIT) and ctl.running
        fake_api_server.fail_next(100_000, 500, path="/leases/webhook-lost")  # renewals fail: it steps down
        try:
            assert lost.wait(WAIT)
            assert _admit(server) == (200, b"/validate") and server.running
            assert _get(manager.health_port, "/readyz") == (200, "ok\n")
        finally:
            fake_api_server.clear_faults()


def test_the_managers_metrics_include_the_webhooks(config) -> None:
    pytest.importorskip("prometheus_client")
    webhook = AdmissionWebhook(config=config)

    @webhook.validating(ConfigMap, path="/validate")
    def allow(request):
        return None

    server = WebhookServer(webhook, port=0, max_concurrency=2)
    with Manager(webhooks=server, config=config, health_port=0) as manager:
        status, _ = _admit(server)  # no Content-Type: 415, counted on the route
        assert status == 415
        status, text = _get(manager.health_port, "/metrics")
    assert status == 200
    assert 'controller_runtime_webhook_requests_total{code="415",webhook="/validate"} 1.0' in text
    assert "# HELP workqueue_adds_total" in text  # the Manager's own series are there too
