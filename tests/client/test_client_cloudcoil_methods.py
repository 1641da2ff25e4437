"""cloudcoil's resource methods over HTTP: from_file, fetch, save, delete_all, the resilient
watch, wait_for, gvk() and the name/namespace setters."""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from _client_support import last

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import Forbidden, ReadOnlyError, ResourceConflict, ResourceNotFound, WaitTimeout
from cloudcoil_cache.models._gvk import GVK
from cloudcoil_cache.models.kubernetes.apps.v1 import Deployment
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod
from cloudcoil_cache.resources import Resource
from cloudcoil_cache.testing import FakeAPIServer, RecordedRequest, make_pod


def configmap(
    name: str | None, namespace: str | None = None, *, labels: dict[str, str] | None = None, **data: str
) -> ConfigMap:
    return ConfigMap(metadata=dict(name=name, namespace=namespace, labels=labels), data=data or None)


def watches(server: FakeAPIServer) -> list[RecordedRequest]:
    return [r for r in server.requests if r.verb == "watch"]


def wait_for_watch_requests(server: FakeAPIServer, count: int) -> None:
    """Wait until the server has received ``count`` watch requests (the watch re-opened)."""
    server.wait_for_request(lambda _r: len(watches(server)) >= count, timeout=10)


class Consumer:
    """Iterates a watch on a named thread, recording events; ``wait_until`` waits on a condition."""

    def __init__(self, events: Iterator[tuple[str, Any]]) -> None:
        self.events = events
        self.seen: list[tuple[str, Any]] = []
        self.error: BaseException | None = None
        self.ended = threading.Event()
        self._changed = threading.Condition()
        self.thread = threading.Thread(target=self._run, name="test-watch-consumer")
        self.thread.start()

    def _run(self) -> None:
        try:
            for event in self.events:
                with self._changed:
                    self.seen.append(event)
                    self._changed.notify_all()
        except BaseException as exc:  # recorded for the test to raise
            self.error = exc
        finally:
            self.ended.set()
            with self._changed:
                self._changed.notify_all()

    def wait_until(self, condition: Callable[[list[tuple[str, Any]]], bool], timeout: float = 10) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: condition(self.seen) or self.ended.is_set(), timeout), (
                f"no matching event within {timeout} s: {[(t, o.metadata.name) for t, o in self.seen]}"
            )
        if self.error is not None:
            raise self.error
        assert condition(self.seen), f"the watch ended: {self.seen}"

    def names(self, event_type: str) -> list[str]:
        return [o.metadata.name for t, o in list(self.seen) if t == event_type]


@pytest.fixture
def quiet(server: FakeAPIServer) -> FakeAPIServer:
    """The server without periodic bookmarks: an idle watch sends nothing at all."""
    server.bookmark_interval = 3600.0
    return server


# -- save / fetch ---------------------------------------------------------------------------------


def test_save_creates_then_updates_with_the_resource_version(server: FakeAPIServer, config: Config) -> None:
    with config:
        saved = configmap("settings", key="one").save()
        assert (saved.metadata.uid, saved.data) == (
            server.get("configmaps", "settings", "default")["metadata"]["uid"],
            {"key": "one"},
        )
        assert last(server, "create").path == "/api/v1/namespaces/default/configmaps"
        saved.data["key"] = "two"
        updated = saved.save()
        assert updated.data == {"key": "two"}
        assert last(server, "update").json()["metadata"]["resourceVersion"] == saved.metadata.resource_version
        with pytest.raises(ResourceConflict):
            saved.save()  # still at the first version: optimistic concurrency refuses it


def test_save_of_an_existing_name_without_a_version_replaces_it(server: FakeAPIServer, config: Config) -> None:
    existing = server.create("configmaps", configmap("settings", key="old").to_dict(), "default")
    with config:
        replaced = configmap("settings", key="new").save()
    assert replaced.data == {"key": "new"}
    assert [r.verb for r in server.requests] == ["get", "update"]
    assert last(server, "update").json()["metadata"]["resourceVersion"] == existing["metadata"]["resourceVersion"]


def test_save_without_a_name_creates_with_generate_name(server: FakeAPIServer, config: Config) -> None:
    with config:
        made = ConfigMap(metadata=dict(generate_name="cm-")).save()
    assert made.metadata.name.startswith("cm-") and [r.verb for r in server.requests] == ["create"]


def test_save_dry_run_stores_nothing(server: FakeAPIServer, config: Config) -> None:
    with config:
        answered = configmap("dry", key="v").save(dry_run=True)
    assert answered.data == {"key": "v"}
    assert last(server, "create").query["dryRun"] == "All"
    assert server.list("configmaps", "default") == []


def test_fetch_reads_the_live_object_even_through_a_cached_config(
    server: FakeAPIServer, kubeconfig: str, make_config: Callable[..., Config]
) -> None:
    cached = make_config(kubeconfig=kubeconfig, cache=Cache(resources=[ConfigMap], sync_timeout=5))
    with cached:
        created = configmap("settings", key="one").create()
        server.clear_requests()
        fetched = created.fetch()
        assert fetched.metadata.uid == created.metadata.uid
        assert last(server, "get").path == "/api/v1/namespaces/default/configmaps/settings"
        with pytest.raises(ValueError, match="no metadata.name"):
            ConfigMap().fetch()
        created.remove()
        with pytest.raises(ResourceNotFound):
            created.fetch()


def test_save_through_a_cached_config_is_read_back_from_the_cache(
    server: FakeAPIServer, kubeconfig: str, make_config: Callable[..., Config]
) -> None:
    cached = make_config(kubeconfig=kubeconfig, cache=Cache(resources=[ConfigMap], sync_timeout=5))
    with cached:
        first = configmap("settings", key="one").save()
        assert ConfigMap.get("settings").data == {"key": "one"}
        first.data["key"] = "two"
        first.save()
        assert ConfigMap.get("settings").data == {"key": "two"}


# -- delete_all -----------------------------------------------------------------------------------


def test_delete_all_deletes_what_the_label_selector_matches(server: FakeAPIServer, config: Config) -> None:
    with config:
        for i in range(3):
            configmap(f"cm-{i}", labels={"test": "true"}).create()
        configmap("keep").create()
        configmap("elsewhere", "other", labels={"test": "true"}).create()
        deleted = ConfigMap.delete_all(label_selector="test=true", propagation_policy="background")
        assert [c.metadata.name for c in ConfigMap.list()] == ["keep"]
        # kube-apiserver's answer: the objects deleted, as they were
        assert [c.metadata.name for c in deleted] == ["cm-0", "cm-1", "cm-2"]
        assert all(isinstance(c, ConfigMap) for c in deleted)
        assert [c.metadata.name for c in ConfigMap.list(namespace="other")] == ["elsewhere"]
    request = last(server, "deletecollection")
    assert (request.path, request.query["labelSelector"], request.query["propagationPolicy"]) == (
        "/api/v1/namespaces/default/configmaps",
        "test=true",
        "Background",
    )


def test_delete_all_in_all_namespaces_deletes_one_collection_per_namespace(
    server: FakeAPIServer, config: Config
) -> None:
    with config:
        for ns in ("a", "b"):
            configmap("doomed", ns, labels={"tier": "x"}).create()
        configmap("kept", "a").create()
        server.clear_requests()
        deleted = ConfigMap.delete_all(label_selector="tier=x", all_namespaces=True)
        assert [(c.metadata.namespace, c.metadata.name) for c in deleted] == [("a", "doomed"), ("b", "doomed")]
        assert [c.metadata.name for c in ConfigMap.list(all_namespaces=True)] == ["kept"]
    assert sorted(r.path for r in server.requests if r.verb == "deletecollection") == [
        "/api/v1/namespaces/a/configmaps",
        "/api/v1/namespaces/b/configmaps",
    ]
    # the namespaces come from one paged LIST of the kind with the same selector
    found = [r for r in server.requests if r.verb == "list"][0]
    assert (found.path, found.query["labelSelector"], found.query["limit"]) == ("/api/v1/configmaps", "tier=x", "500")


def test_delete_all_is_read_back_from_the_cache(
    server: FakeAPIServer, kubeconfig: str, make_config: Callable[..., Config]
) -> None:
    cached = make_config(
        kubeconfig=kubeconfig, cache=Cache(resources=[ConfigMap], sync_timeout=5, read_your_writes_timeout=0.5)
    )
    with cached:
        for i in range(3):
            configmap(f"cm-{i}", labels={"test": "true"}).create()
        assert len(ConfigMap.list(label_selector="test=true").items) == 3
        lists = len([r for r in server.requests if r.verb == "list"])
        server.stall_watches()  # the deletions reach the cache late: the read must not serve it before
        try:
            ConfigMap.delete_all(label_selector="test=true")
            assert ConfigMap.list(label_selector="test=true").items == []
        finally:
            server.resume_watches()
    # read-your-writes from the DELETE's answer (waited for, then read live): no LIST of delete_all's
    assert len([r for r in server.requests if r.verb == "list"]) == lists + 1


def test_a_dry_run_delete_all_answers_what_it_would_delete_and_keeps_it(config: Config) -> None:
    with config:
        configmap("a", labels={"test": "true"}).create()
        would = ConfigMap.delete_all(label_selector="test=true", dry_run=True)
        assert [c.metadata.name for c in would] == ["a"]
        assert [c.metadata.name for c in ConfigMap.list()] == ["a"]


def test_delete_all_refuses_an_unknown_propagation_policy(config: Config) -> None:
    with config, pytest.raises(ValueError, match="propagation_policy 'sideways'"):
        ConfigMap.delete_all(propagation_policy="sideways")


# -- the resilient watch --------------------------------------------------------------------------


def test_a_quiet_watch_is_reopened_after_the_read_timeout(quiet: FakeAPIServer, config: Config) -> None:
    with config:
        watch = ConfigMap.watch(read_timeout=0.3)
        consumer = Consumer(watch)
        try:
            wait_for_watch_requests(quiet, 3)  # two read timeouts passed: neither ended the watch
            configmap("late").create()
            consumer.wait_until(lambda seen: ("ADDED", "late") in [(t, o.metadata.name) for t, o in seen])
        finally:
            watch.close()
            consumer.thread.join(5)
    assert consumer.error is None and consumer.ended.is_set()


def test_a_watch_the_server_ends_resumes_from_the_last_resource_version(quiet: FakeAPIServer, config: Config) -> None:
    with config:
        watch = ConfigMap.watch(timeout_seconds=1, allow_bookmarks=False)
        consumer = Consumer(watch)
        try:
            configmap("first").create()
            consumer.wait_until(lambda seen: len(seen) == 1)
            wait_for_watch_requests(quiet, 2)  # the server ended the first request after 1 s
            configmap("second").create()
            consumer.wait_until(lambda seen: len(seen) == 2)
        finally:
            watch.close()
            consumer.thread.join(5)
    # resumed, not restarted: "first" is not replayed
    assert consumer.names("ADDED") == ["first", "second"]
    assert watches(quiet)[1].query["resourceVersion"] not in ("", None)


@pytest.mark.parametrize("mode", ["event", "http"], ids=["error-event", "http-410"])
def test_a_410_restarts_the_watch_from_the_current_state(server: FakeAPIServer, config: Config, mode: str) -> None:
    server.expired_watch_mode = mode
    with config:
        rv = ConfigMap.list().resource_version
        configmap("survivor").create()
        server.compact()
        with contextlib.closing(ConfigMap.watch(resource_version=rv, allow_bookmarks=False)) as watch:
            event_type, obj = next(watch)
    assert (event_type, obj.metadata.name) == ("ADDED", "survivor")
    assert [r.query.get("resourceVersion") for r in watches(server)] == [rv, ""]


def test_the_stop_event_ends_a_watch_blocked_in_a_read(quiet: FakeAPIServer, config: Config) -> None:
    stop = threading.Event()
    client = config.client_for(ConfigMap, cached=False)
    # left alone, the read would block for the transport's 60 s read timeout (the request lasts 300 s)
    watch = client.watch(timeout_seconds=300, _stop_event=stop)
    consumer = Consumer(watch)
    quiet.wait_for_watches(1)
    stop.set()
    assert consumer.ended.wait(5)
    consumer.thread.join(5)
    assert consumer.error is None


def test_the_stop_event_ends_a_watch_waiting_to_reconnect(server: FakeAPIServer, config: Config) -> None:
    server.fail_next(1, 500, verb="watch")
    server.fail_next(1000, 429, verb="watch", retry_after=30)  # left alone, the backoff lasts 30 s
    stop = threading.Event()
    consumer = Consumer(config.client_for(ConfigMap, cached=False).watch(_stop_event=stop))
    wait_for_watch_requests(server, 2)  # it failed, backed off and failed again: now in a backoff
    stop.set()
    assert consumer.ended.wait(5)
    consumer.thread.join(5)
    assert consumer.error is None and len(watches(server)) == 2


def relay_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("cloudcoil-watch-stop-")]


def test_an_abandoned_watch_closes_its_stream_and_ends_its_relay_without_the_gc(
    server: FakeAPIServer, config: Config
) -> None:
    client = config.client_for(ConfigMap, cached=False)
    with config:
        configmap("a").create()
    before = set(relay_threads())
    gc.disable()  # only reference counting may free the watch
    try:
        for event_type, _ in client.watch(_stop_event=threading.Event(), allow_bookmarks=False):
            relays = [t for t in relay_threads() if t not in before]
            break
        assert event_type == "ADDED" and len(relays) == 1
        relays[0].join(5)  # never set: only the watch's end can stop it
        assert not relays[0].is_alive()
        # the server notices the closed connection at its next write (a bookmark every 0.5 s)
        assert until(lambda: server.active_watches == 0, 5), f"{server.active_watches} watches still open"
    finally:
        gc.enable()


def until(check: Callable[[], bool], timeout: float) -> bool:
    """``check()`` turned true within ``timeout`` s (looked at every 20 ms: the fake has no event for a
    watch that ends)."""
    deadline = time.monotonic() + timeout
    pace = threading.Event()
    while not check():
        if time.monotonic() >= deadline:
            return False
        pace.wait(0.02)
    return True


def test_a_tiny_read_timeout_backs_off_instead_of_spinning(quiet: FakeAPIServer, config: Config) -> None:
    watch = config.client_for(ConfigMap, cached=False).watch(read_timeout=0.001)
    consumer = Consumer(watch)
    try:
        wait_for_watch_requests(quiet, 3)
    finally:
        watch.close()
        consumer.thread.join(5)
    opened = [r.time for r in watches(quiet)[:3]]
    # each request ended at once without an event: the next waits the backoff (0.2 s, then 0.4 s, jittered up)
    assert min(b - a for a, b in zip(opened, opened[1:])) >= 0.15, opened
    assert consumer.error is None and consumer.ended.is_set()


def test_selectors_and_later_watch_arguments_are_keyword_only(config: Config) -> None:
    client = config.client_for(ConfigMap, cached=False)
    with pytest.raises(TypeError):
        client.watch("default", False, "metadata.name=x")  # type: ignore[misc]
    watch = client.watch("default", False, label_selector="app=a", field_selector="metadata.name=x")
    watch.close()
    with pytest.raises(ValueError, match="read_timeout"):
        client.watch(read_timeout=0)


def test_cloudcoils_client_watch_with_a_stop_event_delivers_changes(server: FakeAPIServer, config: Config) -> None:
    with config:
        created = configmap("watched", key="v").create()
        stop = threading.Event()
        client = config.client_for(ConfigMap, cached=False)
        watch = client.watch(
            namespace="default",
            field_selector="metadata.name=watched",
            resource_version=created.metadata.resource_version,
            timeout_seconds=1,
            _stop_event=stop,
        )
        with contextlib.closing(watch):
            consumer = Consumer(watch)
            created.metadata.annotations = {"test": "updated"}
            updated = created.update()
            updated.remove()
            consumer.wait_until(lambda seen: any(t == "DELETED" for t, _ in seen))
            stop.set()
            consumer.thread.join(5)
    modified = [o for t, o in consumer.seen if t == "MODIFIED"]
    assert modified[0].metadata.resource_version == updated.metadata.resource_version
    assert [o.metadata.annotations for t, o in consumer.seen if t == "DELETED"] == [{"test": "updated"}]


def test_bookmarks_are_yielded_with_the_resource_version(server: FakeAPIServer, config: Config) -> None:
    with config, contextlib.closing(ConfigMap.watch(resource_version=str(server.revision))) as watch:
        event_type, obj = next(watch)
    assert event_type == "BOOKMARK" and isinstance(obj, ConfigMap) and obj.metadata.resource_version


def test_a_watch_of_a_forbidden_kind_raises(server: FakeAPIServer, config: Config) -> None:
    server.fail_next(1, 403, verb="watch")
    with config, contextlib.closing(ConfigMap.watch()) as watch, pytest.raises(Forbidden):
        next(watch)


def test_closing_a_watch_ends_the_iteration(server: FakeAPIServer, config: Config) -> None:
    with config:
        configmap("a").create()
        watch = ConfigMap.watch()
        assert next(watch)[0] == "ADDED"
        watch.close()
        with pytest.raises(StopIteration):
            next(watch)


# -- wait_for -------------------------------------------------------------------------------------


def test_wait_for_sees_a_change_made_before_its_watch_opened(server: FakeAPIServer, config: Config) -> None:
    with config:
        created = configmap("waited", key="initial").create()
        server.patch("configmaps", "waited", {"data": {"key": "updated"}}, "default")

        def updated(event_type: str, obj: ConfigMap) -> bool | None:
            if event_type != "MODIFIED":
                return None
            return obj.data.get("key") == "updated"

        found = created.wait_for(updated, timeout=5)
    assert found.data == {"key": "updated"}
    assert last(server, "watch").query["fieldSelector"] == "metadata.name=waited"


def test_wait_for_a_dict_of_predicates_returns_the_name_that_matched(server: FakeAPIServer, config: Config) -> None:
    with config:
        created = configmap("waited").create()
        created.remove()
        matched = created.wait_for(
            {"modified": lambda t, _: t == "MODIFIED", "gone": lambda t, _: t == "DELETED"}, timeout=5
        )
    assert matched == "gone"


def test_wait_for_sees_a_change_made_while_it_waits(server: FakeAPIServer, config: Config) -> None:
    with config:
        created = configmap("waited", key="initial").create()

    def change_once_watched() -> None:
        server.wait_for_request(lambda r: r.verb == "watch", timeout=5)
        server.patch("configmaps", "waited", {"data": {"key": "later"}}, "default")

    changer = threading.Thread(target=change_once_watched, name="test-wait-for-changer")
    with config:
        changer.start()
        try:
            found = created.wait_for(lambda _t, obj: obj.data.get("key") == "later", timeout=5)
        finally:
            changer.join(5)
    assert found.data == {"key": "later"}


def test_wait_for_times_out_promptly(server: FakeAPIServer, config: Config) -> None:
    with config:
        created = configmap("waited").create()
    raised: list[BaseException] = []
    ended = threading.Event()

    def wait() -> None:
        try:
            with config:
                created.wait_for(lambda event_type, _: event_type == "DELETED", timeout=1)
        except BaseException as exc:  # recorded for the test to check
            raised.append(exc)
        finally:
            ended.set()

    waiter = threading.Thread(target=wait, name="test-wait-for-timeout")
    waiter.start()
    # the watch itself would last minutes (timeoutSeconds 300): only the 1 s timeout ends it this soon
    assert ended.wait(5)
    waiter.join(5)
    assert len(raised) == 1 and isinstance(raised[0], WaitTimeout)
    assert "ConfigMap default/waited" in str(raised[0])
    with config, pytest.raises(WaitTimeout):
        created.wait_for(lambda *_: True, timeout=0)


def test_wait_for_refuses_an_object_without_a_name_or_predicates(config: Config) -> None:
    with config:
        with pytest.raises(ValueError, match="no metadata.name"):
            ConfigMap().wait_for(lambda *_: True, timeout=1)
        with pytest.raises(ValueError, match="at least one predicate"):
            configmap("x").wait_for({}, timeout=1)
        with pytest.raises(TypeError, match="expected a predicate"):
            configmap("x").wait_for("ready", timeout=1)


# -- gvk, setters, from_file ----------------------------------------------------------------------


def test_gvk_names_the_kind_of_a_class() -> None:
    assert Pod.gvk() == GVK(api_version="v1", kind="Pod")
    gvk = Deployment.gvk()
    assert (gvk.group, gvk.version, gvk.kind) == ("apps", "v1", "Deployment")
    with pytest.raises(ValueError, match="Resource has no api_version"):
        Resource.gvk()


def test_name_and_namespace_setters_create_the_metadata() -> None:
    cm = ConfigMap(data={"k": "v"})
    cm.name = "settings"
    cm.namespace = "team-a"
    assert (cm.metadata.name, cm.metadata.namespace) == ("settings", "team-a")
    other = ConfigMap()
    other.namespace = "team-b"
    assert (other.name, other.namespace) == (None, "team-b")
    with pytest.raises(TypeError, match="must be a string"):
        cm.name = 3  # type: ignore[assignment]


def test_name_setter_on_a_read_only_object_raises() -> None:
    sealed = Pod.from_dict_sealed(make_pod("web"))
    with pytest.raises(ReadOnlyError):
        sealed.name = "other"
    with pytest.raises(ReadOnlyError):
        Pod.from_dict_sealed({"kind": "Pod"}).namespace = "x"


def test_from_file_reads_an_object_of_the_kind(tmp_path: Path, server: FakeAPIServer, config: Config) -> None:
    manifest = tmp_path / "cm.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-file\ndata:\n  k: v\n")
    loaded = ConfigMap.from_file(manifest)
    assert isinstance(loaded, ConfigMap) and loaded.data == {"k": "v"}
    with config:
        assert loaded.create().metadata.name == "from-file"
    both = tmp_path / "both.yaml"
    both.write_text(manifest.read_text() + "---\n" + manifest.read_text().replace("from-file", "second"))
    assert [c.name for c in ConfigMap.from_file(both, load_all=True)] == ["from-file", "second"]
    with pytest.raises(TypeError, match="holds a ConfigMap .*not a Pod"):
        Pod.from_file(manifest)
