"""Which pages iterating a list walks: the server's continue token, unless it counts nothing remaining."""

from __future__ import annotations

import asyncio

import pytest
from cluster_support import seed

from cloudcoil_cache.client import Config
from cloudcoil_cache.models.apimachinery import ListMeta, ObjectMeta
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.resources import ResourceList
from cloudcoil_cache.testing import FakeAPIServer


def _lists(server: FakeAPIServer) -> list[str]:
    return [r.query.get("continue", "") for r in server.requests if r.verb == "list"]


def test_a_page_whose_server_counts_no_remaining_items_is_the_last_even_with_a_token(
    server: FakeAPIServer, config: Config
) -> None:
    # cloudcoil's test_resource_list_iteration: a hand-built list, continue "token", remaining_item_count=0
    page = ResourceList[Pod](
        items=[Pod(metadata=ObjectMeta(name=f"p{i}")) for i in range(2)],
        metadata=ListMeta(continue_="token", remaining_item_count=0),
    )
    assert not page.has_next_page()

    async def names() -> list[str | None]:
        return [p.name async for p in page]

    with config:  # a server to page through is there: nothing asks it
        assert [p.name for p in page] == asyncio.run(names()) == ["p0", "p1"]
        with pytest.raises(ValueError, match="counts no remaining items"):
            page.get_next_page()
        with pytest.raises(ValueError, match="counts no remaining items"):
            asyncio.run(page.async_get_next_page())
    assert _lists(server) == []


def test_a_token_with_remaining_items_is_followed(server: FakeAPIServer, config: Config) -> None:
    seed(server, 5)
    first = Pod.client(config).list(limit=2)
    assert first.has_next_page() and first.remaining_item_count == 3
    assert [p.name for p in first] == [f"pod-{i}" for i in range(5)]
    assert len(_lists(server)) == 3


def test_a_selective_list_without_a_count_walks_every_page(server: FakeAPIServer, config: Config) -> None:
    seed(server, 7)  # tier=frontend on the even ones: pod-0, -2, -4, -6
    first = Pod.client(config).list(limit=2, label_selector="tier=frontend")
    # The server leaves remainingItemCount out for a selector: unknown, so the token is followed.
    assert first.continue_ and first.remaining_item_count is None and first.has_next_page()
    assert [p.name for p in first] == ["pod-0", "pod-2", "pod-4", "pod-6"]
    assert [bool(token) for token in _lists(server)] == [False, True]
