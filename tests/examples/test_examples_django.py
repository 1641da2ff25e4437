"""The Django example: ``podsite/wsgi.py`` starts the cache; Django's test client and waitress serve from it.

Django's set-up is process-wide (settings, app registry, the default Config), so the example runs in a
subprocess of its own, as a user runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from _examples_support import EXAMPLES


def test_django_views_read_pods_from_the_cache_under_the_test_client_and_waitress(capsys):
    pytest.importorskip("django")
    pytest.importorskip("waitress")
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "DJANGO_SETTINGS_MODULE")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "django_app" / "run.py")],
        env=env,
        cwd=EXAMPLES.parent,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["page status"] == 200 and result["page has default table"] is True
    assert {ns: [p["name"] for p in pods] for ns, pods in result["api"].items()} == {
        "default": ["web-0", "web-1"],
        "other": ["web-0"],
    }
    assert result["missing"] == 404
    assert result["waitress"]["requests"] == 800 and result["waitress"]["failures"] == []
    assert result["api reads"] == []  # the test client's and waitress's requests: all from the cache
    with capsys.disabled():
        print(f"\ndjango under waitress: {result['waitress']}")
