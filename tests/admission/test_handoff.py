"""Handoff: items in the order put, each to the worker that went idle last; and the WebhookServer's
workers under a light load (the same few serve, the rest stay parked)."""

from __future__ import annotations

import threading

from _server_support import WAIT, Endpoint, request

from cloudcoil_cache.admission import WebhookServer
from cloudcoil_cache.admission._handoff import Handoff


def test_items_put_before_a_get_come_out_in_order() -> None:
    handoff: Handoff[int] = Handoff()
    for i in range(3):
        handoff.put(i)
    assert not handoff.empty()
    assert [handoff.get(), handoff.get()] == [0, 1]
    assert handoff.take_all() == [2]
    assert handoff.empty()


def test_an_item_goes_to_the_worker_that_began_waiting_last() -> None:
    handoff: Handoff[str | None] = Handoff()
    first, second, third = handoff.turn(), handoff.turn(), handoff.turn()
    handoff.put("a")
    assert third.take() == "a"
    handoff.put(None)  # (a stop's sentinel, as any item)
    assert second.take() is None
    again = handoff.turn()  # back among the idle: now the last to wait
    handoff.put("b")
    assert again.take() == "b"
    handoff.put("c")
    assert first.take() == "c"
    assert handoff.empty()


def test_get_blocks_until_an_item_is_put_from_another_thread() -> None:
    handoff: Handoff[int] = Handoff()
    got: list[int] = []
    worker = threading.Thread(target=lambda: got.append(handoff.get()), name="test-handoff-worker")
    worker.start()
    handoff.put(7)
    worker.join(WAIT)
    assert got == [7]
    assert not worker.is_alive()


def test_sequential_requests_are_served_by_a_few_workers_of_many() -> None:
    endpoint = Endpoint()
    with WebhookServer(endpoint, port=0, max_concurrency=16, shutdown_timeout=5) as server:
        for _ in range(40):  # a new connection each: its handshake, then its request
            assert request(server, "/echo", method="POST", body=b"{}")[0] == 200
    workers = set(endpoint.served_on)
    assert len(endpoint.served_on) == 40
    # a few (on a busy machine the last idle ones may still be closing or parking a connection); a queue
    # that wakes its waiters in turn spread them over 13 of the 16
    assert len(workers) <= 4, workers
