"""Middleware of the ``pods`` app: ``X-Pid`` names the process (and so the cache) that answered."""

from __future__ import annotations

import os
from typing import Callable

from django.http import HttpRequest, HttpResponse


def served_by(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable[[HttpRequest], HttpResponse]:
    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        response["X-Pid"] = str(os.getpid())  # behind gunicorn each worker process reads its own cache
        return response

    return middleware
