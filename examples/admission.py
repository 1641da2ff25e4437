"""Admission webhooks answered from the cache: refuse a ConfigMap whose referenced Secret does not exist,
and label every ConfigMap admitted - served over HTTPS with self-signed certificates, registered with
their caBundle, and exercised step by step.

    python examples/admission.py                                # the embedded fake API server
    KUBECONFIG=~/.kube/config python examples/admission.py      # a real cluster that can reach the url

A ConfigMap names its Secret in the annotation ``example.com/secret``. The validating webhook looks the
Secret up with ``request.cached(Secret)`` (the webhook's own informer cache, in strict mode: no API call
per admission request) and denies the ConfigMap when it is missing; the mutating webhook adds the label
``example.com/checked=true``; a ConfigMap that names no Secret is admitted with a warning.

Without ``KUBECONFIG`` it starts the embedded fake API server, which calls webhooks as kube-apiserver
does. Against a real cluster, kube-apiserver must reach the webhook at ``https://HOST:PORT/...``:
``--host`` is both the address listened on and the one registered (the default 127.0.0.1 suits a
kube-apiserver on this machine, such as the project's ``RealAPIServer``). The webhooks select only
``--namespace`` and are uninstalled at the end, before the server stops.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import urllib.parse
from typing import Any

from _fake_cluster import api_reads, cluster

from cloudcoil_cache.admission import AdmissionDenied, AdmissionRequest, AdmissionWebhook, WebhookServer
from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.caching import Cache
from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import Forbidden, ResourceConflict, ResourceNotFound
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Namespace, Secret

NAME = "configmap-secrets.example.com"  # the Mutating- and ValidatingWebhookConfiguration
SECRET_ANNOTATION = "example.com/secret"
CHECKED_LABEL = "example.com/checked"
WARNING = re.compile(r'299 - "((?:[^"\\]|\\.)*)"')


def admission_webhook(config: Config, namespace: str) -> AdmissionWebhook:
    """The two handlers; both select only ``namespace`` (its ``kubernetes.io/metadata.name`` label)."""
    webhook = AdmissionWebhook(config=config)  # request.cached reads config's Cache(resources=[Secret])
    only_here = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}

    @webhook.validating(ConfigMap, namespace_selector=only_here, timeout_seconds=5)
    def secret_exists(request: AdmissionRequest[ConfigMap]) -> None:
        cm = request.resource
        assert cm is not None  # CREATE and UPDATE carry the object
        secret = (cm.metadata.annotations or {}).get(SECRET_ANNOTATION)
        if secret is None:
            request.warn(f"ConfigMap {cm.name or '(generated)'} names no Secret (annotation {SECRET_ANNOTATION})")
            return
        if request.cached(Secret).get(secret) is None:  # a deep copy from memory, or None: no API call
            raise AdmissionDenied(f'Secret "{secret}" referenced by annotation {SECRET_ANNOTATION} does not exist')

    @webhook.mutating(ConfigMap, namespace_selector=only_here)
    def add_label(request: AdmissionRequest[ConfigMap]) -> ConfigMap | None:
        cm = request.resource  # an editable copy: return it edited, answered as a JSON Patch
        assert cm is not None
        labels = dict(cm.metadata.labels or {})
        if labels.get(CHECKED_LABEL) == "true":
            return None  # nothing to change: no patch
        cm.metadata.labels = {**labels, CHECKED_LABEL: "true"}
        return cm

    return webhook


def configmap(name: str, namespace: str, secret: str | None = None) -> ConfigMap:
    annotations = {SECRET_ANNOTATION: secret} if secret is not None else None
    return ConfigMap(metadata=ObjectMeta(name=name, namespace=namespace, annotations=annotations), data={"k": "v"})


def create_with_warnings(config: Config, cm: ConfigMap) -> tuple[ConfigMap, list[str]]:
    """Create ``cm`` and return it with the ``Warning`` headers of the answer (the typed client drops them)."""
    path = f"/api/v1/namespaces/{urllib.parse.quote(cm.namespace)}/configmaps"
    answer = config.transport.request(
        "POST", path, body=json.dumps(cm.to_dict()).encode(), content_type="application/json"
    )
    warnings = WARNING.findall(answer.headers.get("Warning") or "")  # 299 - "text", comma-joined
    return ConfigMap.from_dict(answer.json()), warnings


def denies(namespace: str) -> bool:
    """The probe for ``wait_effective``: a dry-run create the validating webhook must deny."""
    try:
        configmap("probe", namespace, secret="no-such-secret").create(dry_run=True)
    except Forbidden:
        return True
    return False


def demo(config: Config, webhook: AdmissionWebhook, server: WebhookServer, namespace: str) -> dict[str, Any]:
    """The steps, printed as they happen; what happened, for the tests."""
    result: dict[str, Any] = {}
    webhook.install(config, name=NAME, server=server)  # both configurations, with the server's caBundle
    AdmissionWebhook.wait_effective(lambda: denies(namespace), timeout=10)
    print(f"installed {NAME}: webhooks at {server.url}", flush=True)

    try:
        configmap("app-settings", namespace, secret="app-credentials").create()
    except Forbidden as exc:
        result["denied"] = str(exc)
        print(f"1. denied: {exc}", flush=True)

    Secret(
        metadata=ObjectMeta(name="app-credentials", namespace=namespace), string_data={"password": "s3cret"}
    ).create()
    admitted = configmap("app-settings", namespace, secret="app-credentials").create()  # read-your-writes
    result["admitted labels"] = dict(admitted.metadata.labels or {})
    print(f"2. admitted once the Secret exists; labels {result['admitted labels']}", flush=True)

    plain, warnings = create_with_warnings(config, configmap("plain", namespace))
    result["warnings"] = warnings
    result["plain labels"] = dict(plain.metadata.labels or {})
    print(f"3. admitted with warning(s) {warnings}; labels {result['plain labels']}", flush=True)

    hits = webhook.metrics.value("cloudcoil_cache_admission_cached_reads_total", "Secret", "hit")
    misses = webhook.metrics.value("cloudcoil_cache_admission_cached_reads_total", "Secret", "miss")
    result["cached reads"] = {"hit": int(hits), "miss": int(misses)}
    print(f"4. the webhook's cached Secret reads: {int(hits)} hit(s), {int(misses)} miss(es)", flush=True)
    return result


def cleanup(config: Config, namespace: str, created_namespace: bool) -> None:
    for cls, name in ((ConfigMap, "app-settings"), (ConfigMap, "plain"), (Secret, "app-credentials")):
        with contextlib.suppress(ResourceNotFound):
            config.client_for(cls, cached=False).delete(name, namespace)
    if created_namespace:
        with contextlib.suppress(ResourceNotFound):
            config.client_for(Namespace, cached=False).delete(namespace)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespace", default="admission-demo")
    parser.add_argument("--host", default="127.0.0.1", help="the address the webhook server listens on")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    args = parser.parse_args(argv)

    with cluster(pods={}) as fake:
        # the webhook's own cache: the Secrets of one namespace, strict (an informer that cannot
        # serve raises CacheUnavailableError: answered HTTP 500, so the failure policy decides)
        config = Config(
            namespace=args.namespace, cache=Cache(resources=[Secret], namespaces=args.namespace, mode="strict")
        )
        with config:
            created_namespace = False
            with contextlib.suppress(ResourceConflict):
                Namespace(metadata=ObjectMeta(name=args.namespace)).create()
                created_namespace = True
            webhook = admission_webhook(config, args.namespace)
            server = WebhookServer(webhook, host=args.host, port=args.port)  # self-signed CA and leaf
            with server:  # the port opens once the Secret informer is synced
                try:
                    result = demo(config, webhook, server, args.namespace)
                finally:
                    AdmissionWebhook.uninstall(config, NAME)  # before the server goes: never leave them behind
            cleanup(config, args.namespace, created_namespace)
        config.close()
        if fake is not None:
            result["webhook calls"] = len(fake.webhook_calls)
            result["secret reads from the API"] = [r for r in api_reads(fake) if "/secrets/" in r]
            print(
                f"the fake API server called the webhooks {len(fake.webhook_calls)} times; "
                f"Secret GETs it served: {result['secret reads from the API']}",
                flush=True,
            )
    return result


if __name__ == "__main__":
    main()
