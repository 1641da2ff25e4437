"""Fixtures for the client tests: fake API servers over HTTP and HTTPS (trustme CA) and Configs."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import trustme

from cloudcoil_cache.client import Config
from cloudcoil_cache.testing import FakeAPIServer

#: Short periods so that every test stays fast.
FAST_SERVER = dict(bookmark_interval=0.5, watch_timeout_range=(5.0, 10.0), too_large_wait=0.1)


@pytest.fixture
def server() -> Iterator[FakeAPIServer]:
    with FakeAPIServer(**FAST_SERVER) as srv:  # type: ignore[arg-type]
        yield srv


@pytest.fixture
def kubeconfig(server: FakeAPIServer, tmp_path: Path) -> str:
    return server.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def make_config() -> Iterator[Callable[..., Config]]:
    """``make_config(**Config arguments)``; every Config made is closed afterwards."""
    made: list[Config] = []

    def make(**kwargs: Any) -> Config:
        config = Config(**kwargs)
        made.append(config)
        return config

    yield make
    for config in made:
        config.close()


@pytest.fixture
def config(kubeconfig: str, make_config: Callable[..., Config]) -> Config:
    """An uncached Config for ``server`` from the kubeconfig it wrote."""
    return make_config(kubeconfig=kubeconfig)


@pytest.fixture(scope="session")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="session")
def server_cert(ca: trustme.CA) -> trustme.LeafCert:
    return ca.issue_cert("127.0.0.1", "localhost")


@pytest.fixture
def make_https_server(ca: trustme.CA, server_cert: trustme.LeafCert) -> Iterator[Callable[..., FakeAPIServer]]:
    """``make_https_server(**FakeAPIServer options)`` → a started HTTPS fake, stopped afterwards."""
    started: list[FakeAPIServer] = []

    def make(**kwargs: Any) -> FakeAPIServer:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server_cert.configure_cert(context)
        srv = FakeAPIServer(ssl_context=context, ca_cert=ca.cert_pem.bytes(), **{**FAST_SERVER, **kwargs})
        started.append(srv.start())
        return srv

    yield make
    for srv in started:
        srv.stop()


@pytest.fixture(params=["http", "https-token"])
def any_server(
    request: pytest.FixtureRequest, make_https_server: Callable[..., FakeAPIServer]
) -> Iterator[FakeAPIServer]:
    """The fake server over plain HTTP, and over HTTPS with bearer-token authentication."""
    if request.param == "http":
        with FakeAPIServer(**FAST_SERVER) as srv:  # type: ignore[arg-type]
            yield srv
    else:
        yield make_https_server(expected_token="lifecycle-token")


@pytest.fixture
def any_config(any_server: FakeAPIServer, make_config: Callable[..., Config], tmp_path: Path) -> Config:
    """An uncached Config for ``any_server`` from the kubeconfig it wrote."""
    return make_config(kubeconfig=any_server.write_kubeconfig(tmp_path / "any-kubeconfig"))
