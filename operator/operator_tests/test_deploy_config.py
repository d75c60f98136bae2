"""Consistency of the deployment files: CRD, chart, Dockerfiles and skaffold.yaml.

No cluster, helm or Docker is needed: these tests read the files and check that what one file
names exists in the other (images wired into chart values, Dockerfile sources present, CRD
copies identical, the Konnect the api writes accepted by the CRD schema).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from konnectz_operator.render import render_children
from konnectz_operator.validation import validate_konnect

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "konnectz"
CRD_FILE = REPO / "crds" / "konnects.konnectz.io.yaml"


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def _has_key(values: dict[str, Any], dotted: str) -> bool:
    node: Any = values
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


@pytest.fixture(scope="module")
def skaffold() -> dict[str, Any]:
    return _yaml(REPO / "skaffold.yaml")


@pytest.fixture(scope="module")
def values() -> dict[str, Any]:
    return _yaml(CHART / "values.yaml")


@pytest.fixture(scope="module")
def crd_schema() -> dict[str, Any]:
    (version,) = _yaml(CRD_FILE)["spec"]["versions"]
    return version["schema"]["openAPIV3Schema"]


# --------------------------------------------------------------------------- skaffold


def test_skaffold_builds_the_three_images_from_existing_dockerfiles(skaffold):
    assert skaffold["apiVersion"] == "skaffold/v4beta14"
    assert skaffold["kind"] == "Config"
    artifacts = {a["image"]: a for a in skaffold["build"]["artifacts"]}
    assert set(artifacts) == {"konnectz-api", "konnectz-runner", "konnectz-operator"}
    for image, artifact in artifacts.items():
        context = REPO / artifact["context"]
        dockerfile = context / artifact["docker"]["dockerfile"]
        assert dockerfile.is_file(), f"{image}: {dockerfile} missing"
        assert dockerfile.name == f"Dockerfile.{image.removeprefix('konnectz-')}"


def test_every_image_is_wired_into_existing_chart_values(skaffold, values):
    (release,) = skaffold["deploy"]["helm"]["releases"]
    assert (REPO / release["chartPath"] / "Chart.yaml").is_file()
    templates = release["setValueTemplates"]
    for artifact in skaffold["build"]["artifacts"]:
        var = re.sub(r"[-/.]", "_", artifact["image"])
        component = artifact["image"].removeprefix("konnectz-")
        assert templates[f"{component}.image.repository"] == f"{{{{.IMAGE_REPO_{var}}}}}"
        assert templates[f"{component}.image.tag"] == f"{{{{.IMAGE_TAG_{var}}}}}"
    for key in [*templates, *release.get("setValues", {})]:
        assert _has_key(values, key), f"skaffold sets {key}, which values.yaml does not have"


def test_kind_profile_patches_existing_values(skaffold, values):
    (kind,) = [p for p in skaffold["profiles"] if p["name"] == "kind"]
    assert kind["activation"] == [{"kubeContext": "kind-.*"}]
    assert kind["build"]["local"]["push"] is False
    prefix = "/deploy/helm/releases/0/setValues/"
    for patch in kind["patches"]:
        assert patch["path"].startswith(prefix)
        assert _has_key(values, patch["path"].removeprefix(prefix)), patch["path"]


# --------------------------------------------------------------------------- Dockerfiles


@pytest.mark.parametrize("name", ["api", "runner", "operator"])
def test_dockerfiles_copy_existing_sources_and_run_the_package(name):
    text = (REPO / "docker" / f"Dockerfile.{name}").read_text()
    # The bases are build arguments (make images passes local ones), Debian's slim images by default.
    assert re.search(r"^ARG PYTHON_BASE=python:3\.11-slim$", text, re.M)
    assert re.search(r"^FROM \$\{PYTHON_BASE\}$", text, re.M), "the image runs on PYTHON_BASE"
    copies = re.findall(r"^COPY (?!--from)(.+)$", text, re.M)
    assert copies
    for line in copies:
        *sources, _dest = line.split()
        for source in sources:
            # Sources of the web stage are relative to its WORKDIR-free context: the repo root.
            assert (REPO / source).exists(), f"Dockerfile.{name}: COPY {source} does not exist"
    # The stage the image's environment is built in (the catalogue stages sync the runner for the generator).
    build = text[text.index(" AS build\n") :]
    (package,) = set(re.findall(r"uv sync .*--package (\S+)", build))
    assert package == f"konnectz-{name}"
    member = REPO / name / "pyproject.toml"
    assert f'name = "konnectz-{name}"' in member.read_text()
    # Every workspace member's source it depends on is copied.
    assert f"COPY {name}/src {name}/src" in text
    # Every image carries the contracts; only the api also needs the runner, and the operator never.
    assert "COPY contracts/src contracts/src" in text
    assert "COPY contracts/pyproject.toml contracts/pyproject.toml" in text
    if name == "api":
        assert "COPY runner/src runner/src" in text
    if name == "operator":
        assert "runner/src" not in text
    cmd = re.search(r'^CMD \["python", "-m", "(\w+)"', text, re.M)
    assert cmd is not None
    assert (REPO / name / "src" / cmd.group(1) / "__main__.py").is_file()
    assert "USER 10001" in text
    assert (REPO / "docker" / f"Dockerfile.{name}.dockerignore").is_file()


def test_api_image_ships_the_built_spa():
    text = (REPO / "docker" / "Dockerfile.api").read_text()
    assert re.search(r"^ARG NODE_BASE=node:20", text, re.M) and "FROM ${NODE_BASE} AS web" in text
    assert "RUN npm run build" in text
    assert "COPY --from=web /src/web/dist /app/web/dist" in text
    assert "KONNECTZ_WEB_DIST=/app/web/dist" in text


# --------------------------------------------------------------------------- chart


def test_chart_crd_is_the_crd():
    assert (CHART / "crds" / CRD_FILE.name).read_text() == CRD_FILE.read_text()


def test_templates_only_reference_values_that_exist(values):
    referenced = set()
    for template in (CHART / "templates").glob("*"):
        referenced |= set(re.findall(r"\.Values\.([A-Za-z0-9_.]+)", template.read_text()))
    assert referenced, "no .Values references found"
    missing = sorted(ref for ref in referenced if not _has_key(values, ref.rstrip(".")))
    assert missing == []


def test_values_are_documented():
    assert "required" in (CHART / "templates" / "secrets.yaml").read_text()
    readme = (CHART / "README.md").read_text()
    for key in ("secrets.secretKey", "secrets.encryptionKey", "database.url", "nats.replicas"):
        assert key in readme


def test_operator_rbac_covers_what_the_operator_touches():
    rbac = [d for d in yaml.safe_load_all(_strip_template((CHART / "templates" / "operator.yaml").read_text())) if d]
    rules = [r for d in rbac if isinstance(d, dict) for r in d.get("rules") or []]
    granted = {
        (group, resource, verb)
        for r in rules
        for group in r["apiGroups"]
        for resource in r["resources"]
        for verb in r["verbs"]
    }
    needed = (
        [("konnectz.io", "konnects", v) for v in ("get", "list", "watch", "patch")]
        + [("konnectz.io", "konnects/status", "patch")]
        + [
            (group, resource, verb)
            for group, resource in (
                ("", "configmaps"),
                ("", "services"),
                ("apps", "deployments"),
                ("batch", "cronjobs"),
                ("networking.k8s.io", "ingresses"),
            )
            for verb in ("get", "create", "patch", "delete", "list", "watch")
        ]
        + [("", "events", "create"), ("apiextensions.k8s.io", "customresourcedefinitions", "list")]
    )
    assert [n for n in needed if n not in granted] == []


def _strip_template(text: str) -> str:
    """Template lines removed and expressions replaced, enough to read static RBAC rules as YAML."""
    lines = [line for line in text.splitlines() if not line.strip().startswith("{{")]
    return re.sub(r"\{\{[^}]*\}\}", "x", "\n".join(lines))


# --------------------------------------------------------------------------- CRD


def _validate(value: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """The subset of OpenAPI v3 the CRD uses (no CEL); returns the errors."""
    errors: list[str] = []
    kind = schema.get("type")
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int}
    if (kind and not isinstance(value, types[kind])) or (kind == "integer" and isinstance(value, bool)):
        return [f"{path}: expected {kind}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: {value} < {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        errors.append(f"{path}: {value} > {schema['maximum']}")
    if "minLength" in schema and len(value) < schema["minLength"]:
        errors.append(f"{path}: shorter than {schema['minLength']}")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        errors.append(f"{path}: longer than {schema['maxLength']}")
    if kind == "object":
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                errors.append(f"{path}.{name}: required")
        for name, item in value.items():
            if name in props:
                errors += _validate(item, props[name], f"{path}.{name}")
            elif props and not schema.get("x-kubernetes-preserve-unknown-fields"):
                errors.append(f"{path}.{name}: unknown field (the API server would prune it)")
    if kind == "array" and "items" in schema:
        for i, item in enumerate(value):
            errors += _validate(item, schema["items"], f"{path}[{i}]")
    return errors


def _walk(schema: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
    nodes = [(path, schema)]
    for name, prop in schema.get("properties", {}).items():
        nodes += _walk(prop, f"{path}.{name}")
    if "items" in schema:
        nodes += _walk(schema["items"], f"{path}[]")
    return nodes


def test_crd_names_and_status_subresource():
    crd = _yaml(CRD_FILE)
    spec = crd["spec"]
    assert crd["metadata"]["name"] == "konnects.konnectz.io"
    assert (spec["group"], spec["scope"]) == ("konnectz.io", "Namespaced")
    assert spec["names"]["kind"] == "Konnect"
    assert spec["names"]["plural"] == "konnects"
    assert spec["names"]["shortNames"] == ["kz"]
    (version,) = spec["versions"]
    assert version["name"] == "v1alpha1"
    assert version["served"] and version["storage"]
    assert version["subresources"] == {"status": {}}


def test_crd_schema_is_structural(crd_schema):
    for path, node in _walk(crd_schema):
        assert "type" in node or node.get("x-kubernetes-int-or-string"), f"{path or '<root>'} has no type"
        if "default" in node and "enum" in node:
            assert node["default"] in node["enum"], path
    status = crd_schema["properties"]["status"]
    assert status["x-kubernetes-preserve-unknown-fields"] is True  # Kopf writes its own fields there
    flow = crd_schema["properties"]["spec"]["properties"]["flow"]
    assert "x-kubernetes-preserve-unknown-fields" not in flow  # typed from FlowSpec, down to each step kind
    assert {"trigger", "steps"} <= set(flow["properties"])
    condition = status["properties"]["conditions"]["items"]
    assert set(condition["properties"]) == {
        "type",
        "status",
        "observedGeneration",
        "lastTransitionTime",
        "reason",
        "message",
    }
    assert status["properties"]["phase"]["enum"] == ["Pending", "Ready", "Paused", "Failed"]


def test_printer_columns_point_at_schema_fields(crd_schema):
    (version,) = _yaml(CRD_FILE)["spec"]["versions"]
    columns = version["additionalPrinterColumns"]
    names = [c["name"] for c in columns]
    assert {"Owner", "Trigger", "Phase", "Entrypoint", "Last-Run", "Outcome", "Age"} <= set(names)
    for column in columns:
        parts = column["jsonPath"].lstrip(".").split(".")
        if parts[0] == "metadata":
            continue
        node = crd_schema
        for part in parts:
            node = node["properties"][part]
        # Columns show observed state, or spec fields that identify the row (id, owner, trigger kind).
        assert parts[0] == "status" or column["jsonPath"] in (
            ".spec.konnectId",
            ".spec.ownerId",
            ".spec.trigger.kind",
        ), column


def test_the_konnect_the_api_publishes_is_accepted_by_crd_and_operator(crd_schema, flow, settings):
    from konnectz_api.services.deployer import konnect_resource
    from konnectz_contracts.spec import FlowSpec

    published = FlowSpec.model_validate(flow())
    resource = konnect_resource(published, "konnectz")

    assert _validate(resource, crd_schema) == []
    assert resource["apiVersion"] == "konnectz.io/v1alpha1"
    assert validate_konnect(resource, published.trigger.token) == published
    kinds = [c["kind"] for c in render_children(resource, settings)]
    assert kinds == ["ConfigMap", "Deployment", "Service"]


@pytest.mark.parametrize(
    ("mutate", "error"),
    [
        (lambda s: s.update(konnectId=0), ".spec.konnectId: 0 < 1"),
        (lambda s: s["trigger"].pop("kind"), ".spec.trigger.kind: required"),
        (lambda s: s.update(runnerMode="elsewhere"), ".spec.runnerMode"),
        (lambda s: s.update(paused="yes"), ".spec.paused: expected boolean"),
        (lambda s: s.update(replicas=50), ".spec.replicas: 50 > 20"),
        (lambda s: s.update(color="red"), ".spec.color: unknown field"),
    ],
)
def test_the_schema_rejects_invalid_specs(crd_schema, konnect, mutate, error):
    k = konnect()
    mutate(k["spec"])
    errors = _validate(k, crd_schema)
    assert any(e.startswith(error) for e in errors), errors


def test_run_settings_reach_the_cluster_without_nulls(crd_schema, flow):
    """Run control set in part (a limit, no deadline, no alert) is a valid Konnect and comes back whole."""
    from konnectz_api.services.deployer import konnect_resource
    from konnectz_contracts.spec import FlowSpec

    published = FlowSpec.model_validate({**flow(), "run_control": {"max_concurrency": 1}})
    resource = konnect_resource(published, "konnectz")

    assert resource["spec"]["flow"]["run_control"] == {"max_concurrency": 1}
    assert _validate(resource, crd_schema) == []
    assert validate_konnect(resource, published.trigger.token) == published
