"""WSGI entry point of the Django example, where the informer cache starts.

Servers import it: ``gunicorn podsite.wsgi`` (run from examples/django_app, or with
``--chdir examples/django_app``; add ``--preload`` for one LIST for every worker),
``waitress-serve podsite.wsgi:application``, ``manage.py runserver`` (``WSGI_APPLICATION``).

The cache starts here rather than in ``AppConfig.ready()``: ``manage.py`` commands (check, migrate,
shell...) load the apps too, and must run without a cluster; only a process that serves requests
imports this module. Under ``gunicorn --preload`` the import is in the master: the workers are forked
from it and resume its watch.
"""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "podsite.settings")
application = get_wsgi_application()

from pods.cluster import config  # noqa: E402 - the apps are loaded now

config.set_default()  # one cache for every request thread: started, and its first sync done
