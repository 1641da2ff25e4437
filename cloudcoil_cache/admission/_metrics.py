"""The webhook's metrics (controller-runtime's names and ours): counted always, exposed with the ``metrics`` extra."""

from __future__ import annotations

import threading
from typing import Any, Iterator

__all__ = ["LATENCY_BUCKETS", "AdmissionMetrics"]

#: Prometheus' default buckets, as controller-runtime's webhook latency histogram uses.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class AdmissionMetrics:
    """Counters of one ``AdmissionWebhook`` (thread-safe; read with ``value()``/``snapshot()``).

    ``render()`` gives the Prometheus text exposition (a private registry; needs ``prometheus_client``).
    The server reports its certificate through ``certificate_read(ok)``/``certificate_expiry(ts)``.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[tuple[str, tuple[str, ...]], float] = {}
        self._gauges: dict[tuple[str, tuple[str, ...]], float] = {}
        self._latency: dict[str, list[float]] = {}  # webhook → bucket counts + [sum, count]

    # ---------------------------------------------------------------- counting
    def _inc(self, name: str, *labels: str, by: float = 1.0) -> None:
        with self._lock:
            key = (name, labels)
            self._counters[key] = self._counters.get(key, 0.0) + by

    def _add_gauge(self, name: str, labels: tuple[str, ...], by: float) -> None:
        with self._lock:
            key = (name, labels)
            self._gauges[key] = self._gauges.get(key, 0.0) + by

    def request_started(self, webhook: str) -> None:
        self._add_gauge("controller_runtime_webhook_requests_in_flight", (webhook,), 1.0)

    def request_finished(self, webhook: str, code: int, seconds: float) -> None:
        self._add_gauge("controller_runtime_webhook_requests_in_flight", (webhook,), -1.0)
        self._inc("controller_runtime_webhook_requests_total", webhook, str(code))
        with self._lock:
            counts = self._latency.setdefault(webhook, [0.0] * (len(LATENCY_BUCKETS) + 2))
            for i, bound in enumerate(LATENCY_BUCKETS):
                if seconds <= bound:
                    counts[i] += 1
            counts[-2] += seconds
            counts[-1] += 1

    def decision(self, webhook: str, decision: str) -> None:
        """``allowed``, ``denied``, ``patched``, ``invalid``, ``error`` or ``timeout``."""
        self._inc("cloudcoil_cache_admission_decisions_total", webhook, decision)

    def panic(self) -> None:
        self._inc("controller_runtime_webhook_panics_total")

    def cached_read(self, kind: str, result: str) -> None:
        self._inc("cloudcoil_cache_admission_cached_reads_total", kind, result)

    def handler_abandoned(self) -> None:
        self._inc("cloudcoil_cache_admission_handlers_abandoned_total")

    def certificate_read(self, ok: bool) -> None:
        self._inc("certwatcher_read_certificate_total")
        if not ok:
            self._inc("certwatcher_read_certificate_errors_total")

    def certificate_expiry(self, timestamp: float) -> None:
        with self._lock:
            self._gauges[("cloudcoil_cache_webhook_certificate_expiry_timestamp_seconds", ())] = float(timestamp)

    # ----------------------------------------------------------------- reading
    def value(self, name: str, *labels: str) -> float:
        """A counter's or gauge's current value (0 when never counted)."""
        with self._lock:
            key = (name, labels)
            return self._counters.get(key, self._gauges.get(key, 0.0))

    def snapshot(self) -> dict[str, dict[tuple[str, ...], float]]:
        """Every counter and gauge: name → labels → value."""
        out: dict[str, dict[tuple[str, ...], float]] = {}
        with self._lock:
            for (name, labels), value in [*self._counters.items(), *self._gauges.items()]:
                out.setdefault(name, {})[labels] = value
        return out

    def render(self) -> tuple[bytes, str]:
        """The Prometheus text exposition and its content type (needs ``prometheus_client``)."""
        from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

        registry = CollectorRegistry()
        registry.register(_Collector(self))
        return generate_latest(registry), CONTENT_TYPE_LATEST


_HELP = {
    "controller_runtime_webhook_requests_total": (
        "Total number of admission requests by HTTP status code.",
        "webhook code",
    ),
    "controller_runtime_webhook_requests_in_flight": ("Current number of admission requests being served.", "webhook"),
    "controller_runtime_webhook_panics_total": ("Total number of webhook handler failures (exceptions).", ""),
    "certwatcher_read_certificate_total": ("Total number of certificate reads", ""),
    "certwatcher_read_certificate_errors_total": ("Total number of certificate read errors", ""),
    "cloudcoil_cache_admission_decisions_total": ("Admission answers by decision.", "webhook decision"),
    "cloudcoil_cache_admission_cached_reads_total": ("request.cached reads by kind and result.", "kind result"),
    "cloudcoil_cache_admission_handlers_abandoned_total": ("Sync handlers left running past their deadline.", ""),
    "cloudcoil_cache_webhook_certificate_expiry_timestamp_seconds": ("Unix time the serving certificate expires.", ""),
}


class _Collector:
    """Builds the metric families from the counts at scrape time."""

    def __init__(self, metrics: AdmissionMetrics) -> None:
        self._metrics = metrics

    def describe(self) -> list[Any]:
        return []

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        values = self._metrics.snapshot()
        for name, (text, labels) in _HELP.items():
            is_counter = name.endswith("_total")
            family_class = CounterMetricFamily if is_counter else GaugeMetricFamily
            family = family_class(name.removesuffix("_total") if is_counter else name, text, labels=labels.split())
            for label_values, value in sorted(values.get(name, {}).items()):
                family.add_metric(list(label_values), value)
            yield family
        latency = HistogramMetricFamily(
            "controller_runtime_webhook_latency_seconds",
            "Histogram of the latency of admission requests",
            labels=["webhook"],
        )
        with self._metrics._lock:
            histograms = {k: list(v) for k, v in self._metrics._latency.items()}
        for webhook, counts in sorted(histograms.items()):
            buckets = [(str(b), counts[i]) for i, b in enumerate(LATENCY_BUCKETS)] + [("+Inf", counts[-1])]
            latency.add_metric([webhook], buckets, counts[-2])
        yield latency
