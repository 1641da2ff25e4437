"""Builders for kubeconfig files and a real exec credential plugin script, for config tests."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import yaml

SECRET_TOKEN = "tok-SECRET-4b1d"

# The plugin counts its runs in <state>/count, saves each KUBERNETES_EXEC_INFO, and prints an
# ExecCredential chosen by PLUGIN_MODE: token (exec-token-<run>), cert, fail, garbage, wrong-api.
PLUGIN = r"""
import json, os, sys, pathlib
state = pathlib.Path(sys.argv[1])
count = state / "count"
n = int(count.read_text()) + 1 if count.exists() else 1
count.write_text(str(n))
info = os.environ["KUBERNETES_EXEC_INFO"]
(state / f"exec-info-{n}.json").write_text(info)
(state / "seen-env.json").write_text(json.dumps({"PLUGIN_SECRET": os.environ.get("PLUGIN_SECRET")}))
mode = os.environ.get("PLUGIN_MODE", "token")
api = json.loads(info)["apiVersion"]
if mode == "fail":
    sys.stderr.write("plugin failed: " + os.environ.get("PLUGIN_SECRET", "") + "\n")
    sys.exit(3)
if mode == "garbage":
    print("this is not json " + os.environ.get("PLUGIN_SECRET", ""))
    sys.exit(0)
if mode == "cert":
    status = {"clientCertificateData": (state / "client.crt").read_text(),
              "clientKeyData": (state / "client.key").read_text()}
else:
    status = {"token": f"exec-token-{n}"}
if os.environ.get("PLUGIN_EXPIRY"):
    status["expirationTimestamp"] = os.environ["PLUGIN_EXPIRY"]
if mode == "wrong-api":
    api = "client.authentication.k8s.io/v1alpha1"
print(json.dumps({"apiVersion": api, "kind": "ExecCredential", "status": status}))
"""


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def write_kubeconfig(
    path: Path,
    *,
    clusters: dict[str, dict] | None = None,
    contexts: dict[str, dict] | None = None,
    users: dict[str, dict] | None = None,
    current: str | None = None,
    raw: dict | None = None,
) -> Path:
    """Write a kubeconfig; each dict maps a name to the inner cluster/context/user mapping."""
    doc: dict[str, Any] = (
        raw
        if raw is not None
        else {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": n, "cluster": c} for n, c in (clusters or {}).items()],
            "contexts": [{"name": n, "context": c} for n, c in (contexts or {}).items()],
            "users": [{"name": n, "user": u} for n, u in (users or {}).items()],
        }
    )
    if current is not None:
        doc["current-context"] = current
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return path


def simple_kubeconfig(
    path: Path,
    user: dict,
    *,
    server: str = "https://k8s.example.test:6443",
    cluster: dict | None = None,
    namespace: str | None = None,
) -> Path:
    """One cluster 'c', one user 'u', one context 'ctx' (current)."""
    ctx: dict[str, Any] = {"cluster": "c", "user": "u"}
    if namespace:
        ctx["namespace"] = namespace
    return write_kubeconfig(
        path,
        clusters={"c": {"server": server, **(cluster or {})}},
        contexts={"ctx": ctx},
        users={"u": user},
        current="ctx",
    )


def exec_user(
    state: Path,
    *,
    api_version: str = "client.authentication.k8s.io/v1",
    mode: str = "token",
    expiry: str | None = None,
    extra: dict | None = None,
) -> dict:
    """A kubeconfig user whose exec plugin is PLUGIN, run with this interpreter."""
    state.mkdir(parents=True, exist_ok=True)
    script = state / "plugin.py"
    script.write_text(PLUGIN)
    env = [{"name": "PLUGIN_MODE", "value": mode}, {"name": "PLUGIN_SECRET", "value": "env-SECRET-77"}]
    if expiry:
        env.append({"name": "PLUGIN_EXPIRY", "value": expiry})
    spec: dict[str, Any] = {
        "apiVersion": api_version,
        "command": sys.executable,
        "args": [str(script), str(state)],
        "env": env,
        "interactiveMode": "Never",
    }
    spec.update(extra or {})
    return {"exec": spec}


def runs(state: Path) -> int:
    count = state / "count"
    return int(count.read_text()) if count.exists() else 0


def exec_info(state: Path, run: int) -> dict:
    return json.loads((state / f"exec-info-{run}.json").read_text())
