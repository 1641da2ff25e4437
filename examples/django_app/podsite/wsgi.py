"""WSGI entry point of the Django example (``waitress-serve podsite.wsgi:application``)."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "podsite.settings")
application = get_wsgi_application()  # runs PodsConfig.ready(): the informer cache starts here
