"""The one converter: cattrs entry points, hook overrides reach nested models, thread safety."""

from __future__ import annotations

import threading

from _model_corpus import load

from cloudcoil_cache import apimachinery, models, resources
from cloudcoil_cache.apimachinery import ObjectMeta
from cloudcoil_cache.models import apimachinery as generated_apimachinery
from cloudcoil_cache.models.kubernetes.core.v1 import Pod


def test_the_module_converter_is_a_cattrs_converter_for_every_model() -> None:
    wire = load("pod")
    pod = models.converter.structure(wire, Pod)
    assert isinstance(pod, Pod) and not models.is_sealed(pod)
    assert models.converter.unstructure(pod) == wire
    sealed = models.converter.structure(wire, Pod.__sealed_class__)
    assert models.is_sealed(sealed)
    assert models.converter.structure([wire, wire], list[Pod])[1] == pod


def test_a_hook_registered_on_a_converter_is_used_for_nested_models() -> None:
    conv = models.make_converter()
    conv.register_structure_hook(ObjectMeta, lambda d, _t: ObjectMeta(name=d["name"].upper()))
    pod = conv.structure({"metadata": {"name": "web"}}, Pod)
    assert pod.metadata.name == "WEB"
    assert Pod.from_dict({"metadata": {"name": "web"}}).metadata.name == "web"  # the global one


def test_the_public_apimachinery_module_exports_every_generated_type() -> None:
    assert set(generated_apimachinery.__all__) <= set(apimachinery.__all__)
    assert {"Time", "MicroTime"} <= set(apimachinery.__all__)
    for name in apimachinery.__all__:
        assert getattr(apimachinery, name) is not None


def test_threads_decoding_a_kind_for_the_first_time_all_get_correct_objects() -> None:
    conv = models.make_converter()  # fresh: nothing generated yet
    wire = load("node")
    cls = resources.resource_class_for("v1", "Node")
    results: list[object] = []
    start = threading.Barrier(4)

    def decode() -> None:
        start.wait(timeout=10)
        results.append(conv.unstructure(conv.structure(wire, cls)))

    threads = [threading.Thread(target=decode, name=f"decode-{i}") for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert results == [wire] * 4
