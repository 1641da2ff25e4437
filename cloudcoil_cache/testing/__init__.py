"""Test helpers: a fake kube-apiserver over real HTTP(S), realistic objects and a pytest plugin."""

from ._fakes import FakeClock, FakeListWatch, FakePage, FakeWatchEvent
from ._objects import make_configmap, make_deployment, make_pod, seed_pods
from ._real import RealAPIServer
from ._requests import RecordedRequest
from ._resources import ResourceType
from ._server import FakeAPIServer

__all__ = [
    "FakeClock",
    "FakeListWatch",
    "FakePage",
    "FakeWatchEvent",
    "FakeAPIServer",
    "RealAPIServer",
    "RecordedRequest",
    "ResourceType",
    "make_configmap",
    "make_deployment",
    "make_pod",
    "seed_pods",
]
