"""A real Kubernetes control plane as plain processes, for tests and local use.

etcd + kube-apiserver + kube-controller-manager + kube-scheduler + kwok (one fake node),
all built from Go modules by ``tests/cluster/build`` and started here on free loopback ports.

Standard library only, so ``tests/cluster/up`` works with any Python 3.11+.

    handle = start(state_dir)      # returns when /readyz is ok and the node is Ready
    handle.kubeconfig              # admin kubeconfig (token user, CA from the apiserver cert dir)
    handle.stop()                  # or stop(state_dir); safe to call twice

CLI: ``python3 controlplane.py up|down|status``.

Environment:
    KONNECTZ_CLUSTER_DIR   state folder (default: <repo>/.konnectz/cluster)
    KONNECTZ_KUBECONFIG    kubeconfig written by ``up`` (default: <repo>/.konnectz/kubeconfig)
    KONNECTZ_K8S_BIN_DIR   use binaries from this folder instead of asking tests/cluster/build
    KONNECTZ_CLUSTER_NO_BUILD=1   never run the build (fail if binaries are missing)
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
BUILD_SCRIPT = HERE / "build"

NODE_NAME = "kwok-node-0"
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
# Order matters: started in this order, stopped in reverse.
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
REQUIRED_BINARIES = COMPONENTS  # + kubectl/helm, which the control plane itself does not run


class ClusterError(RuntimeError):
    """A prerequisite is missing or a component failed; the message says which."""


def default_state_dir() -> Path:
    return Path(os.environ.get("KONNECTZ_CLUSTER_DIR", REPO / ".konnectz" / "cluster"))


def default_kubeconfig() -> Path:
    return Path(os.environ.get("KONNECTZ_KUBECONFIG", REPO / ".konnectz" / "kubeconfig"))


# --------------------------------------------------------------------------- binaries


def bin_dir(build: bool = True) -> Path:
    """Folder with the built binaries; runs tests/cluster/build (a no-op when cached) if allowed."""
    override = os.environ.get("KONNECTZ_K8S_BIN_DIR")
    if override:
        d = Path(override)
    else:
        try:
            out = subprocess.run(
                ["bash", str(BUILD_SCRIPT), "--print-bin-dir"],
                check=True,
                capture_output=True,
                text=True,
            )
        except (OSError, subprocess.CalledProcessError) as exc:
            raise ClusterError(f"cannot run {BUILD_SCRIPT} --print-bin-dir: {exc}") from exc
        d = Path(out.stdout.strip())
    missing = [b for b in REQUIRED_BINARIES if not (d / b).is_file()]
    if missing and build and not override and os.environ.get("KONNECTZ_CLUSTER_NO_BUILD") != "1":
        print(
            f"[controlplane] binaries missing in {d} ({', '.join(missing)}); "
            f"running {BUILD_SCRIPT} (10-25 min when cold)",
            file=sys.stderr,
            flush=True,
        )
        rc = subprocess.run(["bash", str(BUILD_SCRIPT)]).returncode
        if rc != 0:
            raise ClusterError(f"{BUILD_SCRIPT} failed (exit {rc}); see its output above")
        missing = [b for b in REQUIRED_BINARIES if not (d / b).is_file()]
    if missing:
        raise ClusterError(
            f"control-plane binaries missing in {d}: {', '.join(missing)}. "
            f"Run tests/cluster/build (or `make cluster-build`) first."
        )
    stages = d.parent / "share" / "kwok-stages.yaml"
    if not stages.is_file():
        raise ClusterError(f"kwok stage file {stages} missing; re-run tests/cluster/build")
    return d


# --------------------------------------------------------------------------- helpers


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child of ours counts as dead
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tail(path: Path, n: int = 25) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(lines[-n:])


def _gen_sa_key(path: Path) -> None:
    if shutil.which("openssl"):
        subprocess.run(["openssl", "genrsa", "-out", str(path), "2048"], check=True, capture_output=True)
        return
    try:  # optional fallback
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
    except ImportError as exc:
        raise ClusterError(
            "need `openssl` (apt-get install openssl) to create the service-account signing key"
        ) from exc
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
        )
    )


# --------------------------------------------------------------------------- handle


@dataclass
class ControlPlane:
    state_dir: Path
    kubeconfig: Path
    server: str = ""
    token: str = ""
    ca_file: Path | None = None
    bin_dir: Path | None = None
    node_name: str = NODE_NAME
    pids: dict[str, int] = field(default_factory=dict)

    def stop(self) -> None:
        stop(self.state_dir)

    def rss_kib(self) -> dict[str, int]:
        return {name: _rss_kib(pid) for name, pid in self.pids.items()}

    # small HTTP client (stdlib) used for readiness checks ---------------------------
    def _ssl(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)
        return ctx

    def request(
        self, path: str, method: str = "GET", body: dict | None = None, timeout: float = 5.0
    ) -> tuple[int, bytes]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, context=self._ssl(), timeout=timeout) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def to_json(self) -> dict:
        return {
            "state_dir": str(self.state_dir),
            "kubeconfig": str(self.kubeconfig),
            "server": self.server,
            "token": self.token,
            "ca_file": str(self.ca_file) if self.ca_file else None,
            "bin_dir": str(self.bin_dir) if self.bin_dir else None,
            "node_name": self.node_name,
            "pids": self.pids,
        }

    @classmethod
    def from_json(cls, d: dict) -> ControlPlane:
        return cls(
            state_dir=Path(d["state_dir"]),
            kubeconfig=Path(d["kubeconfig"]),
            server=d["server"],
            token=d["token"],
            ca_file=Path(d["ca_file"]) if d.get("ca_file") else None,
            bin_dir=Path(d["bin_dir"]) if d.get("bin_dir") else None,
            node_name=d.get("node_name", NODE_NAME),
            pids=dict(d.get("pids", {})),
        )


def _write_kubeconfig(path: Path, server: str, ca_file: Path, token: str) -> None:
    ca_data = __import__("base64").b64encode(ca_file.read_bytes()).decode()
    text = f"""apiVersion: v1
kind: Config
clusters:
- name: konnectz
  cluster:
    server: {server}
    certificate-authority-data: {ca_data}
users:
- name: konnectz-admin
  user:
    token: {token}
contexts:
- name: konnectz
  context:
    cluster: konnectz
    user: konnectz-admin
    namespace: default
current-context: konnectz
"""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.chmod(tmp, 0o600)
    tmp.replace(path)


# --------------------------------------------------------------------------- start / stop


def _spawn(name: str, argv: list[str], state: Path) -> int:
    logs = state / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / f"{name}.log", "ab") as log:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True
        )
    pids = state / "pids"
    pids.mkdir(parents=True, exist_ok=True)
    (pids / f"{name}.pid").write_text(str(proc.pid))
    return proc.pid


def _wait(what: str, check, timeout: float, state: Path, pids: dict[str, int], interval: float = 0.1):
    deadline = time.monotonic() + timeout
    last_err: object = None
    while time.monotonic() < deadline:
        for name, pid in pids.items():
            if not _pid_alive(pid):
                raise ClusterError(
                    f"{name} exited while waiting for {what}; last log lines "
                    f"({state / 'logs' / (name + '.log')}):\n{_tail(state / 'logs' / (name + '.log'))}"
                )
        try:
            result = check()
            if result:
                return result
        except Exception as exc:
            last_err = exc
        time.sleep(interval)
    raise ClusterError(f"timed out after {timeout:.0f}s waiting for {what} (last error: {last_err})")


def _http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as resp:
        return resp.status == 200


def start(
    state_dir: Path | str | None = None,
    kubeconfig: Path | str | None = None,
    timeout: float = 90.0,
    build: bool = True,
    *,
    kwok: bool = True,
    address: str = "127.0.0.1",
) -> ControlPlane:
    """Start a fresh control plane (wiping state_dir's previous data). Returns when ready.

    ``kwok=False``: no kwok and no fake node (a real node joins it: tests/cluster/node.py).
    ``address``: where the API server listens and what it advertises; another address than
    127.0.0.1 (the host end of a real node's link) also gets the ``kubernetes`` Service's
    endpoints reconciled, so that pods reach the API server in-cluster.
    """
    for attempt in range(3):
        try:
            return _start_once(state_dir, kubeconfig, timeout, build, kwok=kwok, address=address)
        except ClusterError as exc:
            # a free port taken by someone else between choosing and binding it: try new ports
            if "address already in use" not in str(exc) or attempt == 2:
                raise
            print(f"[controlplane] port clash, retrying: {str(exc).splitlines()[0]}", file=sys.stderr)
    raise AssertionError("unreachable")


def _start_once(
    state_dir: Path | str | None,
    kubeconfig: Path | str | None,
    timeout: float,
    build: bool,
    *,
    kwok: bool = True,
    address: str = "127.0.0.1",
) -> ControlPlane:
    state = Path(state_dir) if state_dir else default_state_dir()
    state = state.resolve()
    kcfg = Path(kubeconfig).resolve() if kubeconfig else state / "kubeconfig"
    bins = bin_dir(build=build)
    stop(state, quiet=True)  # leftovers of a crashed run
    for sub in ("etcd", "pki", "logs", "pids"):
        shutil.rmtree(state / sub, ignore_errors=True)
    state.mkdir(parents=True, exist_ok=True)
    pki = state / "pki"
    pki.mkdir()
    (state / "logs").mkdir()

    token = secrets.token_hex(24)
    (pki / "tokens.csv").write_text(f'{token},admin,admin-uid,"system:masters"\n')
    os.chmod(pki / "tokens.csv", 0o600)
    sa_key = pki / "sa.key"
    _gen_sa_key(sa_key)

    p_etcd, p_peer, p_api, p_kcm, p_sched = (free_port() for _ in range(5))
    if address != "127.0.0.1":
        p_api = _free_port_on(address)
    server = f"https://{address}:{p_api}"
    cp = ControlPlane(
        state_dir=state, kubeconfig=kcfg, server=server, token=token, ca_file=pki / "apiserver.crt", bin_dir=bins
    )
    t0 = time.monotonic()
    try:
        etcd_url = f"http://127.0.0.1:{p_etcd}"
        peer_url = f"http://127.0.0.1:{p_peer}"
        cp.pids["etcd"] = _spawn(
            "etcd",
            [
                str(bins / "etcd"),
                "--name=konnectz",
                f"--data-dir={state / 'etcd'}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=konnectz={peer_url}",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
            state,
        )
        _wait("etcd /health", lambda: _http_ok(etcd_url + "/health"), 30, state, cp.pids)

        cp.pids["kube-apiserver"] = _spawn(
            "kube-apiserver",
            [
                str(bins / "kube-apiserver"),
                f"--etcd-servers={etcd_url}",
                f"--bind-address={address}",
                f"--secure-port={p_api}",
                f"--advertise-address={address}",
                # on loopback the `kubernetes` Service's endpoint would be of no use (and is invalid)
                f"--endpoint-reconciler-type={'none' if address == '127.0.0.1' else 'lease'}",
                # a real node's kubelet (logs, exec) is reached at its InternalIP, not its name
                "--kubelet-preferred-address-types=InternalIP,Hostname",
                f"--cert-dir={pki}",
                f"--token-auth-file={pki / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={sa_key}",
                f"--service-account-signing-key-file={sa_key}",
                "--service-cluster-ip-range=10.0.0.0/16",
                "--allow-privileged=true",
                "--profiling=false",
                "-v=1",
            ],
            state,
        )
        _wait(
            "kube-apiserver serving certificate",
            lambda: cp.ca_file.is_file() and cp.ca_file.stat().st_size > 0,
            60,
            state,
            cp.pids,
        )
        _wait("kube-apiserver /readyz", lambda: cp.request("/readyz")[0] == 200, timeout, state, cp.pids, interval=0.2)
        _write_kubeconfig(kcfg, server, cp.ca_file, token)
        if kcfg != state / "kubeconfig":
            _write_kubeconfig(state / "kubeconfig", server, cp.ca_file, token)

        cp.pids["kube-controller-manager"] = _spawn(
            "kube-controller-manager",
            [
                str(bins / "kube-controller-manager"),
                f"--kubeconfig={kcfg}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={p_kcm}",
                f"--service-account-private-key-file={sa_key}",
                f"--root-ca-file={cp.ca_file}",
                "--use-service-account-credentials=false",
                "--controllers=*",
                "--concurrent-gc-syncs=5",
                # kwok's node-heartbeat stage refreshes the node every 20-45 s; the default 50 s
                # grace is too tight on a busy 2-core machine (the node would flap NotReady).
                "--node-monitor-grace-period=2m",
                "--profiling=false",
                "-v=1",
            ],
            state,
        )
        cp.pids["kube-scheduler"] = _spawn(
            "kube-scheduler",
            [
                str(bins / "kube-scheduler"),
                f"--kubeconfig={kcfg}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={p_sched}",
                "--profiling=false",
                "-v=1",
            ],
            state,
        )
        if not kwok:
            cp.node_name = ""
            _wait_default_sa(cp, timeout, state)
            raise _Started
        cp.pids["kwok"] = _spawn(
            "kwok",
            [
                str(bins / "kwok"),
                f"--kubeconfig={kcfg}",
                f"--config={bins.parent / 'share' / 'kwok-stages.yaml'}",
                "--manage-all-nodes=false",
                f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake",
                "--node-ip=127.0.0.1",
                "--cidr=10.244.0.0/16",
            ],
            state,
        )

        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": NODE_NAME,
                "annotations": {KWOK_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"},
                "labels": {
                    "kubernetes.io/hostname": NODE_NAME,
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    "kubernetes.io/role": "agent",
                    "node-role.kubernetes.io/agent": "",
                    "type": "kwok",
                },
            },
            "status": {
                "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
                "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            },
        }
        code, body = cp.request("/api/v1/nodes", "POST", node)
        if code not in (200, 201, 409):
            raise ClusterError(f"creating node {NODE_NAME} failed: HTTP {code} {body[:500]!r}")

        def node_ready() -> bool:
            code, body = cp.request(f"/api/v1/nodes/{NODE_NAME}")
            if code != 200:
                return False
            conds = json.loads(body).get("status", {}).get("conditions") or []
            return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)

        _wait(f"node {NODE_NAME} Ready (kwok)", node_ready, timeout, state, cp.pids, 0.2)

        _wait_default_sa(cp, timeout, state)
    except _Started:
        pass
    except BaseException:
        stop(state, quiet=True)
        raise
    (state / "cluster.json").write_text(json.dumps(cp.to_json(), indent=2))
    (state / "startup-seconds").write_text(f"{time.monotonic() - t0:.2f}\n")
    return cp


class _Started(Exception):
    """The control plane without kwok is complete (leaves the start sequence early)."""


def _wait_default_sa(cp: ControlPlane, timeout: float, state: Path) -> None:
    def default_sa() -> bool:  # pods can be created only once this exists
        return cp.request("/api/v1/namespaces/default/serviceaccounts/default")[0] == 200

    _wait("ServiceAccount default/default (controller-manager)", default_sa, timeout, state, cp.pids, 0.2)


def _free_port_on(address: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def load(state_dir: Path | str | None = None) -> ControlPlane | None:
    """The handle of a control plane started earlier in state_dir, if its record exists."""
    state = Path(state_dir) if state_dir else default_state_dir()
    f = state / "cluster.json"
    if not f.is_file():
        return None
    return ControlPlane.from_json(json.loads(f.read_text()))


def is_running(cp: ControlPlane) -> bool:
    if not all(_pid_alive(cp.pids.get(n, -1)) for n in COMPONENTS if n != "kwok" or cp.node_name):
        return False
    try:
        return cp.request("/readyz", timeout=3)[0] == 200
    except OSError:
        return False


def stop(state_dir: Path | str | None = None, quiet: bool = False, grace: float = 10.0) -> list[str]:
    """Stop every process recorded in state_dir/pids (reverse start order). Safe to repeat."""
    state = Path(state_dir) if state_dir else default_state_dir()
    piddir = state / "pids"
    stopped: list[str] = []
    if not piddir.is_dir():
        return stopped
    order = list(reversed(COMPONENTS)) + sorted(p.stem for p in piddir.glob("*.pid") if p.stem not in COMPONENTS)
    for name in order:
        pf = piddir / f"{name}.pid"
        if not pf.is_file():
            continue
        try:
            pid = int(pf.read_text().strip())
        except ValueError:
            pf.unlink(missing_ok=True)
            continue
        cmd = _cmdline(pid)
        # only signal the process if it is still the binary we started (pids get reused)
        if _pid_alive(pid) and cmd and Path(cmd[0]).name == name:
            try:
                os.killpg(pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + grace
            while _pid_alive(pid) and time.monotonic() < deadline:
                _reap(pid)
                time.sleep(0.05)
            if _pid_alive(pid):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            _reap(pid)
            stopped.append(name)
        pf.unlink(missing_ok=True)
    if not quiet:
        print(f"[controlplane] stopped: {', '.join(stopped) or 'nothing was running'}", file=sys.stderr)
    return stopped


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


# --------------------------------------------------------------------------- CLI


def _main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="controlplane", description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["up", "down", "status"])
    ap.add_argument("--state-dir", default=None, help="default: $KONNECTZ_CLUSTER_DIR or <repo>/.konnectz/cluster")
    ap.add_argument("--kubeconfig", default=None, help="default: $KONNECTZ_KUBECONFIG or <repo>/.konnectz/kubeconfig")
    args = ap.parse_args(argv)
    state = Path(args.state_dir) if args.state_dir else default_state_dir()
    kcfg = Path(args.kubeconfig) if args.kubeconfig else default_kubeconfig()
    try:
        if args.command == "up":
            cp = load(state)
            if cp is not None and is_running(cp):
                if cp.kubeconfig != kcfg.resolve():
                    _write_kubeconfig(kcfg, cp.server, cp.ca_file, cp.token)
                print(f"[controlplane] already running at {cp.server}; kubeconfig: {kcfg}", file=sys.stderr)
                return 0
            t0 = time.monotonic()
            cp = start(state, kcfg)
            rss = sum(cp.rss_kib().values())
            print(
                f"[controlplane] up in {time.monotonic() - t0:.1f}s at {cp.server} "
                f"(node {cp.node_name} Ready; RSS {rss / 1024:.0f} MiB)",
                file=sys.stderr,
            )
            print(f"export KUBECONFIG={kcfg}")
            return 0
        if args.command == "down":
            stop(state)
            return 0
        cp = load(state)
        if cp is None:
            print("not started", file=sys.stderr)
            return 1
        running = is_running(cp)
        print(
            json.dumps(
                {
                    "running": running,
                    "server": cp.server,
                    "kubeconfig": str(cp.kubeconfig),
                    "processes": {
                        n: {"pid": p, "alive": _pid_alive(p), "rss_mib": round(_rss_kib(p) / 1024, 1)}
                        for n, p in cp.pids.items()
                    },
                    "rss_total_mib": round(sum(cp.rss_kib().values()) / 1024, 1),
                },
                indent=2,
            )
        )
        return 0 if running else 1
    except ClusterError as exc:
        print(f"[controlplane] ERROR: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(_main())
