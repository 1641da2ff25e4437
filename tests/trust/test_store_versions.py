"""The store owns its resourceVersion: every write sets it under the lock, and a snapshot's version
describes exactly its items; re-created objects are a delete then an add; index functions may return str."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest
from caching._objects import obj

from cloudcoil_cache.caching import Added, Deleted, Updated, Writer


def test_replace_apply_and_bookmark_set_the_version_under_the_lock():
    writer: Writer[Any] = Writer()
    reader = writer.reader
    writer.replace([obj("a", rv="5")], "7")
    assert reader.resource_version == "7"
    writer.apply("ADDED", obj("b", rv="8"), "8")
    assert reader.snapshot() == ([reader.get("default", "a"), reader.get("default", "b")], "8")
    writer.bookmark("12")
    assert reader.resource_version == "12"
    writer.apply("DELETED", obj("a", rv="13"), "13")
    assert reader.snapshot("default") == ([reader.get("default", "b")], "13")


def test_readers_get_no_write_methods():
    reader = Writer[Any]().reader
    for name in ("replace", "apply", "bookmark", "clear", "upsert", "delete"):
        assert not hasattr(reader, name), name


def test_a_snapshots_version_always_describes_exactly_its_items_under_concurrent_writes():
    writer: Writer[Any] = Writer()
    writer.replace([], "0")
    stop = threading.Event()

    def write() -> None:
        for i in range(1, 20_000):
            writer.apply("ADDED", obj(f"o{i}", rv=str(i)), str(i))
        stop.set()

    thread = threading.Thread(target=write, name="test-writer")
    thread.start()
    checked = 0
    while not stop.is_set():
        items, rv = writer.reader.snapshot()
        newest = max((int(o.metadata.resource_version) for o in items), default=0)
        assert str(newest) == rv  # the version is that of the newest item: never ahead, never behind
        checked += 1
    thread.join()
    assert checked > 0


def test_a_relist_reports_an_object_recreated_under_the_same_name_as_delete_then_add():
    writer: Writer[Any] = Writer()
    old = obj("web", rv="1", uid="uid-1")
    writer.replace([old, obj("db", rv="1")], "1")
    new = obj("web", rv="9", uid="uid-2")
    notes = writer.replace([new, obj("db", rv="1")], "9")
    assert notes == [Deleted(old, final_state_unknown=True), Added(new, initial=True)]


def test_a_watch_event_of_a_recreated_object_is_delete_then_add_and_an_update_keeps_its_uid():
    writer: Writer[Any] = Writer()
    old = obj("web", rv="1", uid="uid-1")
    writer.replace([old], "1")
    changed = obj("web", rv="2", uid="uid-1")
    assert writer.apply("MODIFIED", changed, "2") == [Updated(old, changed)]
    again = obj("web", rv="3", uid="uid-2")
    assert writer.apply("ADDED", again, "3") == [Deleted(changed, final_state_unknown=True), Added(again)]


@pytest.mark.parametrize(
    "result, keys",
    [
        ("app", ["app"]),  # one key as a string: not a, p, p
        (["a", "b"], ["a", "b"]),
        (("x",), ["x"]),
        (None, []),
        ((), []),
    ],
)
def test_an_index_function_may_return_one_key_an_iterable_of_keys_or_none(result, keys):
    writer: Writer[Any] = Writer()
    writer.replace([obj("one")], "1")
    writer.reader.add_index("by", lambda o: result)
    assert sorted(writer.reader.list_index_keys("by")) == sorted(keys)
    for key in keys:
        assert [o.metadata.name for o in writer.reader.get_by_index("by", key)] == ["one"]


def test_an_index_function_returning_non_strings_is_logged_once_and_the_objects_left_out(caplog):
    writer: Writer[Any] = Writer()
    writer.replace([obj(f"o{i}") for i in range(50)], "1")
    with caplog.at_level(logging.DEBUG):
        writer.reader.add_index("bad", lambda o: 1)
        writer.upsert(obj("late"))
    assert writer.reader.list_index_keys("bad") == []
    failures = [r for r in caplog.records if "index function 'bad' failed" in r.getMessage()]
    assert len(failures) == 1 and "must return str keys" in failures[0].getMessage()
    assert not failures[0].exc_info  # one line, not a traceback per object


def test_drain_empties_lists_and_dicts_one_element_at_a_time():
    from cloudcoil_cache.caching._store import drain

    items, mapping = [obj(f"o{i}") for i in range(5)], {i: obj(f"o{i}") for i in range(5)}
    drain(items)
    drain(mapping)
    assert items == [] and mapping == {}


def test_a_replace_leaves_the_replaced_objects_to_be_freed_outside_the_lock_and_keeps_its_answer():
    writer: Writer[Any] = Writer()
    first = [obj(f"o{i}", rv="1") for i in range(100)]
    writer.replace(first, "1")
    notes = writer.replace([obj(f"o{i}", rv="2") for i in range(100)], "2")
    assert len(notes) == 100 and all(isinstance(n, Updated) for n in notes)
    assert [n.old for n in notes] == first  # the notifications still carry the old objects
    assert len(writer.reader) == 100
