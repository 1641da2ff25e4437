"""cloudcoil's ``resources`` names without a server: GVK, ResourceList, parse, parse_file, get_model, Unstructured."""

from __future__ import annotations

import asyncio
import pickle
from pathlib import Path

import pytest

from cloudcoil_cache.apimachinery import ListMeta, ObjectMeta
from cloudcoil_cache.errors import ReadOnlyError
from cloudcoil_cache.models.kubernetes.core.v1 import ConfigMap, Pod, Service
from cloudcoil_cache.resources import (
    GVK,
    Resource,
    ResourceList,
    Unstructured,
    _Scheme,
    get_dynamic_resource,
    get_model,
    parse,
    parse_file,
)

# -- GVK ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("api_version", "group", "version"),
    [
        ("apps/v1", "apps", "v1"),
        ("v1", "", "v1"),
        ("custom.example.com/v1alpha1", "custom.example.com", "v1alpha1"),
    ],
    ids=["group", "core", "dotted group"],
)
def test_gvk_splits_its_api_version(api_version: str, group: str, version: str) -> None:
    gvk = GVK(apiVersion=api_version, kind="K")
    assert (gvk.api_version, gvk.kind, gvk.group, gvk.version) == (api_version, "K", group, version)


def test_gvks_compare_and_hash_by_value_and_are_immutable() -> None:
    a, b = GVK(api_version="apps/v1", kind="Deployment"), GVK(apiVersion="apps/v1", kind="Deployment")
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1 and pickle.loads(pickle.dumps(a)) == a
    assert a != GVK(api_version="apps/v1", kind="StatefulSet")
    with pytest.raises(AttributeError):
        a.kind = "X"  # type: ignore[misc]


def test_a_gvk_without_api_version_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="apiVersion"):
        GVK(apiVersion=None, kind="Deployment")


# -- ResourceList -----------------------------------------------------------------------------------


def pods(n: int) -> list[Pod]:
    return [Pod(metadata=ObjectMeta(name=f"p{i}")) for i in range(n)]


def test_a_resource_list_built_by_hand_knows_its_class_and_counts_the_remaining_items() -> None:
    listed = ResourceList[Pod](
        apiVersion="v1", kind="PodList", items=pods(3), metadata=ListMeta(continue_="token", remaining_item_count=2)
    )
    assert listed.resource_class is Pod and listed.has_next_page()
    assert (len(listed.items), len(listed)) == (3, 5)
    assert ResourceList[Pod] is ResourceList[Pod] and isinstance(listed, ResourceList)


def test_a_resource_list_defaults_its_type_meta_and_decodes_dict_items() -> None:
    listed = ResourceList[Pod](items=[{"metadata": {"name": "a"}}], metadata=None)
    assert (listed.api_version, listed.kind, len(listed)) == ("v1", "PodList", 1)
    assert isinstance(listed.items[0], Pod) and listed.items[0].name == "a"
    assert not listed.has_next_page()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"apiVersion": "wrong/v1", "kind": "PodList"}, "api_version must be v1"),
        ({"apiVersion": "v1", "kind": "WrongList"}, "kind must be PodList"),
    ],
    ids=["api version", "kind"],
)
def test_a_resource_list_of_another_type_is_refused(fields: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ResourceList[Pod](items=[], **fields)


def test_a_last_page_iterates_sync_and_async_and_has_no_next_page() -> None:
    listed = ResourceList[Pod](items=pods(2), metadata=ListMeta(continue_="", remaining_item_count=0))

    async def names() -> list[str | None]:
        return [p.name async for p in listed]

    assert [p.name for p in listed] == asyncio.run(names()) == ["p0", "p1"]
    with pytest.raises(ValueError, match="no next page"):
        listed.get_next_page()


# -- get_model, parse -------------------------------------------------------------------------------


def test_get_model_finds_generated_and_registered_kinds() -> None:
    assert get_model("Pod", api_version="v1") is Pod and get_model("ConfigMap") is ConfigMap

    class Sprocket(Resource):
        api_version: str = "sprockets.example.com/v1"
        kind: str = "Sprocket"

    _Scheme._register(Sprocket)
    _Scheme._register(Sprocket)  # again: no error
    assert get_model("Sprocket") is Sprocket is _Scheme.get("Sprocket", "sprockets.example.com/v1")


def test_get_model_of_an_unknown_kind_is_a_key_error_and_an_ambiguous_one_a_value_error() -> None:
    with pytest.raises(KeyError):
        get_model("NoSuchKind")
    with pytest.raises(KeyError):
        get_model("Pod", api_version="v2")
    with pytest.raises(ValueError, match="ambiguous"):
        get_model("Event")  # core/v1 and events.k8s.io/v1


def test_parse_gives_the_registered_class_of_each_manifest() -> None:
    pod = parse({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
    assert type(pod) is Pod and pod.name == "p"
    both = parse([{"apiVersion": "v1", "kind": "Pod"}, {"apiVersion": "v1", "kind": "Service"}])
    assert [type(r) for r in both] == [Pod, Service]


@pytest.mark.parametrize(
    ("manifest", "error", "message"),
    [
        ({"metadata": {"name": "x"}}, ValueError, "apiVersion: Field required"),
        ({"apiVersion": "v1"}, ValueError, "kind: Field required"),
        ({"apiVersion": "invalid/v1", "kind": "NonExistent"}, KeyError, "NonExistent"),
        (["not", "a", "mapping"], ValueError, "must be a mapping"),
    ],
    ids=["no apiVersion", "no kind", "unknown kind", "not a mapping"],
)
def test_parse_refuses_what_it_cannot_type(manifest: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        parse(manifest if isinstance(manifest, dict) else [manifest])  # type: ignore[arg-type]


# -- parse_file ---------------------------------------------------------------------------------------

TWO_DOCUMENTS = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
---
apiVersion: widgets.example.com/v1
kind: Widget
metadata:
  name: w
spec:
  size: 3
"""


def test_parse_file_reads_every_document_and_unknown_kinds_become_unstructured(tmp_path: Path) -> None:
    path = tmp_path / "all.yaml"
    path.write_text(TWO_DOCUMENTS)
    pod, widget = parse_file(path, load_all=True)
    assert type(pod) is Pod and pod.name == "p"
    assert type(widget) is Unstructured and (widget.api_version, widget.kind) == ("widgets.example.com/v1", "Widget")
    assert widget["spec"] == {"size": 3} and widget.name == "w"


def test_parse_file_reads_json(tmp_path: Path) -> None:
    path = tmp_path / "cm.json"
    path.write_text('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}')
    assert parse_file(path) == ConfigMap(metadata=ObjectMeta(name="c"), data={"a": "b"})


@pytest.mark.parametrize(
    ("text", "load_all", "message"),
    [
        ("", False, "Empty YAML document"),
        ("  \n", True, "Empty YAML document"),
        ("---\n---\n", True, "Empty YAML document"),
        (TWO_DOCUMENTS, False, "Multiple YAML documents found when load_all=False"),
        (
            "apiVersion: v1\nkind: Secret\nstringData:\n  password: hunter2\n  bad:\n    - [\n",
            False,
            r"Failed to parse YAML .*\(line 7, column 1\)",
        ),
        ("metadata:\n  name: x\n", False, "apiVersion: Field required"),
    ],
    ids=["empty", "blank", "only separators", "several without load_all", "invalid", "no apiVersion"],
)
def test_parse_file_refuses_bad_files_with_a_value_error(
    tmp_path: Path, text: str, load_all: bool, message: str
) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as info:
        parse_file(path, load_all=load_all)
    assert "hunter2" not in str(info.value)  # the file's content is never echoed


MARKER = "hunter2SECRET"
SECRET_HEAD = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n"


@pytest.mark.parametrize(
    ("body", "line", "problem"),
    [
        (f"  token: *{MARKER}\n", 6, "found undefined alias"),
        (f"  token: &{MARKER}\n  again: &{MARKER}\n", 7, "found duplicate anchor"),
        (f'  token: "{MARKER}\n', 7, "found unexpected end of stream"),
        (f"  token: '{MARKER}\n", 7, "found unexpected end of stream"),
        (f"  token: {MARKER}\n bad: {MARKER}\n", 7, "expected <block end>"),
        (f"  token: a: {MARKER}\n", 6, "mapping values are not allowed here"),
        (f"  token: !{MARKER} x\n", 6, "could not determine a constructor for the tag"),
        (f'  token: "a\\q{MARKER}"\n', 6, "found unknown escape character"),
        (f"  token: [{MARKER}\n", 7, "expected ',' or ']'"),
    ],
    ids=[
        "alias",
        "duplicate anchor",
        "unterminated double quote",
        "unterminated single quote",
        "bad indentation",
        "mapping in a value",
        "unknown tag",
        "bad escape",
        "unclosed flow",
    ],
)
def test_parse_file_names_line_column_and_problem_never_a_secret(
    tmp_path: Path, body: str, line: int, problem: str
) -> None:
    path = tmp_path / "secret.yaml"
    path.write_text(SECRET_HEAD + body)
    with pytest.raises(ValueError) as info:
        parse_file(path)
    message = str(info.value)
    assert message.startswith(f"Failed to parse YAML in {path}: ") and problem in message
    assert f"(line {line}, column " in message
    assert MARKER not in message and MARKER not in repr(info.value)
    # nothing chained either: PyYAML's error carries the whole document in its marks
    assert info.value.__cause__ is None and info.value.__context__ is None and info.value.__suppress_context__


def test_parse_file_refuses_a_control_character_or_bytes_that_are_not_utf8_without_showing_them(tmp_path: Path) -> None:
    path = tmp_path / "secret.yaml"
    path.write_text(SECRET_HEAD + f"  token: \x07{MARKER}\n")
    with pytest.raises(ValueError, match=r"special characters are not allowed \(at character \d+\)") as info:
        parse_file(path)
    assert MARKER not in str(info.value) and info.value.__context__ is None
    path.write_bytes(SECRET_HEAD.encode() + b"  token: \xff" + MARKER.encode() + b"\n")
    with pytest.raises(ValueError, match="not UTF-8 text") as info:
        parse_file(path)
    assert MARKER not in str(info.value) and info.value.__context__ is None


# -- Unstructured ---------------------------------------------------------------------------------------


def test_unstructured_is_dict_like_and_edits_stick() -> None:
    obj = Unstructured(
        apiVersion="widgets.example.com/v1",
        kind="Widget",
        metadata={"name": "w", "namespace": "ns", "generate_name": "w-"},
        spec={"size": 1},
    )
    assert (obj.name, obj.namespace, obj.metadata.generate_name) == ("w", "ns", "w-")
    assert obj["kind"] == "Widget" and "spec" in obj and "status" not in obj
    assert obj.get("status", {}) == {} and obj.get("spec") == {"size": 1}
    obj["spec"]["size"] = 2
    obj["status"] = {"ready": True}
    assert obj.raw == {
        "apiVersion": "widgets.example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns", "generateName": "w-"},
        "spec": {"size": 2},
        "status": {"ready": True},
    }
    assert obj.model_dump(mode="json", by_alias=True) == obj.to_dict() == obj.raw
    del obj["status"]
    assert "status" not in obj and Unstructured.model_validate(obj.to_dict()) == obj
    with pytest.raises(KeyError):
        obj["status"]


def test_a_sealed_unstructured_refuses_changes_and_copies_are_editable() -> None:
    sealed = Unstructured.from_dict_sealed({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}})
    with pytest.raises(ReadOnlyError):
        sealed["data"] = {}
    with pytest.raises(ReadOnlyError):
        sealed["data"]["a"] = "c"
    copy = sealed.copy()
    copy["data"]["a"] = "c"
    assert copy["data"] == {"a": "c"} and sealed["data"] == {"a": "b"}


def test_a_dynamic_class_is_unstructured_with_its_type_as_constants() -> None:
    DynamicConfigMap = get_dynamic_resource("ConfigMap", "v1")
    cm = DynamicConfigMap(metadata={"name": "c"}, data={"k": "v"})
    assert isinstance(cm, Unstructured) and cm.raw["apiVersion"] == "v1" and cm["kind"] == "ConfigMap"
    assert (DynamicConfigMap.api_version, DynamicConfigMap.kind, DynamicConfigMap.group) == ("v1", "ConfigMap", "")
    with pytest.raises(ValueError, match="kind must be 'ConfigMap'"):
        cm["kind"] = "Secret"
    with pytest.raises(ValueError, match="kind must be a non-empty string"):
        get_dynamic_resource("", "v1")
