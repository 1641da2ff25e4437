"""``install``/``uninstall`` against the FakeAPIServer (it stores webhook configurations)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from cloudcoil_cache.admission import AdmissionWebhook
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import ResourceNotFound
from cloudcoil_cache.models.kubernetes.admissionregistration.v1 import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Namespace

PEM = b"-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
NAME = "hooks.example.com"


@pytest.fixture
def config(fake_kubeconfig: Path) -> Iterator[Config]:
    cfg = Config(kubeconfig=str(fake_kubeconfig), namespace="default")
    yield cfg
    cfg.close()


def _read(config: Config, cls: Any) -> dict[str, Any]:
    data: dict[str, Any] = config.client_for(cls, cached=False).get(NAME).to_dict()
    return data


def _webhook() -> AdmissionWebhook:
    hook = AdmissionWebhook()
    hook.mutating(ConfigMap, path="/m")(lambda request: None)
    hook.validating(ConfigMap, path="/v", namespace_selector={"matchLabels": {"team": "a"}})(lambda request: None)
    return hook


def test_install_applies_both_with_the_default_namespace_selector(config: Config) -> None:
    _webhook().install(
        config, name=NAME, url="https://127.0.0.1:9443", ca_bundle=PEM, exclude_namespaces=("kube-system", "ops")
    )
    mutating = _read(config, MutatingWebhookConfiguration)
    (hook,) = mutating["webhooks"]
    assert hook["clientConfig"] == {"url": "https://127.0.0.1:9443/m", "caBundle": base64.b64encode(PEM).decode()}
    assert hook["namespaceSelector"] == {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", "ops"]}
        ]
    }
    (vhook,) = _read(config, ValidatingWebhookConfiguration)["webhooks"]
    assert vhook["namespaceSelector"] == {"matchLabels": {"team": "a"}}  # its own wins
    fields = config.client_for(MutatingWebhookConfiguration, cached=False).get(NAME).metadata.managed_fields
    assert {f.manager for f in fields or []} == {"cloudcoil-cache-admission"}


def test_install_service_form_excludes_the_serving_namespace(config: Config) -> None:
    _webhook().install(config, name=NAME, service=("ops", "hooks", 8443), ca_bundle=PEM)
    (hook,) = _read(config, MutatingWebhookConfiguration)["webhooks"]
    assert hook["clientConfig"]["service"] == {"namespace": "ops", "name": "hooks", "port": 8443, "path": "/m"}
    assert hook["namespaceSelector"]["matchExpressions"][0]["values"] == ["kube-system", "ops"]


def test_a_kind_without_routes_is_deleted_and_uninstall_removes_both(config: Config) -> None:
    _webhook().install(config, name=NAME, url="https://127.0.0.1:9443", ca_bundle=PEM)
    only_validating = AdmissionWebhook()
    only_validating.validating(Namespace, path="/ns")(lambda request: None)
    only_validating.install(config, name=NAME, url="https://127.0.0.1:9443", ca_bundle=PEM)
    with pytest.raises(ResourceNotFound):
        _read(config, MutatingWebhookConfiguration)
    (hook,) = _read(config, ValidatingWebhookConfiguration)["webhooks"]
    assert hook["rules"][0]["resources"] == ["namespaces"] and hook["rules"][0]["scope"] == "Cluster"
    AdmissionWebhook.uninstall(config, NAME)
    AdmissionWebhook.uninstall(config, NAME)  # absent: fine
    for cls in (MutatingWebhookConfiguration, ValidatingWebhookConfiguration):
        with pytest.raises(ResourceNotFound):
            _read(config, cls)


class _Server:
    """What install(server=) uses of a WebhookServer: url, ca_bundle, add_ca_bundle_listener."""

    def __init__(self) -> None:
        self.url = "https://127.0.0.1:9555"
        self.ca_bundle = PEM
        self.listeners: list[Callable[..., None]] = []

    def add_ca_bundle_listener(self, listener: Callable[..., None]) -> None:
        self.listeners.append(listener)


def test_install_with_a_server_reapplies_when_its_ca_bundle_changes(config: Config) -> None:
    server = _Server()
    _webhook().install(config, name=NAME, server=server)
    assert (
        _read(config, MutatingWebhookConfiguration)["webhooks"][0]["clientConfig"]["url"] == "https://127.0.0.1:9555/m"
    )
    server.ca_bundle = PEM + PEM.replace(b"fake", b"next")
    for listener in server.listeners:
        listener(server.ca_bundle)
    for cls in (MutatingWebhookConfiguration, ValidatingWebhookConfiguration):
        bundle = _read(config, cls)["webhooks"][0]["clientConfig"]["caBundle"]
        assert base64.b64decode(bundle) == server.ca_bundle


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"url": "https://a", "service": ("ns", "svc", 443)},
        {"url": "http://insecure"},
        {"service": ("ns", "svc", 0)},
        {"url": "https://a", "exclude_namespaces": "kube-system"},
        {"url": "https://a", "field_manager": ""},
    ],
)
def test_install_checks_its_arguments_before_any_request(config: Config, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        _webhook().install(config, name=NAME, ca_bundle=PEM, **kwargs)


def test_wait_effective_polls_the_probe_until_true() -> None:
    from cloudcoil_cache.errors import WaitTimeout

    answers = iter([False, False, True])
    AdmissionWebhook.wait_effective(lambda: next(answers), timeout=5.0)
    with pytest.raises(WaitTimeout):
        AdmissionWebhook.wait_effective(lambda: False, timeout=0.1)
