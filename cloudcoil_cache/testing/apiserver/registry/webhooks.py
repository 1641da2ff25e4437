"""Admission webhooks: calling the url-configured webhooks of stored webhook configurations.

kube-apiserver's MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins, for what tests
need: the ``admissionregistration.k8s.io/v1`` configurations' ``rules`` (matchPolicy Exact),
``namespaceSelector``, ``objectSelector``, ``failurePolicy``, ``timeoutSeconds``, ``sideEffects``
on dry runs and ``clientConfig.url`` + ``caBundle``; mutating webhooks first (configurations in
name order, webhooks in their listed order), then validating ones, one after another. Errors carry
kube-apiserver's wordings. Nothing here holds the store's lock while a webhook is called.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..machinery import status as _status
from ..machinery.resources import ResourceRegistry
from .webhook_client import OpenCalls, WebhookCallError, post_review
from .webhook_review import (
    AdmissionAttributes,
    CallFailed,
    internal_error,
    patched,
    quote,
    rejection,
    review_of,
    verified,
)
from .webhook_rules import Hook, Target, label_selector_matches, rules_match

if TYPE_CHECKING:
    from ..storage.store import Store

__all__ = ["WebhookCall", "Webhooks"]

_GROUP = "admissionregistration.k8s.io"
_CONFIGURATIONS = (("mutatingwebhookconfigurations", True), ("validatingwebhookconfigurations", False))
# Requests on these are never sent to webhooks (kube-apiserver's rule: no lock-out by a webhook).
_EXEMPT = frozenset(
    {
        "mutatingwebhookconfigurations",
        "validatingwebhookconfigurations",
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
        "mutatingadmissionpolicies",
        "mutatingadmissionpolicybindings",
    }
)


@dataclass(frozen=True)
class WebhookCall:
    """One webhook call: the review sent and the answer (``response``) or the failure (``error``).

    Its repr leaves out the review and the answer: their objects may be Secrets.
    """

    webhook: str
    configuration: str
    mutating: bool
    url: str
    request: dict[str, Any] = field(repr=False)
    response: dict[str, Any] | None = field(repr=False)
    error: str | None
    seconds: float


def _labels(obj: Mapping[str, Any] | None) -> dict[str, str]:
    meta = (obj or {}).get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return labels if isinstance(labels, dict) else {}


class Webhooks:
    """Reads the stored configurations at each write and calls the webhooks that match.

    ``calls`` records every call (``wait_for_calls`` waits for some). ``enabled`` (a callable
    reading the server's setting) turns the whole plugin off.
    """

    def __init__(self, store: Store, registry: ResourceRegistry, enabled: Callable[[], bool]) -> None:
        self._store = store
        self._registry = registry
        self._enabled = enabled
        self._cond = threading.Condition()
        self._calls: list[WebhookCall] = []
        self._open = OpenCalls()

    # -- the record ----------------------------------------------------------------------------

    @property
    def calls(self) -> list[WebhookCall]:
        with self._cond:
            return list(self._calls)

    def clear_calls(self) -> None:
        with self._cond:
            self._calls.clear()

    def wait_for_calls(self, count: int, timeout: float) -> list[WebhookCall]:
        with self._cond:
            self._cond.wait_for(lambda: len(self._calls) >= count, timeout)
            return list(self._calls)

    def _record(self, call: WebhookCall) -> None:
        with self._cond:
            self._calls.append(call)
            self._cond.notify_all()

    def abort_calls(self) -> None:
        """The server is stopping: cut the calls in flight and refuse new ones until ``resume``."""
        self._open.abort_all()

    def resume(self) -> None:
        self._open.reopen()

    # -- matching ------------------------------------------------------------------------------

    def configured(self) -> bool:
        """Whether the plugin is on and any webhook configuration is stored (else writes skip it)."""
        if not self._enabled():
            return False
        for plural, _ in _CONFIGURATIONS:
            rtype = self._registry.get(_GROUP, "v1", plural)
            if rtype is not None and self._store.all_objects(rtype):
                return True
        return False

    def hooks(self, attrs: AdmissionAttributes) -> list[Hook]:
        """The webhooks whose rules cover this write: mutating ones first, each kind's
        configurations in name order (the selectors are checked at the call)."""
        if not self._enabled() or (attrs.rtype.group == _GROUP and attrs.rtype.plural in _EXEMPT):
            return []
        target = attrs.target()
        found: list[Hook] = []
        for plural, mutating in _CONFIGURATIONS:
            rtype = self._registry.get(_GROUP, "v1", plural)
            if rtype is None:
                continue
            for entry in sorted(self._store.all_objects(rtype), key=lambda e: str(e.obj["metadata"].get("name", ""))):
                config_name = str(entry.obj["metadata"].get("name", ""))
                for spec in entry.obj.get("webhooks") or ():
                    if isinstance(spec, dict) and rules_match(spec.get("rules"), target):
                        found.append(Hook(config_name, mutating, spec))
        return found

    def _namespace_labels(self, attrs: AdmissionAttributes, target: Target, obj: Mapping[str, Any] | None) -> Any:
        """The labels a namespaceSelector is matched against (None: cluster-scoped, always matches)."""
        if target.resource == "namespaces" and target.group == "":
            if attrs.operation in ("CREATE", "UPDATE") and not target.subresource and obj is not None:
                return _labels(obj)
        elif not target.namespace:
            return None
        ns_type = self._registry.get("", "v1", "namespaces")
        if ns_type is None:
            return {}
        try:
            return _labels(self._store.get(ns_type, target.namespace, None).obj)
        except _status.StatusError:
            return {}

    def _selected(
        self, hook: Hook, attrs: AdmissionAttributes, obj: Mapping[str, Any] | None, old: Mapping[str, Any] | None
    ) -> bool:
        ns_labels = self._namespace_labels(attrs, attrs.target(), obj)
        if ns_labels is not None and not label_selector_matches(hook.spec.get("namespaceSelector"), ns_labels):
            return False
        selector = hook.spec.get("objectSelector")
        if not isinstance(selector, dict) or not selector:
            return True
        return (obj is not None and label_selector_matches(selector, _labels(obj))) or (
            old is not None and label_selector_matches(selector, _labels(old))
        )

    # -- dispatch ------------------------------------------------------------------------------

    def admit(
        self,
        hooks: list[Hook],
        mutating: bool,
        attrs: AdmissionAttributes,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
        warnings: list[str],
    ) -> dict[str, Any] | None:
        """Call the mutating (or validating) ``hooks`` that select this write, in order.

        Returns the object as the mutating webhooks patched it (``obj`` when none did). Raises
        ``StatusError``: a denial, a failed call under failurePolicy Fail (500), a dry run a
        webhook with side effects cannot take (400).
        """
        for hook in hooks:
            if hook.mutating != mutating or not self._selected(hook, attrs, obj, old):
                continue
            try:
                self._check_dry_run(hook, attrs)
                answer = self._call(hook, attrs, obj, old)
                warnings.extend(str(w) for w in answer.get("warnings") or ())
                if not answer.get("allowed"):
                    raise rejection(hook.name, answer.get("status"))
                if mutating:
                    obj = patched(hook.name, answer, obj)
            except CallFailed as exc:
                if hook.spec.get("failurePolicy") == "Ignore":
                    continue
                raise internal_error(f"failed calling webhook {quote(hook.name)}: {exc}") from None
        return obj

    @staticmethod
    def _check_dry_run(hook: Hook, attrs: AdmissionAttributes) -> None:
        if not attrs.dry_run:
            return
        effects = hook.spec.get("sideEffects")
        if effects is None:
            raise CallFailed("Webhook SideEffects is nil")
        if effects not in ("None", "NoneOnDryRun"):
            raise _status.bad_request(f"admission webhook {quote(hook.name)} does not support dry run")

    def _call(
        self, hook: Hook, attrs: AdmissionAttributes, obj: dict[str, Any] | None, old: dict[str, Any] | None
    ) -> dict[str, Any]:
        """One call; the review's ``response`` (checked as VerifyAdmissionResponse does)."""
        config = hook.spec.get("clientConfig") or {}
        url = str(config.get("url") or "")
        review = review_of(attrs, obj, old)
        timeout = hook.spec.get("timeoutSeconds")
        timeout = timeout if isinstance(timeout, int) and timeout > 0 else 10
        started = time.monotonic()
        answer: dict[str, Any] | None = None
        error: str | None = None
        try:
            if not url:
                raise WebhookCallError(
                    "the fake calls url-configured webhooks only (clientConfig.service is not served)"
                )
            answer = post_review(url, config.get("caBundle"), review, timeout, self._open)
            return verified(hook.mutating, review["request"]["uid"], answer)
        except WebhookCallError as exc:
            error = f"failed to call webhook: {exc}"
            raise CallFailed(error) from None
        except CallFailed as exc:
            error = str(exc)
            raise
        finally:
            response = answer.get("response") if isinstance(answer, dict) else None
            self._record(
                WebhookCall(
                    webhook=hook.name,
                    configuration=hook.configuration,
                    mutating=hook.mutating,
                    url=url,
                    request=review["request"],
                    response=response if isinstance(response, dict) else None,
                    error=error,
                    seconds=time.monotonic() - started,
                )
            )
