"""--timeout bounds the whole wait for the cluster, errors name the flag the user typed, and ``get -w``
says when its watch is lost and when it is back."""

from __future__ import annotations

import errno
import re
import signal
import subprocess
import sys
import threading
import time
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
        raise AssertionError(
            f"`{' '.join(command)} --timeout 1` was still running after 10 s against a silent server"
        ) from None
    finally:
        server.set_delay(0)
    assert result.returncode == 1
    line = one_line_error(result)
    waited = re.search(r"did not answer in (\d+\.\d) s \(.+; --timeout 1 s\)", line)
    assert waited is not None, line
    assert 1.0 <= float(waited[1]) < 10, line  # the time it waited, measured


def test_the_timeout_message_says_how_long_it_actually_waited():
    now = [100.0]
    with Deadline(1, clock=lambda: now[0]) as deadline:
        now[0] += 2.5  # a wait the deadline could not cut short (CPU-bound decoding of a large list)
        with pytest.raises(CliError) as ended:
            deadline.left_for("the cache's initial list of pods")
    assert ended.value.message == (
        "the API server did not answer in 2.5 s (the cache's initial list of pods; --timeout 1 s); "
        "check that the cluster is healthy, or retry with a larger --timeout"
    )


def test_a_sync_the_timeout_ends_says_how_long_it_waited(server, kubeconfig, capsys):
    # Discovery (2 GETs) and the probe LIST end 2.4 s into the 2.8 s; the informer's LIST does not
    server.set_delay(0.8)
    try:
        assert main(["get", "pods", "--timeout", "2.8", "--kubeconfig", kubeconfig]) == 1
    finally:
        server.set_delay(0)
    line = capsys.readouterr().err.strip().splitlines()[-1]
    # Under CPU load the deadline may fall on the probe LIST instead (a CI run at load 13 did): that
    # message must say how long it waited as well.
    waited = re.fullmatch(
        r"error: the cache's initial list of pods did not complete in (\d+\.\d) s \(--timeout 2.8 s\); "
        r"the cluster may be slow or the kind very large: retry with a larger --timeout",
        line,
    ) or re.fullmatch(
        r"error: the API server did not answer in (\d+\.\d) s \(GET /api/v1/namespaces/default/pods; "
        r"--timeout 2.8 s\); check that the cluster is healthy, or retry with a larger --timeout",
        line,
    )
    assert waited is not None, line
    assert 2.8 <= float(waited[1]) < 10, line


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--timeout", "0"], "error: --timeout must be a number of seconds > 0, got 0"),
        (["--timeout", "nan"], "error: --timeout must be a number of seconds > 0, got nan"),
        (["-l", "app in ("], "error: -l/--selector: invalid label selector 'app in ('"),
        (["--field-selector", "phase"], "error: --field-selector: invalid field selector 'phase'"),
        (["-n", "Team_A"], "error: -n/--namespace: 'Team_A' is not a valid namespace name"),
        (["--fake-pods", "-1"], "error: --fake-pods must be a whole number >= 0, got -1"),
        (["--fake-pods", "999999999"], "error: --fake-pods must be at most 200000, got 999999999"),
        (["--timeout", "1e10"], "error: --timeout must be at most 1000000 seconds, got 1e+10"),
        (["--timeout", "inf"], "error: --timeout must be a number of seconds > 0, got inf"),
    ],
)
def test_bad_flags_are_named_as_typed(flags, expected, server, kubeconfig, capsys):
    assert main(["get", "pods", *flags, "--kubeconfig", kubeconfig]) == 2
    captured = capsys.readouterr()
    line = one_line_error(subprocess.CompletedProcess([], 2, captured.out, captured.err))
    assert line.startswith(expected), line
    assert "Cache(" not in line and "400" not in line, line  # neither the library's parameter nor a fake status
    assert server.requests == [], "a bad flag must be refused before anything is sent"


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--pods", "-1"], "error: --pods must be a whole number >= 0, got -1"),
        (["--duration", "-1"], "error: --duration must be a number of seconds >= 0, got -1"),
        (["--duration", "nan"], "error: --duration must be a number of seconds >= 0, got nan"),
        (["--duration", "1e10"], "error: --duration must be at most 1000000 seconds, got 1e+10"),
        (["--rate", "-0.5"], "error: --rate must be a number >= 0, got -0.5"),
        (["--rate", "inf"], "error: --rate must be a number >= 0, got inf"),
        (["--rate", "1e9"], "error: --rate must be at most 10000 per second, got 1e+09"),
        (["--pods", "10000000"], "error: --pods must be at most 200000, got 10000000"),
        (["--fault-every", "-2"], "error: --fault-every must be a number of seconds >= 0, got -2"),
        (["--fault-every", "1e10"], "error: --fault-every must be at most 1000000 seconds, got 1e+10"),
    ],
)
def test_bad_demo_flags_are_named_as_typed(flags, expected, capsys):
    before = set(threading.enumerate())
    assert main(["demo", "--plain", *flags]) == 2
    captured = capsys.readouterr()
    assert one_line_error(subprocess.CompletedProcess([], 2, captured.out, captured.err)) == expected
    assert captured.out == ""
    assert set(threading.enumerate()) <= before, "a bad flag must be refused before the fake cluster starts"


def test_the_longest_timeout_allowed_is_waited_on_without_overflow(server, kubeconfig, capsys, monkeypatch):
    failed: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda hook_args: failed.append(hook_args.exc_value))
    server.create("pods", make_pod("web-0", "default"), "default")
    assert main(["get", "pods", "--timeout", "1e6", "-o", "name", "--kubeconfig", kubeconfig]) == 0
    assert capsys.readouterr().out.splitlines() == ["pod/web-0"]
    assert failed == []


def test_a_deadline_beyond_the_longest_thread_wait_neither_overflows_nor_expires(monkeypatch):
    failed: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda hook_args: failed.append(hook_args.exc_value))
    with Deadline(threading.TIMEOUT_MAX * 10) as deadline:
        assert deadline.left_for("a wait") > threading.TIMEOUT_MAX
    assert not deadline.expired.is_set()
    assert failed == []  # the watchdog's Event.wait did not overflow


def test_bad_timeout_as_a_user_types_it(cli, kubeconfig):
    result = cli("get", "pods", "--timeout", "0", "--kubeconfig", kubeconfig, timeout=30)
    assert result.returncode == 2
    assert one_line_error(result) == "error: --timeout must be a number of seconds > 0, got 0"


def test_deadline_ends_a_wait_between_retries(server, kubeconfig):
    server.fail_next(10, 503, verb="list", retry_after=30)  # the transport would wait 30 s, 5 times
    config = Config(kubeconfig=kubeconfig)
    try:
        with (
            Deadline(0.5) as deadline,
            pytest.raises(
                CliError,
                match=r"kept refusing GET /api/v1/pods for 0\.\d s \(--timeout 0.5 s\); its last answer: 503",
            ),
        ):
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


def test_kinds_after_options_are_taken_as_kubectl_does(server, kubeconfig, capsys):
    server.create("pods", make_pod("web-0", "team-a"), "team-a")
    assert main(["status", "-n", "team-a", "pods", "deploy", "--kubeconfig", kubeconfig]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "cache: ready=True mode=fallback informers=2 objects=1", lines
    rows = {line.split()[0]: line.split() for line in lines[2:]}
    assert set(rows) == {"Pod", "Deployment"}, lines
    assert rows["Pod"][1:6] == ["team-a", "-", "yes", "current", "1"]
    assert rows["Deployment"][1:6] == ["team-a", "-", "yes", "current", "0"]


def test_name_after_options_is_taken_as_kubectl_does(cli, server, kubeconfig):
    server.create("pods", make_pod("web-1", "team-a"), "team-a")
    result = cli("get", "pods", "-n", "team-a", "web-1", "-o", "name", "--kubeconfig", kubeconfig, timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["pod/web-1"]


def _start_on(server: FakeAPIServer, timeout: float = 10) -> FakeAPIServer:
    """``server.start()`` on the port it was given (one that a server just left): retried briefly while
    the port is still in use, as a restarted API server is."""
    retry = threading.Event()  # never set: each retry waits a moment on it
    end = time.monotonic() + timeout
    while True:
        try:
            return server.start()
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE or time.monotonic() > end:
                raise
        retry.wait(0.05)


def test_watch_says_once_when_the_api_server_goes_away_and_once_when_it_is_back(cli_env, tmp_path: Path):
    servers = [FakeAPIServer(bookmark_interval=0.5).start()]  # its port: chosen by the system, no race
    readers: list[LineReader] = []
    proc = None
    try:
        first = servers[0]
        first.create("pods", make_pod("web-0", "default"), "default")
        port, revision = first.port, first.revision
        kubeconfig = first.write_kubeconfig(tmp_path / "kubeconfig")
        proc = subprocess.Popen(
            [*CLI, "get", "pods", "-w", "--kubeconfig", str(kubeconfig)],
            cwd=ROOT,
            env=cli_env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = LineReader(proc.stdout), LineReader(proc.stderr)
        readers += [out, err]
        out.until("web-0")
        first.wait_for_watches(1, timeout=20)
        first.stop()  # the API server goes away: the watch ends and reconnecting is refused
        lost = [line for line in err.until("watch: pods: degraded", timeout=20) if line.strip()]
        assert len(lost) == 1 and "the listing may be out of date" in lost[0], lost
        # Back on the same port with the same objects, as after a restart (its storage kept): written
        # in the same order before it listens, they have the same resourceVersions.
        second = FakeAPIServer(port=port, bookmark_interval=0.5)
        second.create("pods", make_pod("web-0", "default"), "default")
        assert second.revision == revision
        servers.append(_start_on(second))
        err.until("watch: pods: current again", timeout=20)
        second.create("pods", make_pod("web-1", "default"), "default")
        out.until("web-1", timeout=20)  # changes are printed again
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0
        out.join()
        err.join()
        said = [line for line in err.lines if line.strip()]
        assert len(said) == 2, said  # once per change of state, however long it was down
        assert "Traceback" not in "\n".join(err.lines)
    finally:
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        for reader in readers:  # the process has exited: its pipes are at their end
            reader.join()
        if proc is not None:
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
        for server in servers:
            server.stop()
