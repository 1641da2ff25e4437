"""Mutators answer a JSON Patch of what they changed, applied to the raw object (unknown fields and nulls kept)."""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator

import pytest
from _admission_support import apply_patch, call, configmap, exchange, patch_of, response, review

from cloudcoil_cache.admission import AdmissionRequest, AdmissionWebhook
from cloudcoil_cache.admission._patch import escape, mutation_patch
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap

Edit = Callable[[ConfigMap], Any]


@pytest.fixture
def mutate() -> Iterator[Callable[[Edit, dict[str, Any]], Any]]:
    """``mutate(edit, raw)``: the answer of a mutator that applies ``edit`` to the request's object."""
    hook = AdmissionWebhook()
    edits: list[Edit] = []

    @hook.mutating(ConfigMap, path="/mutate", operations=("CREATE", "UPDATE", "DELETE"))
    def mutator(request: AdmissionRequest[ConfigMap]) -> ConfigMap | None:
        obj = request.resource
        assert obj is not None
        result = edits[-1](obj)
        return obj if result is None else result

    def run(edit: Edit, raw: dict[str, Any]) -> Any:
        edits.append(edit)
        return call(hook, exchange("/mutate", review(raw)))

    with hook:
        yield run


def _labels(cm: ConfigMap) -> None:
    cm.metadata.labels = {**(cm.metadata.labels or {}), "example.com/mutated": "true"}


def test_add_keeps_unknown_fields_and_nulls(mutate: Callable[[Edit, dict[str, Any]], Any]) -> None:
    raw = configmap(data={"a": "1", "gone": None}, futureField={"x": [1, None]}, binaryData=None)
    answer = mutate(_labels, raw)
    ops = patch_of(answer)
    assert ops == [{"op": "add", "path": "/metadata/labels", "value": {"example.com/mutated": "true"}}]
    patched = apply_patch(raw, ops)
    assert patched["futureField"] == {"x": [1, None]} and patched["binaryData"] is None
    assert patched["data"] == {"a": "1", "gone": None}


def test_replace_and_remove(mutate: Callable[[Edit, dict[str, Any]], Any]) -> None:
    raw = configmap(data={"keep": "1", "change": "old", "drop": "x"})

    def edit(cm: ConfigMap) -> None:
        assert cm.data is not None
        cm.data["change"] = "new"
        del cm.data["drop"]

    ops = patch_of(mutate(edit, raw))
    assert ops is not None
    assert sorted(ops, key=lambda o: o["path"]) == [
        {"op": "replace", "path": "/data/change", "value": "new"},
        {"op": "remove", "path": "/data/drop"},
    ]
    assert apply_patch(raw, ops)["data"] == {"keep": "1", "change": "new"}


def test_keys_with_slash_and_tilde_are_escaped(mutate: Callable[[Edit, dict[str, Any]], Any]) -> None:
    raw = configmap(metadata={"name": "web", "namespace": "default", "annotations": {"a/b~c": "1"}})

    def edit(cm: ConfigMap) -> None:
        assert cm.metadata.annotations is not None
        cm.metadata.annotations["a/b~c"] = "2"

    ops = patch_of(mutate(edit, raw))
    assert ops == [{"op": "replace", "path": "/metadata/annotations/a~1b~0c", "value": "2"}]
    assert apply_patch(raw, ops)["metadata"]["annotations"] == {"a/b~c": "2"}
    assert escape("~/") == "~0~1"


def test_unchanged_object_gives_no_patch_so_reinvocation_is_a_no_op(
    mutate: Callable[[Edit, dict[str, Any]], Any],
) -> None:
    first = mutate(_labels, configmap())
    ops = patch_of(first)
    assert ops
    again = apply_patch(configmap(), ops)
    resp = response(mutate(_labels, again))  # already defaulted: nothing to change
    assert resp == {"uid": "req-1", "allowed": True}
    assert response(mutate(lambda cm: None, configmap())) == {"uid": "req-1", "allowed": True}


@pytest.mark.parametrize(
    "field",
    ["name", "namespace", "uid", "resourceVersion"],
)
def test_identity_change_is_500(mutate: Callable[[Edit, dict[str, Any]], Any], field: str) -> None:
    def edit(cm: ConfigMap) -> None:
        setattr(cm.metadata, {"resourceVersion": "resource_version"}.get(field, field), "changed")

    answer = mutate(edit, configmap())
    assert answer.status == 500
    assert json.loads(answer.body) == {"message": "Admission webhook failed: IdentityChanged"}


def test_a_mutator_returning_another_type_is_500(mutate: Callable[[Edit, dict[str, Any]], Any]) -> None:
    assert mutate(lambda cm: {"not": "a model"}, configmap()).status == 500


def test_lists_element_wise_when_lengths_match_else_whole() -> None:
    before = {"spec": {"items": [{"a": 1, "b": 2}, {"a": 3}], "tags": ["x", "y"]}}
    same_length = {"spec": {"items": [{"a": 1, "b": 5}, {"a": 3}], "tags": ["x", "z"]}}
    assert mutation_patch(before, same_length) == [
        {"op": "replace", "path": "/spec/items/0/b", "value": 5},
        {"op": "replace", "path": "/spec/tags/1", "value": "z"},
    ]
    longer = {"spec": {"items": [{"a": 1, "b": 2}, {"a": 3}], "tags": ["x", "y", "w"]}}
    assert mutation_patch(before, longer) == [{"op": "replace", "path": "/spec/tags", "value": ["x", "y", "w"]}]
    assert mutation_patch({"v": 1}, {"v": True}) == [{"op": "replace", "path": "/v", "value": True}]


def test_status_mutator_may_change_only_status() -> None:
    before = {"spec": {"a": 1}, "status": {"phase": "A"}}
    assert mutation_patch(before, {"spec": {"a": 1}, "status": {"phase": "B"}}, subresource="status") == [
        {"op": "replace", "path": "/status/phase", "value": "B"}
    ]
    with pytest.raises(ValueError, match="only /status"):
        mutation_patch(before, {"spec": {"a": 2}, "status": {"phase": "A"}}, subresource="status")


def test_dry_run_is_passed_through() -> None:
    hook = AdmissionWebhook()
    seen: list[bool] = []

    @hook.mutating(ConfigMap, path="/m")
    def mutator(request: AdmissionRequest[ConfigMap]) -> None:
        seen.append(request.dry_run)

    with hook:
        assert response(call(hook, exchange("/m", review(configmap(), dryRun=True))))["allowed"] is True
    assert seen == [True]


def test_a_class_form_mutator_may_return_the_request_resource() -> None:
    # cloudcoil 0.8's form: the handler a classmethod of a subclass of the kind. The request's
    # object is of the kind (a subclass adding methods decodes to the kind it subclasses); returning
    # it, edited, is the documented answer
    from cloudcoil_cache.admission import mutating

    class DefaultedConfigMap(ConfigMap):
        @mutating(path="/mutate/cm")
        @classmethod
        def default(cls, request: AdmissionRequest[ConfigMap]) -> ConfigMap | None:
            cm = request.resource
            assert cm is not None
            cm.data = {**(cm.data or {}), "defaulted": "yes"}
            return cm

    hook = AdmissionWebhook().register(DefaultedConfigMap)
    with hook:
        answer = call(hook, exchange("/mutate/cm", review(configmap(data={"a": "1"}))))
    assert patch_of(answer) == [{"op": "add", "path": "/data/defaulted", "value": "yes"}]
