"""The Django project of the example (settings, URLs, WSGI entry point)."""
