"""Page sizing: pages of big objects ask for fewer, so that the parse buffer of a page stays bounded."""

from __future__ import annotations

import attrs
from cluster_support import FAST

from cloudcoil_cache import _json
from cloudcoil_cache._listwatch import ListPage
from cloudcoil_cache.caching import Tuning
from cloudcoil_cache.caching._page_size import PageSizer
from cloudcoil_cache.caching._reflector import _Pages
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap

TARGET = 600_000


def test_pages_of_small_objects_keep_the_page_size():
    sizer = PageSizer(200, TARGET)
    sizer.observe(200, 200 * 1_000)
    assert sizer.limit == 200


def test_pages_of_big_objects_ask_for_as_many_as_fit_the_target_and_grow_back():
    sizer = PageSizer(200, TARGET)
    sizer.observe(200, 200 * 6_600)
    assert sizer.limit == TARGET // 6_600
    sizer.observe(sizer.limit, sizer.limit * 500)
    assert sizer.limit == 200


def test_a_page_never_asks_for_fewer_than_a_tenth_of_the_page_size():
    sizer = PageSizer(200, TARGET)
    sizer.observe(3, 3 * 1_500_000)
    assert sizer.limit == 20


def test_the_default_keeps_pages_of_realistic_pods_and_without_a_target_or_a_measure_the_page_size_stays():
    default = PageSizer(200, Tuning().page_bytes)
    default.observe(200, 200 * 6_600)  # 200 realistic pods: 1.3 MB
    assert default.limit == 200
    default.observe(200, 200 * 50_000)
    assert default.limit == 30
    plain = PageSizer(200, None)
    plain.observe(200, 200 * 6_600)
    assert plain.limit == 200
    sized = PageSizer(200, TARGET)
    sized.observe(0, 0)  # an empty page
    sized.observe(200, 0)  # a source that does not know its body's length
    assert sized.limit == 200


def _configmap(name: str, size: int) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": "default"}, "data": {"blob": "x" * size}}


def test_a_list_of_big_objects_is_paged_smaller_and_complete_within_the_servers_remaining_count(server, make_config):
    """60 small ConfigMaps, then 120 of 20 KB (pages sized to 600 KB): the third page asks for fewer than ``page_size``,
    the list ends complete, and the remainingItemCount bound (taken at 60 a page) is rescaled to
    the smaller pages instead of failing the list."""
    for n in range(60):
        server.create("configmaps", _configmap(f"a-small-{n:03}", 10))
    for n in range(120):
        server.create("configmaps", _configmap(f"b-big-{n:03}", 20_000))
    config = make_config(resources=[ConfigMap], tuning=attrs.evolve(FAST, page_size=60, page_bytes=600_000))
    with config:
        held = config.cache.get_informer(ConfigMap).list()  # type: ignore[union-attr]
        status = config.cache.status()  # type: ignore[union-attr]
    lists = [r for r in server.requests if r.verb == "list" and r.path == "/api/v1/configmaps"]
    limits = [int(r.query["limit"]) for r in lists]
    assert len(held) == 180
    assert limits[:2] == [60, 60]
    if _json.PARSE_BUFFER_FACTOR is not None:  # orjson: 60 objects of 20 KB are over the target
        assert len(limits) > 3 and all(limit < 60 for limit in limits[2:])
    assert "ListPagingError" not in str(status)


def test_a_short_page_after_the_limit_grew_stays_within_the_remaining_count_budget():
    """Pages of big objects, then small ones (the limit grows back), with one short page: the spare
    page the remainingItemCount budget allows stays a whole page at the new size."""
    sizer = PageSizer(500, 1_500_000)
    limit = sizer.limit
    pages = _Pages(limit, 4_000)
    sequence = [(500, 30_000), (50, 2_000), (400, 2_000), (500, 2_000), (500, 2_000), (50, 2_000)]
    total, served = sum(count for count, _ in sequence), 0
    for n, (count, size) in enumerate(sequence):
        assert count <= limit
        served += count
        token = f"t{n}" if served < total else None
        page = ListPage([0] * count, "1", token, total - served if token else None, count * size + 150)
        sizer.observe(count, page.body_bytes)
        limit = sizer.limit
        pages.check(page, limit)  # ListPagingError at the fifth page before the fix
    assert served == total


def test_page_bytes_comes_last_so_positional_tunings_keep_their_meaning():
    names = [f.name for f in attrs.fields(Tuning) if not f.kw_only]
    assert names[-1] == "page_bytes"
    assert [f.name for f in attrs.fields(Tuning) if f.kw_only] == ["streaming_lists"]
    assert names[:6] == [
        "backoff",
        "watch_timeout",
        "read_timeout",
        "page_size",
        "min_watch_duration",
        "max_list_restarts",
    ]
