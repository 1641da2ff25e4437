"""What decoding kube-apiserver's protobuf pod list would cost in Python, against its JSON list.

Run with a scratch virtualenv that has ``protobuf`` (upb) and ``grpcio-tools`` (protoc), never the
project's (protobuf is not a dependency of the library), against a seeded real server::

    python3 -m venv /tmp/pb && /tmp/pb/bin/pip install protobuf grpcio-tools -e .
    /tmp/pb/bin/python benchmarks/protobuf_cost.py --kubeconfig /tmp/kc [--rounds 3]

It compiles k8s.io/api's and k8s.io/apimachinery's ``generated.proto`` (from the Go module cache,
``--proto-root``, default ``$(go env GOMODCACHE)`` or ``~/go/pkg/mod``; ``go mod download
k8s.io/api@v0.33.13`` fetches them) into message classes in a temporary folder, then, for the
pod list served from the watch cache in one response (``resourceVersion=0``), as JSON and as
``application/vnd.kubernetes.protobuf``, measures (median of ``--rounds``):

- the request: wall seconds to the last byte, bytes, and kube-apiserver's CPU seconds
  (``--apiserver-pid``, from /proc);
- JSON: ``orjson.loads`` of the body;
- protobuf: the envelope (``k8s\\0`` + ``runtime.Unknown``) and ``PodList`` parse (upb), then
  the conversion of every item into the dict shape the models structure from (``to_wire``: RFC 3339
  times, quantities and int-or-strings as JSON has them, ``fieldsV1`` parsed, and what the .proto
  files do not say, read from the Go types' struct tags: embedded structs inlined, zero values of
  ``omitempty`` fields dropped);
- structuring those dicts into sealed ``Pod`` models (``Pod.from_dict_sealed``, what the cache stores),
  the same for both (timed once, from the JSON dicts).

Client steps are timed in CPU seconds of the thread (the machine may be shared). ``--check`` lists
the paths where the first pod's two dicts differ (none expected). Exits 0 with ``SKIPPED: <why>``
when protobuf, protoc or the .proto files are missing.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

K8S_VERSION = "v0.33.13"
PROTOBUF = "application/vnd.kubernetes.protobuf"
PROTOS = (
    "k8s.io/api/core/v1/generated.proto",
    "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto",
    "k8s.io/apimachinery/pkg/api/resource/generated.proto",
    "k8s.io/apimachinery/pkg/runtime/generated.proto",
    "k8s.io/apimachinery/pkg/runtime/schema/generated.proto",
    "k8s.io/apimachinery/pkg/util/intstr/generated.proto",
)
_META = "k8s.io.apimachinery.pkg.apis.meta.v1."


def skip(why: str) -> None:
    print(f"SKIPPED: {why}", flush=True)
    sys.exit(0)


def _module_cache(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    go = shutil.which("go") or "/usr/local/go/bin/go"
    try:
        out = subprocess.run([go, "env", "GOMODCACHE"], capture_output=True, text=True, timeout=60).stdout.strip()
    except OSError:
        out = ""
    return Path(out) if out else Path.home() / "go" / "pkg" / "mod"


def compile_protos(root: Path, version: str, workdir: Path) -> tuple[Any, Any, Any]:
    """protoc the k8s .proto files into ``workdir``: (core/v1, meta/v1, runtime) modules."""
    try:
        from google.protobuf.internal import api_implementation
        from grpc_tools import protoc
    except ImportError as exc:
        skip(f"{exc.name} is not installed (pip install protobuf grpcio-tools, in a scratch virtualenv)")
    include = workdir / "include" / "k8s.io"
    include.mkdir(parents=True)
    for module in ("api", "apimachinery"):
        source = root / "k8s.io" / f"{module}@{version}"
        if not source.is_dir():
            skip(f"{source} is missing (go mod download k8s.io/{module}@{version})")
        (include / module).symlink_to(source)
    out = workdir / "out"
    out.mkdir()
    argv = ["protoc", f"-I{workdir / 'include'}", f"--python_out={out}", *PROTOS]
    if protoc.main(argv) != 0:
        skip("protoc failed on the k8s .proto files")
    sys.path.insert(0, str(out))
    print(f"protobuf {importlib.import_module('google.protobuf').__version__} ({api_implementation.Type()})")
    return (
        importlib.import_module("k8s.io.api.core.v1.generated_pb2"),
        importlib.import_module("k8s.io.apimachinery.pkg.apis.meta.v1.generated_pb2"),
        importlib.import_module("k8s.io.apimachinery.pkg.runtime.generated_pb2"),
    )


# ------------------------------------------------------------------ protobuf → JSON-shaped dicts
def _rfc3339(msg: Any) -> str | None:
    if not msg.seconds and not msg.nanos:
        return None  # Go's zero time.Time marshals to null
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(msg.seconds))


def _rfc3339_micro(msg: Any) -> str:
    head = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(msg.seconds))
    return f"{head}.{msg.nanos // 1000:06d}Z"


def _int_or_string(msg: Any) -> Any:
    return msg.strVal if msg.type == 1 else msg.intVal


def _fields_v1(msg: Any) -> Any:
    import orjson

    return orjson.loads(msg.Raw) if msg.Raw else {}


def _raw_extension(msg: Any) -> Any:
    import orjson

    return orjson.loads(msg.raw) if msg.raw else {}


#: messages whose JSON form is not an object of their fields (Go's custom MarshalJSON)
SPECIAL: dict[str, Callable[[Any], Any]] = {
    _META + "Time": _rfc3339,
    _META + "MicroTime": _rfc3339_micro,
    _META + "FieldsV1": _fields_v1,
    _META + "Duration": lambda m: f"{m.duration / 1e9:g}s",
    "k8s.io.apimachinery.pkg.api.resource.Quantity": lambda m: m.string,
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": _int_or_string,
    "k8s.io.apimachinery.pkg.runtime.RawExtension": _raw_extension,
}

#: (Go struct, protobuf field name) → "inline" (Go embeds it: its fields go into the parent's
#: JSON object) or "omitempty" (JSON drops its zero value; protobuf carries it): read from the Go
#: types' struct tags, which the .proto files do not carry (``load_go_tags``)
GO_TAGS: dict[tuple[str, str], str] = {}
_GO_PACKAGES = {  # protobuf package → folder of its Go types, under the module cache
    "k8s.io.api.core.v1": "k8s.io/api@{v}/core/v1",
    "k8s.io.apimachinery.pkg.apis.meta.v1": "k8s.io/apimachinery@{v}/pkg/apis/meta/v1",
}


def load_go_tags(root: Path, version: str) -> None:
    """Fill ``GO_TAGS`` from the ``json``/``protobuf`` struct tags of the Go types."""
    struct = re.compile(r"^type (\w+) struct \{")
    # a field with a tag: "\tName Type `json:... protobuf:...name=x`" (an embedded struct has no Name)
    tag = re.compile(r'^\s+(?:\w+\s+)?([^\s`]+)\s+`json:"([^"]*)".*protobuf:"[^"]*name=(\w+)')
    for package, folder in _GO_PACKAGES.items():
        for source in sorted((root / folder.format(v=version)).glob("*.go")):
            name = ""
            for line in source.read_text().splitlines():
                found = struct.match(line)
                if found:
                    name = f"{package}.{found.group(1)}"
                    continue
                found = tag.search(line)
                if found and name:
                    go_type, json_tag, proto_name = found.groups()
                    if json_tag.startswith(",inline"):
                        GO_TAGS[(name, proto_name)] = "inline"
                    elif json_tag.endswith(",omitempty") and not go_type.startswith("*"):  # nil only
                        GO_TAGS[(name, proto_name)] = "omitempty"


# how each field converts (worked out once per field descriptor)
_SCALAR, _SCALAR_OMITEMPTY, _SCALARS, _MAP, _MESSAGE_MAP, _MESSAGES, _MESSAGE, _INLINE = range(8)
_PLANS: dict[Any, tuple[int, Callable[[Any], Any] | None]] = {}


def _plan(field: Any) -> tuple[int, Callable[[Any], Any] | None]:
    repeated = field.is_repeated if hasattr(field, "is_repeated") else field.label == field.LABEL_REPEATED
    go_tag = GO_TAGS.get((field.containing_type.full_name, field.name))
    if field.type != field.TYPE_MESSAGE:
        if repeated:
            return _SCALARS, None
        return (_SCALAR_OMITEMPTY if go_tag == "omitempty" else _SCALAR), None
    message = field.message_type
    if message.GetOptions().map_entry:
        value = message.fields_by_name["value"]
        if value.type != value.TYPE_MESSAGE:
            return _MAP, None
        return _MESSAGE_MAP, SPECIAL.get(value.message_type.full_name, to_wire)
    convert = SPECIAL.get(message.full_name, to_wire)
    if repeated:
        return _MESSAGES, convert
    return (_INLINE if go_tag == "inline" else _MESSAGE), convert


def to_wire(msg: Any) -> dict[str, Any]:
    """A message as the dict its JSON form would parse to (the fields protobuf carries)."""
    out: dict[str, Any] = {}
    for field, value in msg.ListFields():
        plan = _PLANS.get(field)
        if plan is None:
            plan = _PLANS[field] = _plan(field)
        kind, convert = plan
        if kind == _SCALAR:
            out[field.name] = value
        elif kind == _SCALAR_OMITEMPTY:
            if value:
                out[field.name] = value
        elif kind == _INLINE:
            out.update(convert(value))  # type: ignore[misc]
        elif kind == _MESSAGE:
            out[field.name] = convert(value)  # type: ignore[misc]
        elif kind == _MESSAGES:
            out[field.name] = [convert(v) for v in value]  # type: ignore[misc]
        elif kind == _SCALARS:
            out[field.name] = list(value)
        elif kind == _MAP:
            out[field.name] = dict(value)
        else:
            out[field.name] = {k: convert(v) for k, v in value.items()}  # type: ignore[misc]
    return out


def _differences(a: Any, b: Any, path: str = "") -> list[str]:
    """The paths where two JSON-shaped values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        diffs: list[str] = []
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                diffs.append(
                    f"{path}.{key} ({'protobuf' if key in a else 'JSON'} only: {a.get(key, b.get(key))!r:.40})"
                )
            else:
                diffs.extend(_differences(a[key], b[key], f"{path}.{key}"))
        return diffs
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path} ({a!r:.30} vs {b!r:.30})"]


# ------------------------------------------------------------------------------------- measure
def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """The CPU seconds of this thread ``fn`` took (not wall time: the machine may be shared), and its
    value; with the collector off (as the floor, and as the library decodes a page)."""
    gc.disable()
    try:
        started = time.thread_time()
        value = fn()
        return time.thread_time() - started, value
    finally:
        gc.enable()


def _cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of process ``pid`` (0.0 without one)."""
    if not pid:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fetch(session: Any, accept: str, pid: int | None) -> tuple[float, float, bytes]:
    """The list as ``accept``: (wall seconds to the last byte, the API server's CPU seconds, body)."""
    http = session.get()
    cpu = _cpu_seconds(pid)
    started = time.perf_counter()
    response = http.get(
        f"{session.url}/api/v1/pods", params={"resourceVersion": "0"}, headers={"Accept": accept}, timeout=600
    )
    response.raise_for_status()
    body = response.content
    return time.perf_counter() - started, _cpu_seconds(pid) - cpu, body


def one_round(
    session: Any, modules: tuple[Any, Any], structure: Callable[[Any], Any], pid: int | None, check: bool
) -> tuple[dict[str, float], dict[str, int]]:
    """One round of every step: (step → seconds, sizes: JSON and protobuf bytes and items)."""
    import orjson

    core, runtime = modules
    seconds: dict[str, float] = {}
    wall, server, body = fetch(session, "application/json", pid)
    seconds["JSON: request, wall seconds to the last byte"] = wall
    seconds["JSON: request, kube-apiserver CPU"] = server
    sizes = {"json": len(body)}
    seconds["JSON: orjson.loads"], parsed = _timed(lambda: orjson.loads(body))
    json_items = parsed["items"]
    wall, server, pb_body = fetch(session, PROTOBUF, pid)
    seconds["protobuf: request, wall seconds to the last byte"] = wall
    seconds["protobuf: request, kube-apiserver CPU"] = server
    sizes["protobuf"] = len(pb_body)
    if not pb_body.startswith(b"k8s\x00"):
        skip(f"the server did not answer protobuf (got {pb_body[:16]!r})")

    def parse() -> Any:
        unknown = runtime.Unknown.FromString(pb_body[4:])
        return core.PodList.FromString(unknown.raw)

    seconds["protobuf: envelope + PodList parse (upb)"], pod_list = _timed(parse)
    seconds["protobuf: items → JSON-shaped dicts (to_wire)"], pb_items = _timed(
        lambda: [to_wire(pod) for pod in pod_list.items]
    )
    seconds["either: dicts → sealed Pod models"], _models = _timed(lambda: [structure(item) for item in json_items])
    sizes["items"] = len(pb_items)
    if check:
        diffs = _differences(pb_items[0], json_items[0])
        print(f"first pod: {len(diffs)} paths differ" + (", e.g. " + "; ".join(diffs[:8]) if diffs else ""))
    return seconds, sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--proto-root", help="the Go module cache holding k8s.io/api@VERSION")
    parser.add_argument("--k8s-version", default=K8S_VERSION)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--apiserver-pid", type=int, help="kube-apiserver's pid, for its CPU seconds")
    parser.add_argument("--check", action="store_true", help="list where the first pod's dicts differ")
    args = parser.parse_args()
    try:
        import orjson  # noqa: F401
        from real_server import Session

        from cloudcoil_cache.models.kubernetes.core.v1 import Pod
    except ImportError as exc:
        skip(f"{exc.name} is not installed (pip install -e . in the scratch virtualenv too)")
    workdir = Path(tempfile.mkdtemp(prefix="k8s-protos-"))
    try:
        root = _module_cache(args.proto_root)
        core, _meta, runtime = compile_protos(root, args.k8s_version, workdir)
        load_go_tags(root, args.k8s_version)
        session = Session(args.kubeconfig)
        rows: dict[str, list[float]] = {}
        sizes: dict[str, int] = {}
        for _ in range(args.rounds):
            seconds, sizes = one_round(session, (core, runtime), Pod.from_dict_sealed, args.apiserver_pid, args.check)
            for name, value in seconds.items():
                rows.setdefault(name, []).append(value)
        items = sizes["items"]
        print(
            f"{items} pods from {session.url}, resourceVersion=0 (the watch cache, one response), "
            f"{args.rounds} rounds (median), load {os.getloadavg()[0]:.1f}; "
            f"JSON {sizes['json'] / 1e6:.1f} MB, protobuf {sizes['protobuf'] / 1e6:.1f} MB"
        )
        print("| step | seconds (median; client steps: CPU seconds of the thread) | per pod |")
        print("|---|---|---|")
        for name, values in rows.items():
            median = statistics.median(values)
            print(f"| {name} | {median:.3f} | {median / max(items, 1) * 1e6:.0f} µs |")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
