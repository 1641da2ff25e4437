"""Test helpers: a fake kube-apiserver over real HTTP(S), realistic objects and a pytest plugin."""

from ._real import RealAPIServer
from .apiserver.http.request_log import RecordedRequest
from .apiserver.machinery.resources import ResourceType
from .apiserver.registry.webhooks import WebhookCall
from .apiserver.seed import seed_pods
from .apiserver.server import FakeAPIServer
from .data.objects import make_configmap, make_deployment, make_pod
from .doubles.fakes import FakeClock, FakeListWatch, FakePage, FakeWatchEvent

__all__ = [
    "FakeClock",
    "FakeListWatch",
    "FakePage",
    "FakeWatchEvent",
    "FakeAPIServer",
    "RealAPIServer",
    "RecordedRequest",
    "ResourceType",
    "WebhookCall",
    "make_configmap",
    "make_deployment",
    "make_pod",
    "seed_pods",
]
