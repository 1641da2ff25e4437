"""Bad arguments: selectors, Cache options, names and namespaces. Each row gets a typed error that
names the problem, from the API path and from the cache path alike, and leaves nothing running."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from _clean import fails_cleanly

from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import BadRequest, CloudcoilError
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer, make_pod


@pytest.fixture
def cluster() -> Iterator[FakeAPIServer]:
    with FakeAPIServer() as server:
        server.create("pods", make_pod("p0", "default"), "default")
        yield server


@pytest.fixture
def live(cluster) -> Iterator[Config]:
    config = Config(server=cluster.url, namespace="default")
    yield config
    config.close()


@pytest.fixture
def cached(cluster) -> Iterator[Config]:
    config = Config(server=cluster.url, namespace="default", cache=Cache(resources=[Pod], mode="strict"))
    config.activate()
    yield config
    config.deactivate()
    config.close()


def run_in(config: Config, action: Any) -> Any:
    def run() -> Any:
        with config:
            return action()

    return run


# -- selectors ------------------------------------------------------------------------------------

BAD_LABEL_SELECTORS = ["app in (a", "=x", "!", "app=a,", "a b", "app notin a"]
BAD_FIELD_SELECTORS = ["status.phase", "foo.bar=1"]


@pytest.mark.parametrize("selector", BAD_LABEL_SELECTORS)
@pytest.mark.parametrize("where", ["live", "cached"])
def test_a_bad_label_selector_is_a_typed_error_naming_it(live, cached, where, selector):
    config = live if where == "live" else cached
    error = fails_cleanly(
        run_in(config, lambda: Pod.list(label_selector=selector)), (BadRequest, ValueError), "label selector"
    )
    assert repr(selector)[1:-1] in str(error) or selector in str(error)


@pytest.mark.parametrize("selector", BAD_FIELD_SELECTORS)
@pytest.mark.parametrize("where", ["live", "cached"])
def test_a_bad_field_selector_is_a_typed_error_naming_it(live, cached, where, selector):
    config = live if where == "live" else cached
    fails_cleanly(
        run_in(config, lambda: Pod.list(field_selector=selector)), (BadRequest, ValueError), r"field (selector|label)"
    )


# -- Cache options --------------------------------------------------------------------------------

CACHE_ROWS: list[tuple[str, dict[str, Any], type[BaseException], str]] = [
    ("mode", {"mode": "bogus"}, ValueError, r"mode='bogus'.*'strict' or 'fallback'"),
    ("resources-a-string", {"resources": "Pod"}, ValueError, r"resources=.*list of resource classes"),
    ("resources-not-classes", {"resources": [1]}, ValueError, r"1 is not a resource class"),
    ("sync-timeout-negative", {"sync_timeout": -1}, ValueError, r"sync_timeout=-1"),
    ("max-staleness-negative", {"max_staleness": -1}, ValueError, r"max_staleness"),
    ("max-staleness-not-a-number", {"max_staleness": "x"}, ValueError, r"max_staleness"),
    ("label-selector-not-a-string", {"label_selector": 5}, ValueError, r"label_selector.*got int"),
    ("label-selector-syntax", {"label_selector": "app in (a"}, ValueError, r"invalid label selector 'app in \(a'"),
    ("field-selector-syntax", {"field_selector": "x"}, ValueError, r"invalid field selector 'x'"),
    ("unknown-option", {"bogus": 1}, TypeError, r"bogus"),
]


@pytest.mark.parametrize("options,error,words", [r[1:] for r in CACHE_ROWS], ids=[r[0] for r in CACHE_ROWS])
def test_a_bad_cache_option_is_refused_at_construction(options, error, words):
    fails_cleanly(lambda: Cache(**options), error, words)


def test_a_cache_namespace_with_a_slash_is_refused():
    fails_cleanly(lambda: Cache(resources=[Pod], namespaces=["a/b"]), (ValueError, CloudcoilError), "a/b")


# -- names and namespaces -------------------------------------------------------------------------

NAME_ROWS = [
    pytest.param("live", "..", id="live-dotdot"),
    pytest.param("live", ".", id="live-dot"),
    pytest.param("live", "a/b", id="live-slash"),
    pytest.param("live", "a%2Fb", id="live-percent"),
    pytest.param("cached", "..", id="cached-dotdot"),
    pytest.param("cached", "a/b", id="cached-slash"),
]


@pytest.mark.parametrize("where,name", NAME_ROWS)
def test_an_invalid_name_is_refused_before_any_request(live, cached, cluster, where, name):
    config = live if where == "live" else cached
    fails_cleanly(run_in(config, lambda: Pod.get(name)), ValueError, "name|path segment")


@pytest.mark.parametrize(
    "namespace",
    [
        pytest.param("..", id="dotdot"),
        pytest.param("a/b", id="slash"),
    ],
)
@pytest.mark.parametrize("verb", ["get", "list", "create"])
def test_an_invalid_namespace_is_refused_before_any_request(live, verb, namespace):
    actions = {
        "get": lambda: Pod.get("p0", namespace),
        "list": lambda: Pod.list(namespace=namespace),
        "create": lambda: Pod.create(Pod(metadata={"name": "x", "namespace": namespace})),
    }
    fails_cleanly(run_in(live, actions[verb]), ValueError, "namespace|path segment")


@pytest.mark.parametrize("name", [None, 5, ""], ids=repr)
def test_a_missing_name_is_a_value_error(live, name):
    fails_cleanly(run_in(live, lambda: Pod.get(name)), ValueError, "a name is required")
