"""Generated models of certificates/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models._time import Time
from cloudcoil_cache.models.apimachinery import (
    ListMeta,
    ObjectMeta,
)

__all__ = [
    "CertificateSigningRequest",
    "CertificateSigningRequestCondition",
    "CertificateSigningRequestList",
    "CertificateSigningRequestSpec",
    "CertificateSigningRequestStatus",
]


@model
class CertificateSigningRequest(Resource):
    """CertificateSigningRequest objects provide a mechanism to obtain x509 certificates by..."""

    api_version: ClassVar[str] = "certificates.k8s.io/v1"
    kind: ClassVar[str] = "CertificateSigningRequest"
    plural: ClassVar[str | None] = "certificatesigningrequests"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "certificates.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: CertificateSigningRequestSpec | None = None  # required
    status: CertificateSigningRequestStatus | None = None


@model
class CertificateSigningRequestCondition(Model):
    """CertificateSigningRequestCondition describes a condition of a CertificateSigningReque..."""

    last_transition_time: Time | None = None
    last_update_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class CertificateSigningRequestList(Model):
    """CertificateSigningRequestList is a collection of CertificateSigningRequest objects"""

    api_version: str | None = None
    items: list[CertificateSigningRequest] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class CertificateSigningRequestSpec(Model):
    """CertificateSigningRequestSpec contains the certificate request."""

    expiration_seconds: int | None = None
    extra: dict[str, list[str]] | None = None
    groups: list[str] | None = None
    request: str | None = None  # required
    signer_name: str | None = None  # required
    uid: str | None = None
    usages: list[str] | None = None
    username: str | None = None


@model
class CertificateSigningRequestStatus(Model):
    """CertificateSigningRequestStatus contains conditions used to indicate approved/denied/..."""

    certificate: str | None = None
    conditions: list[CertificateSigningRequestCondition] | None = None
