"""Suite-wide fixtures: every test must stop every thread it started."""

from __future__ import annotations

import compileall
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from cluster_support import FAST
from cpu_load import XDIST_GROUP, BusyLoad, load_from_env

from cloudcoil_cache.caching import Cache, Tuning
from cloudcoil_cache.client import Config
from cloudcoil_cache.testing import FakeAPIServer

# How long a test's threads get to finish after its fixtures are torn down. Threads are
# joined (waited on), never slept for: a thread that ends earlier ends the wait earlier.
_THREAD_GRACE_SECONDS = 5.0

_ROOT = Path(__file__).resolve().parents[1]


def pytest_sessionstart(session: pytest.Session) -> None:
    """Byte-compile the library and the examples once, before any test runs.

    The suite starts Python subprocesses by the hundred (the command line, the examples, servers);
    where PYTHONDONTWRITEBYTECODE is set (CI images often set it) no ``.pyc`` is ever written and
    each subprocess compiles every module it imports again: about a second of CPU apiece. Python
    still reads ``.pyc`` files that exist, so writing them here once (up to date ones are skipped)
    spares that work; without the variable Python would have written the same files itself.
    Under pytest-xdist the controller does it before it starts the workers.
    """
    if hasattr(session.config, "workerinput"):  # an xdist worker
        return
    for folder in ("cloudcoil_cache", "examples"):
        compileall.compile_dir(_ROOT / folder, quiet=2)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadgroup``) the tests of the session's real API server share one worker,
    so one kube-apiserver + etcd serves them all, as in a run without xdist; so do the tests under CPU load
    (``cpu_load``), so that one worker at a time runs busy processes beside them."""
    loaded = load_from_env() > 0
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "real_api_server" in fixtures:
            item.add_marker(pytest.mark.xdist_group("real-api-server"))
        elif loaded and "cpu_load" in fixtures:
            item.add_marker(pytest.mark.xdist_group(XDIST_GROUP))


@pytest.fixture(scope="module")
def cpu_load() -> Iterator[BusyLoad]:
    """Busy processes (``CLOUDCOIL_TEST_CPU_LOAD``, default 3; 0: none) beside the tests of a module,
    killed and reaped after its last test (``tests/cpu_load.py``); the trust, chaos and hostile tiers
    use it for every module (their ``conftest.py``)."""
    with BusyLoad(load_from_env()) as load:
        yield load


@pytest.fixture(autouse=True)
def no_leaked_threads():
    """Fail the test if it leaves running any thread that it started."""
    before = set(threading.enumerate())
    yield
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    for t in leaked:
        t.join(_THREAD_GRACE_SECONDS)
    still = [t.name for t in leaked if t.is_alive()]
    assert not still, f"test leaked running threads: {still}"


@pytest.fixture
def server() -> Iterator[FakeAPIServer]:
    """A fake API server on loopback with bookmarks every 0.5 s."""
    with FakeAPIServer(bookmark_interval=0.5) as srv:
        yield srv


@pytest.fixture
def kubeconfig(server: FakeAPIServer, tmp_path: Path) -> str:
    return str(server.write_kubeconfig(tmp_path / "kubeconfig"))


@pytest.fixture
def make_config(kubeconfig: str) -> Iterator[Callable[..., Config]]:
    """``make_config(resources=[Pod], tuning=FAST, namespace=None, **cache_options)`` → a cached Config.

    Every Config made is closed at teardown (tests unwind their own scopes with ``with``/``finally``).
    """
    made: list[Config] = []

    def make(tuning: Tuning = FAST, namespace: str | None = None, **options: Any) -> Config:
        config = Config(kubeconfig=kubeconfig, namespace=namespace, cache=Cache(tuning=tuning, **options))
        made.append(config)
        return config

    yield make
    for config in made:
        config.close()


@pytest.fixture
def without_content_sharing() -> Iterator[None]:
    """Content-keyed sharing (``models._frozen.sharing``) off for the test, so that an object
    shared between two versions can only have come from another mechanism."""
    from cloudcoil_cache.models._frozen import sharing_stats
    from cloudcoil_cache.models.kubernetes.core.v1 import Pod
    from cloudcoil_cache.testing import make_pod

    Pod.from_dict_sealed(make_pod("x", "default"))  # the tables of a pod's classes exist from now on
    tables = [t for t in sharing_stats() if t.enabled]
    for table in tables:
        table.enabled = False
    yield
    for table in tables:
        table.enabled = True
