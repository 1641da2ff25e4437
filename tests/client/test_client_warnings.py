"""The API server's ``Warning`` headers reach the caller: a handler of the Config's, or the log once per text."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from _client_support import pod

from cloudcoil_cache._http import WarningLog, parse_warnings
from cloudcoil_cache._http._warnings import MAX_TEXT
from cloudcoil_cache.client import Config
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer


def bogus_pod(name: str) -> Pod:
    data = pod(name).to_dict()
    data["spec"]["bogus"] = 1  # the server drops it, answering with a warning
    return Pod.from_dict(data)


def test_a_handler_gets_each_warning_of_a_write(kubeconfig: str, server: FakeAPIServer) -> None:
    seen: list[str] = []
    with Config(kubeconfig=kubeconfig, warning_handler=seen.append) as config:
        Pod.client(config).create(bogus_pod("a"))
        Pod.client(config).create(pod("b"))  # no warning
        Pod.client(config.clone(namespace="default")).create(bogus_pod("c"))  # a clone keeps the handler
    assert seen == ['unknown field "spec.bogus"', 'unknown field "spec.bogus"']
    assert "bogus" not in server.get("pods", "a", "default")["spec"]


def test_by_default_each_distinct_warning_is_logged_once(kubeconfig: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="cloudcoil_cache.warnings"), Config(kubeconfig=kubeconfig) as config:
        for name in ("a", "b", "c"):
            Pod.client(config).create(bogus_pod(name))
    logged = [r.getMessage() for r in caplog.records if r.name == "cloudcoil_cache.warnings"]
    assert logged == ['Warning: unknown field "spec.bogus"']


def test_a_handler_that_raises_is_logged_and_the_write_succeeds(
    kubeconfig: str, server: FakeAPIServer, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(text: str) -> None:
        raise RuntimeError("handler bug")

    with caplog.at_level(logging.ERROR), Config(kubeconfig=kubeconfig, warning_handler=broken) as config:
        created = Pod.client(config).create(bogus_pod("a"))
    assert created.metadata.name == "a" and server.get("pods", "a", "default")
    assert any("the warning handler raised" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("header", "texts"),
    [
        ('299 - "one"', ["one"]),
        ('299 - "a \\"quoted\\" one"', ['a "quoted" one']),
        ('299 - "one", 299 - "two, with a comma" "Wed, 21 Oct 2015 07:28:00 GMT"', ["one", "two, with a comma"]),
        ('199 agent "not a 299", 299 kube-apiserver "kept"', ["kept"]),
        ('299 - unquoted, 299 - "after the bad one"', ["after the bad one"]),
        ('299 - "x" junk, 299 - "y"', ["y"]),  # an entry with garbage after its text is malformed
        ('299 a"b "c"', []),
        (",,, ", []),
        ('299 - "Gr\u00c3\u00b6\u00c3\u009fe"', ["Gr\u00f6\u00dfe"]),  # UTF-8 bytes as http.client hands them on
        ('299 "no agent"', []),
        ('299 - "unterminated', []),
        ("", []),
        ("garbage", []),
    ],
)
def test_warning_headers_are_parsed_as_client_go_does(header: str, texts: list[str]) -> None:
    assert parse_warnings(header) == texts


def test_a_long_warning_is_cut() -> None:
    assert parse_warnings('299 - "' + "x" * 5000 + '"') == ["x" * MAX_TEXT]


def test_a_non_ascii_warning_from_a_server_arrives_intact(kubeconfig: str, server: FakeAPIServer) -> None:
    seen: list[str] = []
    with Config(kubeconfig=kubeconfig, warning_handler=seen.append) as config:
        data = pod("a").to_dict()
        data["spec"]["größe"] = 1
        Pod.client(config).create(Pod.from_dict(data))
    assert seen == ['unknown field "spec.größe"']


def test_the_default_log_remembers_a_bounded_number_of_texts(caplog: pytest.LogCaptureFixture) -> None:
    log = WarningLog()
    with caplog.at_level(logging.WARNING, logger="cloudcoil_cache.warnings"):
        for n in range(1100):
            log(f"w{n}")
        log("w0")  # forgotten by now (the oldest go first): logged again
        log("w1099")  # remembered
    texts: list[Any] = [r.getMessage() for r in caplog.records]
    assert len(texts) == 1101 and texts[-1] == "Warning: w0"
    assert len(log._seen) <= 1024
