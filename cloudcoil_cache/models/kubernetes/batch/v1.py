"""Generated models of batch/v1 (Kubernetes v1.30.2 OpenAPI spec); do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from typing import ClassVar

from cloudcoil_cache._resource import Resource
from cloudcoil_cache.models._base import Model, model
from cloudcoil_cache.models._time import Time
from cloudcoil_cache.models.apimachinery import (
    LabelSelector,
    ListMeta,
    ObjectMeta,
)
from cloudcoil_cache.models.kubernetes.core.v1 import (
    ObjectReference,
    PodTemplateSpec,
)

__all__ = [
    "CronJob",
    "CronJobList",
    "CronJobSpec",
    "CronJobStatus",
    "Job",
    "JobCondition",
    "JobList",
    "JobSpec",
    "JobStatus",
    "JobTemplateSpec",
    "PodFailurePolicy",
    "PodFailurePolicyOnExitCodesRequirement",
    "PodFailurePolicyOnPodConditionsPattern",
    "PodFailurePolicyRule",
    "SuccessPolicy",
    "SuccessPolicyRule",
    "UncountedTerminatedPods",
]


@model
class CronJob(Resource):
    """CronJob represents the configuration of a single cron job."""

    api_version: ClassVar[str] = "batch/v1"
    kind: ClassVar[str] = "CronJob"
    plural: ClassVar[str | None] = "cronjobs"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "batch"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: CronJobSpec | None = None
    status: CronJobStatus | None = None


@model
class CronJobList(Model):
    """CronJobList is a collection of cron jobs."""

    api_version: str | None = None
    items: list[CronJob] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class CronJobSpec(Model):
    """CronJobSpec describes how the job execution will look like and when it will actually..."""

    concurrency_policy: str | None = None
    failed_jobs_history_limit: int | None = None
    job_template: JobTemplateSpec | None = None  # required
    schedule: str | None = None  # required
    starting_deadline_seconds: int | None = None
    successful_jobs_history_limit: int | None = None
    suspend: bool | None = None
    time_zone: str | None = None


@model
class CronJobStatus(Model):
    """CronJobStatus represents the current state of a cron job."""

    active: list[ObjectReference] | None = None
    last_schedule_time: Time | None = None
    last_successful_time: Time | None = None


@model
class Job(Resource):
    """Job represents the configuration of a single job."""

    api_version: ClassVar[str] = "batch/v1"
    kind: ClassVar[str] = "Job"
    plural: ClassVar[str | None] = "jobs"
    namespaced: ClassVar[bool] = True
    group: ClassVar[str] = "batch"
    version: ClassVar[str] = "v1"

    metadata: ObjectMeta | None = None
    spec: JobSpec | None = None
    status: JobStatus | None = None


@model
class JobCondition(Model):
    """JobCondition describes current state of a job."""

    last_probe_time: Time | None = None
    last_transition_time: Time | None = None
    message: str | None = None
    reason: str | None = None
    status: str | None = None  # required
    type: str | None = None  # required


@model
class JobList(Model):
    """JobList is a collection of jobs."""

    api_version: str | None = None
    items: list[Job] | None = None  # required
    kind: str | None = None
    metadata: ListMeta | None = None


@model
class JobSpec(Model):
    """JobSpec describes how the job execution will look like."""

    active_deadline_seconds: int | None = None
    backoff_limit: int | None = None
    backoff_limit_per_index: int | None = None
    completion_mode: str | None = None
    completions: int | None = None
    managed_by: str | None = None
    manual_selector: bool | None = None
    max_failed_indexes: int | None = None
    parallelism: int | None = None
    pod_failure_policy: PodFailurePolicy | None = None
    pod_replacement_policy: str | None = None
    selector: LabelSelector | None = None
    success_policy: SuccessPolicy | None = None
    suspend: bool | None = None
    template: PodTemplateSpec | None = None  # required
    ttl_seconds_after_finished: int | None = None


@model
class JobStatus(Model):
    """JobStatus represents the current state of a Job."""

    active: int | None = None
    completed_indexes: str | None = None
    completion_time: Time | None = None
    conditions: list[JobCondition] | None = None
    failed: int | None = None
    failed_indexes: str | None = None
    ready: int | None = None
    start_time: Time | None = None
    succeeded: int | None = None
    terminating: int | None = None
    uncounted_terminated_pods: UncountedTerminatedPods | None = None


@model
class JobTemplateSpec(Model):
    """JobTemplateSpec describes the data a Job should have when created from a template"""

    metadata: ObjectMeta | None = None
    spec: JobSpec | None = None


@model
class PodFailurePolicy(Model):
    """PodFailurePolicy describes how failed pods influence the backoffLimit."""

    rules: list[PodFailurePolicyRule] | None = None  # required


@model
class PodFailurePolicyOnExitCodesRequirement(Model):
    """PodFailurePolicyOnExitCodesRequirement describes the requirement for handling a faile..."""

    container_name: str | None = None
    operator: str | None = None  # required
    values: list[int] | None = None  # required


@model
class PodFailurePolicyOnPodConditionsPattern(Model):
    """PodFailurePolicyOnPodConditionsPattern describes a pattern for matching an actual pod..."""

    status: str | None = None  # required
    type: str | None = None  # required


@model
class PodFailurePolicyRule(Model):
    """PodFailurePolicyRule describes how a pod failure is handled when the requirements are..."""

    action: str | None = None  # required
    on_exit_codes: PodFailurePolicyOnExitCodesRequirement | None = None
    on_pod_conditions: list[PodFailurePolicyOnPodConditionsPattern] | None = None


@model
class SuccessPolicy(Model):
    """SuccessPolicy describes when a Job can be declared as succeeded based on the success..."""

    rules: list[SuccessPolicyRule] | None = None  # required


@model
class SuccessPolicyRule(Model):
    """SuccessPolicyRule describes rule for declaring a Job as succeeded."""

    succeeded_count: int | None = None
    succeeded_indexes: str | None = None


@model
class UncountedTerminatedPods(Model):
    """UncountedTerminatedPods holds UIDs of Pods that have terminated but haven't been acco..."""

    failed: list[str] | None = None
    succeeded: list[str] | None = None
