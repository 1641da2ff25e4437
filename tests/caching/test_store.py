"""Store: diffs on replace, namespace index, custom indexes, capacity eviction."""

from __future__ import annotations

import threading

import pytest
from _objects import obj

from cloudcoil_cache.caching import Added, Deleted, Updated, Writer


def test_replace_reports_adds_updates_and_deletes_of_vanished_keys():
    store = Writer()
    a1, b1, c1 = obj("a", rv="1"), obj("b", rv="1"), obj("c", rv="1")
    first = store.replace([a1, b1, c1])
    assert [type(n) for n in first] == [Added, Added, Added]
    assert all(n.initial for n in first)
    a2, d1 = obj("a", rv="2"), obj("d", rv="5")
    notes = store.replace([a2, b1, d1])
    assert Updated(a1, a2) in notes
    assert Added(d1, initial=True) in notes
    deleted = [n for n in notes if isinstance(n, Deleted)]
    assert deleted == [Deleted(c1, final_state_unknown=True)]  # last known state
    assert not any(isinstance(n, Updated) and n.new is b1 for n in notes)  # unchanged: no event
    assert sorted(k for k in store.keys()) == [("default", "a"), ("default", "b"), ("default", "d")]


def test_resync_replace_redelivers_every_object_as_update():
    store = Writer()
    a = obj("a")
    store.replace([a])
    notes = store.replace([a], resync=True)
    assert notes == [Updated(a, a, resync=True)]


def test_upsert_and_delete_keep_the_namespace_index_in_step():
    store = Writer()
    assert store.upsert(obj("a", "ns1")) == Added(store.get("ns1", "a"))
    store.upsert(obj("b", "ns2"))
    assert [o.metadata.name for o in store.list("ns1")] == ["a"]
    assert store.list("missing") == []
    note = store.delete(obj("a", "ns1"))
    assert isinstance(note, Deleted)
    assert store.list("ns1") == []
    assert store.delete(obj("a", "ns1")) is None


def test_custom_index_follows_updates_and_drops_empty_values():
    store = Writer()
    store.upsert(obj("a", app="web"))
    store.add_index("by_app", lambda o: [o.metadata.labels["app"]] if "app" in o.metadata.labels else [])
    store.upsert(obj("b", app="web"))
    assert {o.metadata.name for o in store.get_by_index("by_app", "web")} == {"a", "b"}
    store.upsert(obj("a", rv="2", app="db"))
    assert [o.metadata.name for o in store.get_by_index("by_app", "web")] == ["b"]
    store.delete(obj("b"))
    assert sorted(store.list_index_keys("by_app")) == ["db"]
    with pytest.raises(KeyError, match="no index named 'nope'"):
        store.get_by_index("nope", "x")


def test_a_get_is_answered_while_the_writer_holds_the_lock_mid_update():
    """Reads of an unbounded store never queue behind the writer (or each other): the writer is
    held inside an update by a slow index function; a get still answers at once (with one of the
    two versions), and with the new one once the update is done."""
    store = Writer()
    old = obj("a", rv="1", app="web")
    store.upsert(old)
    inside, release = threading.Event(), threading.Event()

    def slow_index(o):
        if o.metadata.resource_version == "2":
            inside.set()
            assert release.wait(10)
        return o.metadata.labels.get("app")

    store.add_index("by_app", slow_index)
    new = obj("a", rv="2", app="web")
    writer = threading.Thread(target=store.upsert, args=(new,), name="test-writer")
    writer.start()
    try:
        assert inside.wait(10)
        assert store.reader.get("default", "a") in (old, new)  # would block here if it took the lock
        assert store.reader.get("default", "missing") is None
        assert writer.is_alive()  # the update is still under way: the gets did not wait for it
    finally:
        release.set()
        writer.join(10)
    assert store.reader.get("default", "a") is new


def test_capacity_evicts_least_recently_used_without_delete_notifications():
    store = Writer(capacity=2)
    store.upsert(obj("a"))
    store.upsert(obj("b"))
    store.get("default", "a")  # a is now more recent than b
    note = store.upsert(obj("c"))
    assert isinstance(note, Added)
    assert store.get("default", "b") is None
    assert store.get("default", "a") is not None
    assert store.evictions == 1


def test_index_snapshot_is_the_objects_of_one_value_by_namespace_and_drops_empty_buckets():
    store = Writer()
    store.add_index("by_app", lambda o: o.metadata.labels.get("app"))
    for name, namespace, app in (("a", "ns1", "web"), ("b", "ns1", "web"), ("c", "ns2", "web"), ("d", "ns1", "db")):
        store.upsert(obj(name, namespace, app=app))
    store.bookmark("7")
    objs, rv = store.index_snapshot("by_app", "web")  # type: ignore[misc]
    assert sorted(o.metadata.name for o in objs) == ["a", "b", "c"] and rv == "7"
    assert sorted(o.metadata.name for o in store.index_snapshot("by_app", "web", "ns1")[0]) == ["a", "b"]  # type: ignore[index]
    assert store.index_snapshot("by_app", "web", "ns3") == ([], "7")
    assert store.index_snapshot("by_app", "nothing") == ([], "7")
    assert store.index_snapshot("nope", "web") is None and not store.has_index("nope")
    updated = obj("a", "ns1", rv="2", app="web")
    store.upsert(updated)
    assert any(o is updated for o in store.index_snapshot("by_app", "web", "ns1")[0])  # type: ignore[index]
    for name, namespace in (("a", "ns1"), ("b", "ns1"), ("c", "ns2")):
        store.delete(obj(name, namespace))
    assert store.index_snapshot("by_app", "web") == ([], "7")
    assert list(store._d.index_objects["by_app"]) == ["db"]  # no empty bucket left behind (k8s#84959)
    store.replace([obj("e", "ns2", app="web")], "9")  # a relist rebuilds it
    assert [o.metadata.name for o in store.index_snapshot("by_app", "web", "ns2")[0]] == ["e"]  # type: ignore[index]
    assert store.index_names() == ["by_app"]
