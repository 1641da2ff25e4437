"""Settings of the Django example: one app (``pods``), no database, templates from the app."""

from __future__ import annotations

SECRET_KEY = "example-only-not-secret"  # noqa: S105 - an example; set your own in a real project
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
INSTALLED_APPS = ["pods.apps.PodsConfig"]
MIDDLEWARE = ["pods.middleware.served_by"]
ROOT_URLCONF = "podsite.urls"
WSGI_APPLICATION = "podsite.wsgi.application"
DATABASES: dict[str, dict[str, str]] = {}
TEMPLATES = [{"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True, "OPTIONS": {}}]
USE_TZ = True
