"""No value from a credential source in any message (issue 20): a marker planted in each credential
field of a kubeconfig, on each error path, appears in no exception text, repr, cause or log line;
the message names the file and the field instead."""

from __future__ import annotations

import base64
import logging
from pathlib import Path
from typing import Any, Callable

import pytest

from cloudcoil_cache.client import Config
from cloudcoil_cache.errors import CloudcoilError
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import FakeAPIServer

MARKER = "mk-SECRET-9f3a"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _doc(server: str, user: str, cluster: str = "") -> str:
    return (
        f"apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters:\n- name: k\n  cluster:\n    server: {server}\n{cluster}"
        f"contexts:\n- name: c\n  context: {{cluster: k, user: u}}\n"
        f"users:\n- name: u\n  user:\n{user}"
    )


# (id, the kubeconfig's user block, its cluster lines, files to write beside it, what the message names)
CASES: list[tuple[str, str, str, dict[str, str], str]] = [
    ("token read as a YAML alias", f"    token: *{MARKER}\n", "", {}, "kubeconfig"),
    ("token in an unterminated quote", f'    token: "{MARKER}\n', "", {}, "kubeconfig"),
    ("token with a newline", f'    token: "{MARKER}\\nx"\n', "", {}, "token"),
    (
        "client-key-data not base64",
        f"    client-certificate-data: {_b64('x')}\n    client-key-data: {MARKER}!!\n",
        "",
        {},
        "client-key-data",
    ),
    (
        "client certificate not PEM",
        f"    client-certificate-data: {_b64(MARKER)}\n    client-key-data: {_b64(MARKER)}\n",
        "",
        {},
        "client certificate",
    ),
    (
        "certificate-authority-data not PEM",
        "    token: plain\n",
        f"    certificate-authority-data: {_b64(MARKER)}\n",
        {},
        "certificate authority",
    ),
    ("token file with a NUL", "    tokenFile: TOKENFILE\n", "", {"token": f"{MARKER}\x00"}, "token file"),
    ("a password the server refuses", f"    username: admin\n    password: {MARKER}\n", "", {}, "401"),
    ("a token the server refuses", f"    token: {MARKER}\n", "", {}, "401"),
]


def _texts(exc: BaseException) -> list[str]:
    """The exception's text and repr, and those of every exception a traceback would show with it."""
    out: list[str] = []
    seen: BaseException | None = exc
    while seen is not None:
        out += [str(seen), repr(seen), *map(str, getattr(seen, "args", ()))]
        seen = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
    return out


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_planted_credential_is_in_no_message(
    case: tuple[str, str, str, dict[str, str], str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    _, user, cluster, files, names = case
    for name, content in files.items():
        (tmp_path / name).write_text(content)
    with FakeAPIServer(expected_token="the-only-token") as server:
        scheme_server = server.url.replace("http://", "https://") if "certificate-authority" in cluster else server.url
        path = tmp_path / "kubeconfig"
        path.write_text(_doc(scheme_server, user.replace("TOKENFILE", str(tmp_path / "token")), cluster))
        errors: list[BaseException] = []
        made: list[Config] = []
        attempt: Callable[[], Any] = lambda: made.append(Config(kubeconfig=str(path)))  # noqa: E731
        try:
            attempt()
            with made[0]:
                Pod.list()
        except (CloudcoilError, ValueError, OSError) as exc:
            errors.append(exc)
        finally:
            for config in made:
                config.close()
    assert errors, "the bad credential was accepted"
    texts = _texts(errors[0]) + [r.getMessage() for r in caplog.records] + [caplog.text]
    leaks = [t for t in texts if MARKER in t]
    assert not leaks, leaks[:2]
    assert names in str(errors[0]), str(errors[0])
