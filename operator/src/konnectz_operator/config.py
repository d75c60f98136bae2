"""Operator settings: one typed object, read from ``KONNECTZ_*`` environment variables.

The settings are built once at startup and handed to the renders and handlers (through
Kopf's ``memo``); nothing below this module reads ``os.environ``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from konnectz_contracts.events import NATS_REPLICAS, NatsReplicas

__all__ = ["OperatorSettings"]


class OperatorSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KONNECTZ_", extra="ignore", frozen=True)

    runner_image: str = Field(default="konnectz-runner:latest", min_length=1)
    # Further runner images a Konnect may name in spec.image (comma-separated, exact references, e.g.
    # registry.example.com/konnectz-runner:1.4.0); any other is refused in the Konnect's status.
    # Empty: only runner_image.
    runner_images: str = ""
    runner_image_pull_policy: Literal["Always", "IfNotPresent", "Never"] = "IfNotPresent"
    runner_port: int = Field(default=8081, ge=1, le=65535)
    runner_replicas: int = Field(default=1, ge=0, le=20)
    runner_service_account: str = ""
    # Kubernetes resource requirements of the runner container, e.g.
    # {"requests": {"cpu": "50m", "memory": "96Mi"}, "limits": {"memory": "256Mi"}} (JSON in the env).
    runner_resources: dict[str, dict[str, str]] = Field(
        default_factory=lambda: {"requests": {"cpu": "50m", "memory": "96Mi"}, "limits": {"memory": "384Mi"}}
    )
    # Extra environment of every runner container (JSON object in the env), e.g. the api URL.
    runner_env: dict[str, str] = Field(default_factory=dict)
    nats_url: str = "nats://konnectz-nats:4222"
    # Servers keeping a copy of every stream and bucket (konnectz_contracts.events.NatsReplicas; the chart's
    # nats.replicas): of the KZ_KONNECTS bucket the operator makes, and handed to the runners it renders
    # (KONNECTZ_NATS_REPLICAS), which create and update their streams and buckets with it.
    nats_replicas: NatsReplicas = NATS_REPLICAS
    # The operator's own NATS user (konnectz_contracts.nats_auth: the KZ_KONNECTS bucket only).
    nats_user: str = ""
    nats_password: str = Field(default="", repr=False)
    nats_ca_file: str = ""
    # What the runners it renders connect with: the runner user, its password from this Secret (key
    # ``runner-password``, in the Konnect's namespace) through a secretKeyRef, never a plain value.
    nats_runner_user: str = ""
    nats_runner_secret: str = ""
    # The api's credential broker (``.../api/v1/internal/credentials``) and the key its runner
    # tokens are made with (the api's KONNECTZ_CREDENTIALS_KEY). With a key, each Konnect gets a
    # Secret holding the token of that konnect only; runners never see the key.
    credentials_url: str = ""
    # The Service of the shared runner pool (the chart's ``runnerPool``): Konnects with
    # ``runnerMode: shared`` run there, their flows handed over through NATS. Empty: no pool, and
    # such Konnects fail with a message saying so.
    runner_pool_service: str = ""
    # How often flows of deleted pool Konnects are looked for in NATS and removed.
    runner_pool_sweep_seconds: float = Field(default=60.0, gt=0)
    credentials_key: str = Field(default="", repr=False)

    # Public base of webhook URLs, e.g. https://hooks.example.com. Empty: the URL of the
    # konnect's in-cluster Service (reachable only inside the cluster).
    webhook_base_url: str = ""
    # When set, each webhook konnect gets an Ingress routing ``/hooks/<token>`` on this host
    # to its runner Service.
    webhook_ingress_host: str = ""
    webhook_ingress_class: str = ""

    # Namespace(s) the operator watches; empty means all namespaces (needs a ClusterRole).
    namespace: str = ""

    # Kopf peering object shared by the replicas (KopfPeering, or ClusterKopfPeering when the
    # operator watches every namespace); empty runs standalone. The priority is random unless set.
    peering: str = ""
    peering_priority: int = Field(default=0, ge=0)
    peering_lifetime: int = Field(default=20, ge=10, le=600)

    # Watch-stream timeouts (seconds): without them a silently dead watch stream is never noticed.
    watch_server_timeout: int = Field(default=300, ge=10)
    watch_client_timeout: int = Field(default=330, ge=10)
    watch_connect_timeout: int = Field(default=30, ge=1)
    liveness_port: int = Field(default=8080, ge=0, le=65535)

    @property
    def allowed_runner_images(self) -> frozenset[str]:
        """The images a Konnect may run: ``runner_image`` and the allow list ``runner_images``."""
        return frozenset({self.runner_image, *(i.strip() for i in self.runner_images.split(",") if i.strip())})

    @field_validator("webhook_base_url")
    @classmethod
    def _no_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @model_validator(mode="after")
    def _client_outlives_server(self) -> OperatorSettings:
        if self.watch_client_timeout <= self.watch_server_timeout:
            raise ValueError("watch_client_timeout must exceed watch_server_timeout (the server ends watches first)")
        return self
