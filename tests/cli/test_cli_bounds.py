"""--timeout bounds the whole wait for the cluster, errors name the flag the user typed, and ``get -w``
says when its watch is lost and when it is back."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from _cli_support import ROOT, LineReader, one_line_error

from cloudcoil_cache.cli import main
from cloudcoil_cache.cli._deadline import Deadline
from cloudcoil_cache.cli._errors import CliError
from cloudcoil_cache.client import Config
from cloudcoil_cache.testing import FakeAPIServer, make_pod

CLI = [sys.executable, "-m", "cloudcoil_cache"]


@pytest.mark.parametrize("command", [["get", "pods"], ["status"]])
def test_timeout_bounds_the_wait_for_a_server_that_does_not_answer(command, cli, server, kubeconfig):
    server.set_delay(120)  # every response held back; the server's stop() releases them at teardown
    try:
        # Discovery (GET /api) and the probe LIST would wait for the transport's 60 s read timeout
        # if --timeout bounded only the cache's sync.
        result = cli(*command, "--timeout", "1", "--kubeconfig", kubeconfig, timeout=10)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"`{' '.join(command)} --timeout 1` was still running after 10 s against a "
                             "silent server") from None
    finally:
        server.set_delay(0)
    assert result.returncode == 1
    line = one_line_error(result)
    assert "did not answer within --timeout 1 s" in line, line


@pytest.mark.parametrize(("flags", "expected"), [
    (["--timeout", "0"], "error: --timeout must be a number of seconds > 0, got 0"),
    (["--timeout", "nan"], "error: --timeout must be a number of seconds > 0, got nan"),
    (["-l", "app in ("], "error: -l/--selector: invalid label selector 'app in ('"),
    (["--field-selector", "phase"], "error: --field-selector: invalid field selector 'phase'"),
    (["-n", "Team_A"], "error: -n/--namespace: 'Team_A' is not a valid namespace name"),
    (["--fake-pods", "-1"], "error: --fake-pods must be a whole number >= 0, got -1"),
])
def test_bad_flags_are_named_as_typed(flags, expected, server, kubeconfig, capsys):
    assert main(["get", "pods", *flags, "--kubeconfig", kubeconfig]) == 2
    captured = capsys.readouterr()
    line = one_line_error(subprocess.CompletedProcess([], 2, captured.out, captured.err))
    assert line.startswith(expected), line
    assert "Cache(" not in line and "400" not in line, line  # neither the library's parameter nor a fake status
    assert server.requests == [], "a bad flag must be refused before anything is sent"


def test_bad_timeout_as_a_user_types_it(cli, kubeconfig):
    result = cli("get", "pods", "--timeout", "0", "--kubeconfig", kubeconfig, timeout=30)
    assert result.returncode == 2
    assert one_line_error(result) == "error: --timeout must be a number of seconds > 0, got 0"


def test_deadline_ends_a_wait_between_retries(server, kubeconfig):
    server.fail_next(10, 503, verb="list", retry_after=30)  # the transport would wait 30 s, 5 times
    config = Config(kubeconfig=kubeconfig)
    try:
        with Deadline(0.5) as deadline, pytest.raises(CliError, match=r"within --timeout 0.5 s \(GET /api/v1/pods\)"):
            deadline.request(config.transport, "GET", "/api/v1/pods")
        assert deadline.expired.is_set()
        assert [r.verb for r in server.requests] == ["list"]  # the end cut the first wait short: no retry sent
    finally:
        config.close()


def test_a_selector_the_server_refuses_names_the_flag(cli, server, kubeconfig):
    result = cli("get", "pods", "--field-selector", "spec.color=blue", "--kubeconfig", kubeconfig, timeout=30)
    assert result.returncode == 1, result.stderr
    line = one_line_error(result)
    assert "--field-selector 'spec.color=blue'" in line and "spec.color" in line, line


def test_name_after_options_is_taken_as_kubectl_does(cli, server, kubeconfig):
    server.create("pods", make_pod("web-1", "team-a"), "team-a")
    result = cli("get", "pods", "-n", "team-a", "web-1", "-o", "name", "--kubeconfig", kubeconfig, timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["pod/web-1"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_watch_says_once_when_the_api_server_goes_away_and_once_when_it_is_back(cli_env, tmp_path: Path):
    server = FakeAPIServer(port=_free_port(), bookmark_interval=0.5).start()
    server.create("pods", make_pod("web-0", "default"), "default")
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    proc = subprocess.Popen([*CLI, "get", "pods", "-w", "--kubeconfig", str(kubeconfig)], cwd=ROOT, env=cli_env,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = LineReader(proc.stdout), LineReader(proc.stderr)
        out.until("web-0")
        server.wait_for_watches(1, timeout=20)
        server.stop()  # the API server goes away: the watch ends and reconnecting is refused
        lost = [line for line in err.until("watch: pods: degraded", timeout=20) if line.strip()]
        assert len(lost) == 1 and "the listing may be out of date" in lost[0], lost
        server.start()  # back on the same port, with the same objects
        err.until("watch: pods: current again", timeout=20)
        server.create("pods", make_pod("web-1", "default"), "default")
        out.until("web-1", timeout=20)  # changes are printed again
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0
        out.join()
        err.join()
        said = [line for line in err.lines if line.strip()]
        assert len(said) == 2, said  # once per change of state, however long it was down
        assert "Traceback" not in "\n".join(err.lines)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        server.stop()
