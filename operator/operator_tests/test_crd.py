"""The CRD generated from konnectz_contracts.resource: structural, typed down to each kind, current."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, Field

from konnectz_api.services.deployer import konnect_resource
from konnectz_contracts.resource import KonnectSpec, runner_flow, token_secret
from konnectz_contracts.spec import ApiCallStep, FlowSpec, WebhookTrigger
from konnectz_operator.crd import konnect_crd, render_yaml, structural

REPO = Path(__file__).resolve().parents[2]


class _Sms(BaseModel):
    kind: Literal["sms"] = "sms"
    to: str
    text: str | None = None


class _Mail(BaseModel):
    kind: Literal["mail"] = "mail"
    to: str
    subject: str
    extra: dict[str, Any] = Field(default_factory=dict)


class _Holder(BaseModel):
    steps: list[Annotated[_Sms | _Mail, Field(discriminator="kind")]]


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    from konnectz_operator.crd import _resolve

    raw = model.model_json_schema()
    return structural(_resolve(raw, raw.get("$defs", {})))


def _walk(node: Any, path: str = "") -> list[str]:
    """Paths of schema nodes that are not structural (no type and no escape hatch)."""
    bad: list[str] = []
    if isinstance(node, dict):
        if "$ref" in node or "oneOf" in node or "anyOf" in node or "const" in node:
            bad.append(path or "/")
        for key in ("properties",):
            for name, child in (node.get(key) or {}).items():
                if not child.get("type") and not (
                    child.get("x-kubernetes-preserve-unknown-fields") or child.get("x-kubernetes-int-or-string")
                ):
                    bad.append(f"{path}.{name}")
                bad += _walk(child, f"{path}.{name}")
        if isinstance(node.get("items"), dict):
            bad += _walk(node["items"], f"{path}[]")
    return bad


def test_a_discriminated_union_becomes_one_object_with_a_rule_per_member() -> None:
    item = _schema(_Holder)["properties"]["steps"]["items"]
    assert item["type"] == "object"
    assert set(item["properties"]) == {"kind", "to", "text", "subject", "extra"}
    assert item["properties"]["kind"] == {"type": "string", "enum": ["sms", "mail"]}
    assert item["required"] == ["kind", "to"]
    assert item["x-kubernetes-validations"] == [
        {"rule": "self.kind != 'mail' || (has(self.subject))", "message": "mail needs subject"}
    ]
    assert item["properties"]["text"] == {"type": "string", "nullable": True}
    assert item["properties"]["extra"]["x-kubernetes-preserve-unknown-fields"] is True


def test_the_generated_crd_is_structural_and_typed_down_to_the_steps() -> None:
    crd = konnect_crd()
    (version,) = crd["spec"]["versions"]
    schema = version["schema"]["openAPIV3Schema"]
    assert _walk(schema) == []
    flow = schema["properties"]["spec"]["properties"]["flow"]
    assert "x-kubernetes-preserve-unknown-fields" not in flow
    step = flow["properties"]["steps"]["items"]
    assert step["properties"]["method"]["enum"] == ["GET", "POST", "PUT", "PATCH", "DELETE"]
    assert "kind" in step["properties"]
    assert [c["name"] for c in version["additionalPrinterColumns"]] == [
        "Konnect-ID", "Owner", "Trigger", "Phase", "Entrypoint", "Last-Run", "Outcome", "Runs-Today",
        "Failures-Today", "Age", "Last-Schedule", "Message", "Revision",
    ]  # fmt: skip


def test_the_committed_crd_files_are_current() -> None:
    text = render_yaml()
    for path in (REPO / "crds/konnects.konnectz.io.yaml", REPO / "charts/konnectz/crds/konnects.konnectz.io.yaml"):
        assert path.read_text() == text, f"{path} is stale: run make gen-crd"
    assert yaml.safe_load(text)["metadata"]["name"] == "konnects.konnectz.io"


def test_the_resource_the_api_writes_parses_as_the_spec_model() -> None:
    flow = FlowSpec(
        konnect_id=3,
        owner_id=4,
        name="Orders",
        trigger_id="node-1",
        trigger=WebhookTrigger(token="t" * 32),
        steps=[ApiCallStep(id="node-2", name="Call", url="https://example.com")],
    )
    resource = konnect_resource(flow, "konnectz", owner_email="ada@example.com")
    assert resource["metadata"]["name"] == "konnect-3"
    assert resource["metadata"]["annotations"] == {"konnectz.io/owner": "ada@example.com"}
    spec = KonnectSpec.model_validate(resource["spec"])
    assert spec.trigger.kind == "webhook"
    # The token is not in the spec: it is in the Secret the trigger names, and the runner's flow is
    # the spec's flow with the ids and that token put back.
    assert "t" * 32 not in json.dumps(resource)
    assert spec.trigger.tokenSecret == "konnect-3-trigger"
    assert "konnect_id" not in resource["spec"]["flow"] and "owner_id" not in resource["spec"]["flow"]
    assert FlowSpec.model_validate(runner_flow(resource["spec"], "t" * 32)) == flow
    secret = token_secret("konnect-3", "konnectz", "t" * 32, owner_uid="uid-1")
    assert base64.b64decode(secret["data"]["token"]).decode() == "t" * 32
    assert secret["metadata"]["ownerReferences"][0]["uid"] == "uid-1"
    assert "image" not in resource["spec"]


# `make gen-crd` / `make check-crd` with kopf (and the kubernetes client) not importable: the CRD comes
# from the pydantic models alone.
_WITHOUT_KOPF = """
import runpy, sys
sys.modules["kopf"] = None
sys.modules["kubernetes"] = None
sys.argv = ["konnectz_operator", "crd", "--check"]
try:
    runpy.run_module("konnectz_operator", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    sys.exit(exc.code)
"""


def test_the_crd_is_generated_and_checked_without_kopf() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_KOPF], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the Konnect CRD is up to date" in done.stdout
