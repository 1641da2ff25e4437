"""Generated models of authentication/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models._time import Time
from cloudcoil_cache.models.apimachinery import (
    ObjectMeta,
)

__all__ = [
    "BoundObjectReference",
    "SelfSubjectReview",
    "SelfSubjectReviewStatus",
    "TokenRequest",
    "TokenRequestSpec",
    "TokenRequestStatus",
    "TokenReview",
    "TokenReviewSpec",
    "TokenReviewStatus",
    "UserInfo",
]


@model
class BoundObjectReference(Model):
    """BoundObjectReference is a reference to an object that a token is bound to."""

    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    uid: str | None = None


@model
class SelfSubjectReview(Resource):
    """SelfSubjectReview contains the user information that the kube-apiserver has about the..."""

    api_version: ClassVar[str] = "authentication.k8s.io/v1"
    kind: ClassVar[str] = "SelfSubjectReview"
    plural: ClassVar[str | None] = "selfsubjectreviews"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "authentication.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    status: SelfSubjectReviewStatus | None = None


@model
class SelfSubjectReviewStatus(Model):
    """SelfSubjectReviewStatus is filled by the kube-apiserver and sent back to a user."""

    user_info: UserInfo | None = None


@model
class TokenRequest(Resource):
    """TokenRequest requests a token for a given service account."""

    api_version: ClassVar[str] = "authentication.k8s.io/v1"
    kind: ClassVar[str] = "TokenRequest"
    plural: ClassVar[str | None] = None
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "authentication.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: TokenRequestSpec | None = None  # required
    status: TokenRequestStatus | None = None


@model
class TokenRequestSpec(Model):
    """TokenRequestSpec contains client provided parameters of a token request."""

    audiences: list[str] | None = None  # required
    bound_object_ref: BoundObjectReference | None = None
    expiration_seconds: int | None = None


@model
class TokenRequestStatus(Model):
    """TokenRequestStatus is the result of a token request."""

    expiration_timestamp: Time | None = None  # required
    token: str | None = None  # required


@model
class TokenReview(Resource):
    """TokenReview attempts to authenticate a token to a known user."""

    api_version: ClassVar[str] = "authentication.k8s.io/v1"
    kind: ClassVar[str] = "TokenReview"
    plural: ClassVar[str | None] = "tokenreviews"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "authentication.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: TokenReviewSpec | None = None  # required
    status: TokenReviewStatus | None = None


@model
class TokenReviewSpec(Model):
    """TokenReviewSpec is a description of the token authentication request."""

    audiences: list[str] | None = None
    token: str | None = None


@model
class TokenReviewStatus(Model):
    """TokenReviewStatus is the result of the token authentication request."""

    audiences: list[str] | None = None
    authenticated: bool | None = None
    error: str | None = None
    user: UserInfo | None = None


@model
class UserInfo(Model):
    """UserInfo holds the information about the user needed to implement the user.Info inter..."""

    extra: dict[str, list[str]] | None = None
    groups: list[str] | None = None
    uid: str | None = None
    username: str | None = None
