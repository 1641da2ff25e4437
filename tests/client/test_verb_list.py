"""The verb list is written once (``client._verbs``): the sync and async ``Api`` and the resource classes'
verbs, and their ``async_`` twins, are exactly that list."""

from __future__ import annotations

import inspect

import pytest

from cloudcoil_cache.client import ASYNC_VERBS, VERBS, Api, AsyncApi, Config, DeleteOptions, WatchOptions
from cloudcoil_cache.client._verbs import CLASS_VERBS, OBJECT_VERBS
from cloudcoil_cache.errors import ResourceNotFound
from cloudcoil_cache.models import Resource as ResourceData
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.resources import Resource
from cloudcoil_cache.testing import FakeAPIServer, make_pod

#: What the async Api has beyond the verbs: its readiness (discovery off the loop) and the value-option forms.
ASYNC_API_EXTRAS = {"ready", "list_with", "wait_for_match"}


def _async_methods(cls: type) -> set[str]:
    return {
        name
        for name, value in inspect.getmembers(cls)
        if not name.startswith("_") and (inspect.iscoroutinefunction(value) or inspect.isasyncgenfunction(value))
    }


def test_the_api_has_every_verb_and_its_async_twin_exactly_the_verbs():
    assert all(callable(getattr(Api, verb, None)) for verb in VERBS)
    assert _async_methods(AsyncApi) == set(VERBS) | ASYNC_API_EXTRAS


def test_a_resource_class_has_every_verb_and_an_async_twin_of_each():
    for verb in CLASS_VERBS + OBJECT_VERBS:
        assert callable(getattr(Pod, verb)), verb
        twin = getattr(Pod, f"async_{verb}")
        assert inspect.iscoroutinefunction(twin) or verb == "watch", verb
    # async_watch is an async iterator that can also be awaited, not a coroutine function
    public_async = {name for name in dir(Resource) if name.startswith("async_")}
    assert public_async == set(ASYNC_VERBS) | {"async_client"}


def test_the_verbs_are_composed_above_the_models_which_are_data():
    for verb in CLASS_VERBS + OBJECT_VERBS:
        assert not hasattr(ResourceData, verb), verb
    assert issubclass(Pod, Resource) and issubclass(Resource, ResourceData)


def test_the_value_options_carry_a_watch_and_a_delete_over_http(server: FakeAPIServer, config: Config) -> None:
    api = config.client_for(Pod, cached=False)
    api.create(make_pod("a", "default"))
    with api.watch_with(WatchOptions(namespace="default", allow_bookmarks=False)) as watch:
        event_type, seen = next(iter(watch))
    assert (event_type, seen.name) == ("ADDED", "a")
    kept = api.delete_with("a", "default", DeleteOptions(dry_run=True))
    assert kept.name == "a" and api.get("a", "default").name == "a"  # a dry run deletes nothing
    with pytest.raises(ValueError, match="preconditions: unknown keys"):
        api.delete_with("a", "default", DeleteOptions(preconditions={"name": "a"}))
    api.delete_with("a", "default", DeleteOptions(propagation_policy="background"))
    with pytest.raises(ResourceNotFound):
        api.get("a", "default")
