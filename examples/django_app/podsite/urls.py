"""URLs of the Django example."""

from __future__ import annotations

from django.urls import path
from pods import views

urlpatterns = [
    path("", views.index, name="index"),
    path("api/pods/", views.api_pods, name="api-pods"),
    path("api/pods/<str:namespace>/<str:name>/", views.api_pod, name="api-pod"),
]
