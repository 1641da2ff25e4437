"""Generated models of apiextensions/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any, ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models._time import Time
from cloudcoil_cache.models.apimachinery import (
    ListMeta,
    ObjectMeta,
)

__all__ = [
    "CustomResourceColumnDefinition",
    "CustomResourceConversion",
    "CustomResourceDefinition",
    "CustomResourceDefinitionCondition",
    "CustomResourceDefinitionList",
    "CustomResourceDefinitionNames",
    "CustomResourceDefinitionSpec",
    "CustomResourceDefinitionStatus",
    "CustomResourceDefinitionVersion",
    "CustomResourceSubresourceScale",
    "CustomResourceSubresources",
    "CustomResourceValidation",
    "ExternalDocumentation",
    "JSONSchemaProps",
    "SelectableField",
    "ServiceReference",
    "ValidationRule",
    "WebhookClientConfig",
    "WebhookConversion",
]


@model
class CustomResourceColumnDefinition(Model):
    """CustomResourceColumnDefinition specifies a column for server side printing."""

    description: str | None = None
    format: str | None = None
    json_path: str | None = None  # required
    name: str | None = None  # required
    priority: int | None = None
    type: str | None = None  # required


@model
class CustomResourceConversion(Model):
    """CustomResourceConversion describes how to convert different versions of a CR."""

    strategy: str | None = None  # required
    webhook: WebhookConversion | None = None


@model
class CustomResourceDefinition(Resource):
    """CustomResourceDefinition represents a resource that should be exposed on the API server."""

    api_version: ClassVar[str] = "apiextensions.k8s.io/v1"
    kind: ClassVar[str] = "CustomResourceDefinition"
    plural: ClassVar[str | None] = "customresourcedefinitions"
    namespaced: ClassVar[bool] = False
    group: ClassVar[str] = "apiextensions.k8s.io"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: CustomResourceDefinitionSpec | None = None  # required
    status: CustomResourceDefinitionStatus | None = None


@model
class CustomResourceDefinitionCondition(Model):
    """CustomResourceDefinitionCondition contains details for the current condition of this..."""

    last_transition_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class CustomResourceDefinitionList(Model):
    """CustomResourceDefinitionList is a list of CustomResourceDefinition objects."""

    api_version: str | None = None
    items: list[CustomResourceDefinition] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class CustomResourceDefinitionNames(Model):
    """CustomResourceDefinitionNames indicates the names to serve this CustomResourceDefinition"""

    categories: list[str] | None = None
    kind: str | None = None  # required
    list_kind: str | None = None
    plural: str | None = None  # required
    short_names: list[str] | None = None
    singular: str | None = None


@model
class CustomResourceDefinitionSpec(Model):
    """CustomResourceDefinitionSpec describes how a user wants their resource to appear"""

    conversion: CustomResourceConversion | None = None
    group: str | None = None  # required
    names: CustomResourceDefinitionNames | None = None  # required
    preserve_unknown_fields: bool | None = None
    scope: str | None = None  # required
    versions: list[CustomResourceDefinitionVersion] | None = None  # required


@model
class CustomResourceDefinitionStatus(Model):
    """CustomResourceDefinitionStatus indicates the state of the CustomResourceDefinition"""

    accepted_names: CustomResourceDefinitionNames | None = None
    conditions: list[CustomResourceDefinitionCondition] | None = None
    stored_versions: list[str] | None = None


@model
class CustomResourceDefinitionVersion(Model):
    """CustomResourceDefinitionVersion describes a version for CRD."""

    additional_printer_columns: list[CustomResourceColumnDefinition] | None = None
    deprecated: bool | None = None
    deprecation_warning: str | None = None
    name: str | None = None  # required
    schema: CustomResourceValidation | None = None
    selectable_fields: list[SelectableField] | None = None
    served: bool | None = None  # required
    storage: bool | None = None  # required
    subresources: CustomResourceSubresources | None = None


@model
class CustomResourceSubresourceScale(Model):
    """CustomResourceSubresourceScale defines how to serve the scale subresource for CustomR..."""

    label_selector_path: str | None = None
    spec_replicas_path: str | None = None  # required
    status_replicas_path: str | None = None  # required


@model
class CustomResourceSubresources(Model):
    """CustomResourceSubresources defines the status and scale subresources for CustomResour..."""

    scale: CustomResourceSubresourceScale | None = None
    status: dict[str, Any] | None = None


@model
class CustomResourceValidation(Model):
    """CustomResourceValidation is a list of validation methods for CustomResources."""

    _wire: ClassVar[dict[str, str]] = {"open_apiv3_schema": "openAPIV3Schema"}

    open_apiv3_schema: JSONSchemaProps | None = None


@model
class ExternalDocumentation(Model):
    """ExternalDocumentation allows referencing an external resource for extended documentat..."""

    description: str | None = None
    url: str | None = None


@model
class JSONSchemaProps(Model):
    """JSONSchemaProps is a JSON-Schema following Specification Draft 4 (http://json-schema...."""

    _wire: ClassVar[dict[str, str]] = {
        "ref": "$ref",
        "schema": "$schema",
        "x_kubernetes_embedded_resource": "x-kubernetes-embedded-resource",
        "x_kubernetes_int_or_string": "x-kubernetes-int-or-string",
        "x_kubernetes_list_map_keys": "x-kubernetes-list-map-keys",
        "x_kubernetes_list_type": "x-kubernetes-list-type",
        "x_kubernetes_map_type": "x-kubernetes-map-type",
        "x_kubernetes_preserve_unknown_fields": "x-kubernetes-preserve-unknown-fields",
        "x_kubernetes_validations": "x-kubernetes-validations",
    }

    additional_items: Any | None = None
    additional_properties: Any | None = None
    all_of: list[JSONSchemaProps] | None = None
    any_of: list[JSONSchemaProps] | None = None
    default: Any | None = None
    definitions: dict[str, JSONSchemaProps] | None = None
    dependencies: dict[str, Any] | None = None
    description: str | None = None
    enum: list[Any] | None = None
    example: Any | None = None
    exclusive_maximum: bool | None = None
    exclusive_minimum: bool | None = None
    external_docs: ExternalDocumentation | None = None
    format: str | None = None
    id: str | None = None
    items: Any | None = None
    max_items: int | None = None
    max_length: int | None = None
    max_properties: int | None = None
    maximum: float | None = None
    min_items: int | None = None
    min_length: int | None = None
    min_properties: int | None = None
    minimum: float | None = None
    multiple_of: float | None = None
    not_: JSONSchemaProps | None = None
    nullable: bool | None = None
    one_of: list[JSONSchemaProps] | None = None
    pattern: str | None = None
    pattern_properties: dict[str, JSONSchemaProps] | None = None
    properties: dict[str, JSONSchemaProps] | None = None
    ref: str | None = None
    required: list[str] | None = None
    schema: str | None = None
    title: str | None = None
    type: str | None = None
    unique_items: bool | None = None
    x_kubernetes_embedded_resource: bool | None = None
    x_kubernetes_int_or_string: bool | None = None
    x_kubernetes_list_map_keys: list[str] | None = None
    x_kubernetes_list_type: str | None = None
    x_kubernetes_map_type: str | None = None
    x_kubernetes_preserve_unknown_fields: bool | None = None
    x_kubernetes_validations: list[ValidationRule] | None = None


@model
class SelectableField(Model):
    """SelectableField specifies the JSON path of a field that may be used with field select..."""

    json_path: str | None = None  # required


@model
class ServiceReference(Model):
    """ServiceReference holds a reference to Service.legacy.k8s.io"""

    name: str | None = None  # required
    namespace: str | None = None  # required
    path: str | None = None
    port: int | None = None


@model
class ValidationRule(Model):
    """ValidationRule describes a validation rule written in the CEL expression language."""

    field_path: str | None = None
    message: str | None = None
    message_expression: str | None = None
    optional_old_self: bool | None = None
    reason: str | None = None
    rule: str | None = None  # required


@model
class WebhookClientConfig(Model):
    """WebhookClientConfig contains the information to make a TLS connection with the webhook."""

    ca_bundle: str | None = None
    service: ServiceReference | None = None
    url: str | None = None


@model
class WebhookConversion(Model):
    """WebhookConversion describes how to call a conversion webhook"""

    client_config: WebhookClientConfig | None = None
    conversion_review_versions: list[str] | None = None  # required
