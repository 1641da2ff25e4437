"""Credentials: static token, rotating token file, exec plugins (v1/v1beta1), kubeconfig reload."""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

import pytest
from _kubeconfigs import SECRET_TOKEN, exec_info, exec_user, runs, simple_kubeconfig

from cloudcoil_cache import errors
from cloudcoil_cache.client._auth import ExecConfig, ExecCredentials, StaticToken, TokenFile
from cloudcoil_cache.client._kubeconfig import load_connection
from cloudcoil_cache.testing import FakeClock

V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"


def iso(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_static_token_has_nothing_to_refresh_and_hides_itself():
    creds = StaticToken(SECRET_TOKEN)
    assert creds.auth_header() == f"Bearer {SECRET_TOKEN}"
    assert creds.refresh() is False
    assert SECRET_TOKEN not in repr(creds)


def test_a_token_file_is_re_read_after_its_interval_and_at_once_on_refresh(tmp_path):
    path = tmp_path / "token"
    path.write_text("one\n")
    clock = FakeClock(1_000_000.0)
    creds = TokenFile(path, reread_interval=60, clock=clock.now)
    path.write_text("two")
    clock.advance(59)
    assert creds.auth_header() == "Bearer one"  # not due yet
    clock.advance(1)
    assert creds.auth_header() == "Bearer two"
    path.write_text("three")
    assert creds.refresh() is True and creds.auth_header() == "Bearer three"


def test_a_token_file_that_disappears_keeps_the_last_token(tmp_path, caplog):
    path = tmp_path / "token"
    path.write_text(SECRET_TOKEN)
    creds = TokenFile(path, reread_interval=1, clock=FakeClock(1_000_000.0).now)
    path.unlink()
    assert creds.refresh() is False
    assert creds.auth_header() == f"Bearer {SECRET_TOKEN}"
    assert "cannot read token file" in caplog.text and SECRET_TOKEN not in caplog.text


def test_a_missing_token_file_is_a_config_error_at_once(tmp_path):
    with pytest.raises(errors.ConfigError, match=f"token file {tmp_path}/absent: cannot be read"):
        TokenFile(tmp_path / "absent")


def exec_creds(tmp_path: Path, **kwargs) -> tuple[ExecCredentials, Path]:
    state = tmp_path / "plugin"
    path = simple_kubeconfig(tmp_path / "config", exec_user(state, **kwargs))
    conn = load_connection(kubeconfig=path)
    return conn.credentials.current, state


@pytest.mark.parametrize("api_version", [V1, V1BETA1], ids=["v1", "v1beta1"])
def test_an_exec_plugin_token_is_used_and_gets_exec_info_and_env(tmp_path, api_version):
    creds, state = exec_creds(tmp_path, api_version=api_version)
    assert isinstance(creds, ExecCredentials)
    assert creds.auth_header() == "Bearer exec-token-1"
    info = exec_info(state, 1)
    assert info == {"apiVersion": api_version, "kind": "ExecCredential", "spec": {"interactive": False}}
    assert (state / "seen-env.json").read_text() == '{"PLUGIN_SECRET": "env-SECRET-77"}'


def test_provide_cluster_info_passes_the_cluster_to_the_plugin(tmp_path):
    creds, state = exec_creds(tmp_path, extra={"provideClusterInfo": True})
    creds.auth_header()
    assert exec_info(state, 1)["spec"]["cluster"] == {"server": "https://k8s.example.test:6443"}


def test_an_exec_token_is_cached_until_its_expiry_then_fetched_again(tmp_path):
    clock = FakeClock(1_000_000.0)
    state = tmp_path / "plugin"
    conn = load_connection(
        kubeconfig=simple_kubeconfig(tmp_path / "config", exec_user(state, expiry=iso(clock.now() + 3600)))
    )
    creds = ExecCredentials(conn.credentials.current.config, clock=clock.now)
    assert [creds.auth_header() for _ in range(3)] == ["Bearer exec-token-1"] * 3
    assert runs(state) == 1
    clock.advance(3599)
    assert creds.auth_header() == "Bearer exec-token-1" and runs(state) == 1
    clock.advance(1)
    assert creds.auth_header() == "Bearer exec-token-2" and runs(state) == 2


def test_an_exec_token_without_expiry_is_cached_until_a_refresh(tmp_path):
    creds, state = exec_creds(tmp_path)
    assert [creds.auth_header() for _ in range(3)] == ["Bearer exec-token-1"] * 3
    assert creds.refresh() is True
    assert creds.auth_header() == "Bearer exec-token-2" and runs(state) == 2


def test_an_exec_plugin_can_supply_a_client_certificate(tmp_path):
    state = tmp_path / "plugin"
    state.mkdir()
    (state / "client.crt").write_text("CERT PEM")
    (state / "client.key").write_text("KEY PEM")
    creds, _ = exec_creds(tmp_path, mode="cert")
    assert creds.client_certificate() == (b"CERT PEM", b"KEY PEM")
    assert creds.auth_header() is None


PLUGIN_FAILURES = [
    ({"mode": "fail"}, "failed with exit status 3"),
    ({"mode": "garbage"}, "printed something that is not JSON"),
    ({"mode": "wrong-api"}, "printed an ExecCredential of another apiVersion (expected"),
    ({"expiry": "tomorrow-SECRET-77"}, "a status.expirationTimestamp that is not an RFC 3339 time"),
    ({"extra": {"interactiveMode": "Always"}}, "needs an interactive terminal"),
    (
        {"extra": {"command": "/nonexistent/kubelogin", "installHint": "install kubelogin"}},
        "'/nonexistent/kubelogin' was not found (install kubelogin)",
    ),
]


@pytest.mark.parametrize(
    "kwargs,words",
    PLUGIN_FAILURES,
    ids=["exit-status", "not-json", "wrong-api", "bad-expiry", "needs-tty", "not-found"],
)
def test_a_failing_exec_plugin_raises_config_error_naming_the_command_not_its_secrets(tmp_path, kwargs, words):
    loaded, _ = exec_creds(tmp_path, **kwargs)
    creds = ExecCredentials(loaded.config, stdin_is_tty=False)  # also under `pytest -s` in a terminal
    with pytest.raises(errors.ConfigError) as info:
        creds.auth_header()
    text = str(info.value)
    assert words in text
    assert text.startswith(f"kubeconfig {tmp_path / 'config'}: users[0].user.exec: exec plugin")
    assert "env-SECRET-77" not in text and "env-SECRET-77" not in repr(creds)
    assert "SECRET" not in text and "v1alpha1" not in text  # nothing the plugin printed is echoed


def test_a_relative_exec_command_with_a_slash_resolves_against_the_kubeconfig_directory(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "plugin").symlink_to(sys.executable)
    creds, state = exec_creds(tmp_path, extra={"command": "bin/plugin"})
    assert creds.config.command == str(bin_dir / "plugin")
    assert creds.auth_header() == "Bearer exec-token-1"


def test_exec_config_repr_hides_env_values():
    cfg = ExecConfig(command="c", api_version=V1, env=(("AWS_SECRET", "very-SECRET"),))
    assert "very-SECRET" not in repr(cfg) and "AWS_SECRET=***" in repr(cfg)


def test_a_kubeconfig_token_changed_on_disk_is_picked_up_on_refresh(tmp_path):
    path = simple_kubeconfig(tmp_path / "config", {"token": "first"})
    creds = load_connection(kubeconfig=path).credentials
    assert creds.refresh() is False  # unchanged static token: retrying would not help
    simple_kubeconfig(path, {"token": "second"})
    assert creds.auth_header() == "Bearer first"  # no reload without a 401
    assert creds.refresh() is True and creds.auth_header() == "Bearer second"


def test_a_kubeconfig_user_switched_to_an_exec_plugin_is_picked_up_on_refresh(tmp_path):
    path = simple_kubeconfig(tmp_path / "config", {"token": "first"})
    creds = load_connection(kubeconfig=path).credentials
    state = tmp_path / "plugin"
    simple_kubeconfig(path, exec_user(state))
    assert creds.refresh() is True and creds.auth_header() == "Bearer exec-token-1"


def test_a_broken_kubeconfig_on_refresh_keeps_the_current_credentials(tmp_path, caplog):
    token_file = tmp_path / "token"
    token_file.write_text("from-file")
    path = simple_kubeconfig(tmp_path / "config", {"tokenFile": str(token_file)})
    creds = load_connection(kubeconfig=path).credentials
    path.write_text("clusters: [unclosed")
    token_file.write_text("rotated")
    assert creds.refresh() is True and creds.auth_header() == "Bearer rotated"
    assert "cannot reload credentials after a 401" in caplog.text
