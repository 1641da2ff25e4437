"""The generated modules: identical to a fresh generation, importable, with correct API metadata."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from cloudcoil_cache import models, resources
from cloudcoil_cache.models.kubernetes._index import MODULES

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "data" / "k8s-swagger-v1.30.2.json"
MODELS_DIR = ROOT / "cloudcoil_cache" / "models"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_models", ROOT / "tools" / "generate_models.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("generate_models", module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not SPEC.exists(), reason=f"the OpenAPI spec is not at {SPEC}")
def test_committed_models_are_exactly_what_the_generator_writes(tmp_path: Path) -> None:
    written = _generator().generate(SPEC, tmp_path)
    assert len(written) > 40
    fresh = {p.relative_to(tmp_path).as_posix(): p.read_text() for p in written}
    committed = {rel: (MODELS_DIR / rel).read_text() if (MODELS_DIR / rel).exists() else None for rel in fresh}
    differing = sorted(rel for rel in fresh if committed[rel] != fresh[rel])
    assert not differing, f"regenerate with tools/generate_models.py: {differing}"
    stale = sorted(
        p.relative_to(MODELS_DIR).as_posix()
        for p in (MODELS_DIR / "kubernetes").rglob("*.py")
        if p.relative_to(MODELS_DIR).as_posix() not in fresh
    )
    assert not stale, f"generated files no longer produced by the generator: {stale}"


SNAKE = [
    ("podCIDRs", "pod_cidrs"),
    ("clusterIPs", "cluster_ips"),
    ("hostIPC", "host_ipc"),
    ("fieldsV1", "fields_v1"),
    ("$ref", "ref"),
    ("x-kubernetes-list-type", "x_kubernetes_list_type"),
    ("targetCPUUtilizationPercentage", "target_cpu_utilization_percentage"),
    ("Port", "port"),
    ("volumeID", "volume_id"),
]


@pytest.mark.parametrize(("wire", "snake"), SNAKE, ids=[w for w, _ in SNAKE])
def test_the_generator_turns_wire_names_into_snake_case(wire: str, snake: str) -> None:
    assert _generator().to_snake(wire) == snake


GROUP_MODULES = sorted(set(MODULES.values()) | {"cloudcoil_cache.models.apimachinery"})


@pytest.mark.parametrize("module_name", GROUP_MODULES, ids=[m.rsplit("models.", 1)[-1] for m in GROUP_MODULES])
def test_every_generated_module_imports_and_every_class_converts(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert module.__doc__ and module.__all__ == sorted(module.__all__)
    for name in module.__all__:
        cls = getattr(module, name)
        assert issubclass(cls, models.Model)
        assert cls.__doc__ and "\n" not in cls.__doc__.strip()
        empty = cls.from_dict_sealed({})
        expected = {"apiVersion": cls.api_version, "kind": cls.kind} if issubclass(cls, models.Resource) else {}
        assert empty.to_dict() == expected


EXPECTED_GROUPS = [
    "admissionregistration",
    "apiextensions",
    "apiregistration",
    "apps",
    "authentication",
    "authorization",
    "autoscaling",
    "batch",
    "certificates",
    "coordination",
    "core",
    "discovery",
    "events",
    "flowcontrol",
    "networking",
    "node",
    "policy",
    "rbac",
    "scheduling",
    "storage",
]


def test_every_built_in_group_has_a_package() -> None:
    from cloudcoil_cache.models import kubernetes

    assert kubernetes.__all__ == EXPECTED_GROUPS
    assert kubernetes.flowcontrol.__all__ == ["v1", "v1beta3"]
    assert kubernetes.autoscaling.__all__ == ["v1", "v2"]
    assert models.kubernetes.core.v1.Pod.kind == "Pod"


KINDS = [
    # module, class, api_version, plural, namespaced
    ("core.v1", "Pod", "v1", "pods", True),
    ("core.v1", "Node", "v1", "nodes", False),
    ("core.v1", "Namespace", "v1", "namespaces", False),
    ("core.v1", "Endpoints", "v1", "endpoints", True),
    ("core.v1", "Binding", "v1", "bindings", True),
    ("apps.v1", "Deployment", "apps/v1", "deployments", True),
    ("batch.v1", "CronJob", "batch/v1", "cronjobs", True),
    ("coordination.v1", "Lease", "coordination.k8s.io/v1", "leases", True),
    ("networking.v1", "IngressClass", "networking.k8s.io/v1", "ingressclasses", False),
    ("networking.v1", "NetworkPolicy", "networking.k8s.io/v1", "networkpolicies", True),
    ("rbac.v1", "ClusterRoleBinding", "rbac.authorization.k8s.io/v1", "clusterrolebindings", False),
    ("storage.v1", "StorageClass", "storage.k8s.io/v1", "storageclasses", False),
    ("policy.v1", "PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", True),
    (
        "autoscaling.v2",
        "HorizontalPodAutoscaler",
        "autoscaling/v2",
        "horizontalpodautoscalers",
        True,
    ),
    ("discovery.v1", "EndpointSlice", "discovery.k8s.io/v1", "endpointslices", True),
    ("events.v1", "Event", "events.k8s.io/v1", "events", True),
    (
        "flowcontrol.v1beta3",
        "FlowSchema",
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "flowschemas",
        False,
    ),
    (
        "apiextensions.v1",
        "CustomResourceDefinition",
        "apiextensions.k8s.io/v1",
        "customresourcedefinitions",
        False,
    ),
    ("apiregistration.v1", "APIService", "apiregistration.k8s.io/v1", "apiservices", False),
    ("authentication.v1", "TokenReview", "authentication.k8s.io/v1", "tokenreviews", False),
    (
        "authorization.v1",
        "LocalSubjectAccessReview",
        "authorization.k8s.io/v1",
        "localsubjectaccessreviews",
        True,
    ),
    ("autoscaling.v1", "Scale", "autoscaling/v1", None, False),
]


@pytest.mark.parametrize(
    ("module", "name", "api_version", "plural", "namespaced"),
    KINDS,
    ids=[f"{m}.{n}" for m, n, *_ in KINDS],
)
def test_resource_kinds_carry_api_metadata_from_the_spec_paths(module, name, api_version, plural, namespaced) -> None:
    cls = getattr(importlib.import_module(f"cloudcoil_cache.models.kubernetes.{module}"), name)
    group, _, version = api_version.rpartition("/")
    assert (cls.api_version, cls.kind, cls.plural, cls.namespaced, cls.group, cls.version) == (
        api_version,
        name,
        plural,
        namespaced,
        group,
        version,
    )
    assert issubclass(cls, models.Resource)
    assert resources.resource_class_for(api_version, name) is cls


def test_list_kinds_and_status_are_plain_models() -> None:
    from cloudcoil_cache.apimachinery import Status
    from cloudcoil_cache.models.kubernetes.core.v1 import PodList

    for cls in (PodList, Status):
        assert not issubclass(cls, models.Resource)
    status = Status.from_dict({"kind": "Status", "apiVersion": "v1", "code": 410, "reason": "Expired"})
    assert (status.kind, status.api_version, status.code) == ("Status", "v1", 410)


def test_unknown_kinds_have_no_class() -> None:
    assert resources.resource_class_for("v1", "NoSuchKind") is None
    assert resources.resource_class_for("nope.example.com/v1", "Pod") is None
