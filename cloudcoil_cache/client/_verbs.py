"""The verb list, written once: what an ``Api`` and an ``AsyncApi`` do, and what resource classes offer
(``Pod.get``, ``pod.save()``, and each one's ``async_`` twin)."""

from __future__ import annotations

__all__ = ["ASYNC_VERBS", "CLASS_VERBS", "OBJECT_VERBS", "VERBS"]

#: The verbs of an ``Api`` (``config.client_for(Pod)``); an ``AsyncApi`` has each as a coroutine
#: (``watch``: an async generator).
VERBS: tuple[str, ...] = (
    "get",
    "list",
    "watch",
    "wait_for",
    "create",
    "update",
    "update_status",
    "patch",
    "apply",
    "delete",
    "delete_all",
    "scale",
)

#: The verbs of a resource class called on the class (``Pod.get(name)``).
CLASS_VERBS: tuple[str, ...] = ("get", "list", "watch", "delete", "delete_all")

#: The verbs of a resource class called on an object (``pod.save()``).
OBJECT_VERBS: tuple[str, ...] = (
    "fetch",
    "create",
    "update",
    "update_status",
    "save",
    "patch",
    "apply",
    "remove",
    "scale",
    "wait_for",
)

#: Every verb of a resource class has an ``async_`` twin (``await Pod.async_get(name)``).
ASYNC_VERBS: tuple[str, ...] = tuple(f"async_{verb}" for verb in CLASS_VERBS + OBJECT_VERBS)
