"""A real Kubernetes node whose pods run, beside a control plane of its own.

containerd + runc + the CNI plugins (Debian's packages) and the kubelet + kube-proxy (built from
the same Go modules as the control plane by ``tests/cluster/build``), all inside a network
namespace of their own, joined to a control plane (``controlplane.py``, without kwok) that
listens on the host end of the link into that namespace::

    host netns                          netns konnectz-node-<i>
    kube-apiserver on 10.250.<i>.1 ---- eth0 10.250.<i>.2 (the node's InternalIP)
                                        containerd, kubelet, kube-proxy (iptables)
                                        bridge cni0 10.244.0.1/24 -- veth -- pods 10.244.0.x
                                        Services 10.0.0.0/16 (kube-proxy's DNAT)

The namespace is what keeps it apart from the machine and from other nodes started at the same
time (another worktree, another pytest session): kube-proxy's and the CNI plugins' iptables
chains, the bridge, the routes and the sysctls live in it and go with it. Nothing in it routes
anywhere but to the host's end of the link: a pod reaches the API server and nothing else.

Isolation from the kwok tests: the node joins a control plane of its own, never the one the
kwok tests share; it also registers with the taint ``konnectz.io/real-node=true:NoSchedule`` so
that a pod lands on it only when it says it may (``TOLERATION``).

    node = up(state_dir)     # returns when the node is Ready; node.kubeconfig, node.exec(...)
    node.load_image(...)     # an OCI archive into the node's containerd
    down(state_dir)          # stops everything; leaves no process, mount, netns, veth or cgroup

CLI: ``python3 node.py up|down|status`` (tests/cluster/node-up, node-down).

Environment:
    KONNECTZ_NODE_DIR      state folder (default: <repo>/.konnectz/realnode)
    KONNECTZ_NODE_CGROUP   "v1" or "v2" to override the detection (default: what /sys/fs/cgroup is)
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import importlib.util
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def _load_controlplane():
    name = "konnectz_test_controlplane"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / "controlplane.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


controlplane = _load_controlplane()
ClusterError = controlplane.ClusterError

TAINT_KEY = "konnectz.io/real-node"
TAINT = {"key": TAINT_KEY, "value": "true", "effect": "NoSchedule"}
TOLERATION = {"key": TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}
NODE_LABEL = "konnectz.io/real-node"
POD_CIDR = "10.244.0.0/24"
POD_GATEWAY = "10.244.0.1"
SERVICE_CIDR = "10.0.0.0/16"  # the control plane's --service-cluster-ip-range
BRIDGE = "cni0"
# The images the node always has: the pods' sandbox ("pause") and a small image for tests, both
# from Debian's busybox-static (one static binary), made here as OCI archives.
PAUSE_IMAGE = "konnectz.local/pause:1"
BUSYBOX_IMAGE = "konnectz.local/busybox:1"
CNI_DIR = Path("/usr/lib/cni")
CACHE = Path(os.environ.get("KONNECTZ_CACHE", Path.home() / ".cache" / "konnectz"))
# Started in this order, stopped in reverse.
COMPONENTS = ("containerd", "kubelet", "kube-proxy", "coredns")
CLUSTER_DOMAIN = "cluster.local"
MAX_NODES = 64
STORAGE_CLASS = "konnectz-local"
VOLUMES = 6  # local PersistentVolumes made at start (NATS x3, PostgreSQL, spares)
VOLUME_SIZE = "20Gi"  # what a claim may ask for: the chart's NATS asks 10Gi, PostgreSQL 8Gi


def default_state_dir() -> Path:
    return Path(os.environ.get("KONNECTZ_NODE_DIR", REPO / ".konnectz" / "realnode"))


def _log(msg: str) -> None:
    print(f"[node] {msg}", file=sys.stderr, flush=True)


def _run(*args: str, check: bool = True, timeout: float = 60, **kw) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, **kw)
    if check and proc.returncode != 0:
        raise ClusterError(f"{' '.join(args)} failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()}")
    return proc


# --------------------------------------------------------------------------- prerequisites


def missing_prerequisites(bins: Path | None = None) -> list[str]:
    """What this machine lacks for a real node, one short item each (empty: nothing)."""
    missing: list[str] = []
    if os.geteuid() != 0:
        return ["root (namespaces, mounts, cgroups and iptables need it)"]
    for cmd in ("containerd", "containerd-shim-runc-v2", "ctr", "runc", "iptables", "ip", "nsenter", "mount"):
        if shutil.which(cmd) is None:
            missing.append(f"`{cmd}` (make node-tools)")
    for plugin in ("bridge", "host-local", "loopback", "portmap"):
        if not (CNI_DIR / plugin).is_file():
            missing.append(f"CNI plugin {CNI_DIR / plugin} (make node-tools)")
    if not _busybox():
        missing.append("/bin/busybox from busybox-static (make node-tools)")
    if bins is not None:
        for b in ("kubelet", "kube-proxy", "coredns"):
            if not (bins / b).is_file():
                missing.append(f"{bins / b} (tests/cluster/build)")
    if cgroup_version() == 0:
        missing.append("a cgroup hierarchy under /sys/fs/cgroup (cgroup v1 controllers or cgroup2 with controllers)")
    if not Path("/proc/self/ns/net").exists():
        missing.append("network namespaces (/proc/self/ns/net)")
    return missing


def _busybox() -> str | None:
    for cand in ("/bin/busybox", "/usr/bin/busybox"):
        p = Path(cand)
        if p.is_file():
            # the image needs a static binary (nothing else is in it)
            head = p.read_bytes()[:4096]
            if b"/lib64/ld-linux" not in head and b"/lib/ld-linux" not in head:
                return cand
    return None


def cgroup_version() -> int:
    """2 when /sys/fs/cgroup is a cgroup2 mount (the unified hierarchy), 1 with v1 controllers, 0 none."""
    forced = os.environ.get("KONNECTZ_NODE_CGROUP")
    if forced in ("v1", "v2"):
        return int(forced[1])
    root = Path("/sys/fs/cgroup")
    if (root / "cgroup.controllers").is_file():
        return 2
    if (root / "memory").is_dir() and (root / "cpu").is_dir():
        return 1
    return 0


def _hierarchies() -> list[Path]:
    """Every mounted cgroup hierarchy: with v1 the controllers' (cpu, memory, pids, ...), the named
    systemd one and the unified one beside them (/sys/fs/cgroup/unified, where runc also writes)."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fstype = right.split()[0] if right else ""
        if fstype in ("cgroup", "cgroup2"):
            found.append(Path(left.split()[4]))
    return found


# --------------------------------------------------------------------------- the node handle


@dataclass
class Node:
    state_dir: Path
    index: int
    name: str
    netns: str
    host_ip: str
    node_ip: str
    kubeconfig: Path
    cgroup_root: str
    bin_dir: Path | None = None
    pids: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def sock(self) -> Path:
        return self.state_dir / "containerd" / "containerd.sock"

    @property
    def logs(self) -> Path:
        return self.state_dir / "logs"

    def control_plane(self):
        return controlplane.load(self.state_dir / "cluster")

    def exec(self, *argv: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run a command in the node's network namespace (where pod and Service IPs are routed)."""
        return _run("nsenter", f"--net=/run/netns/{self.netns}", "--", *argv, timeout=timeout, check=check)

    def ctr(self, *args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess[str]:
        return _run("ctr", "--address", str(self.sock), "--namespace", "k8s.io", *args, timeout=timeout, check=check)

    def load_image(self, archive: Path, name: str | None = None) -> None:
        """Import an OCI archive (e.g. from ``buildah push IMAGE oci-archive:FILE``) into containerd.

        ``name``: the image's name. An archive whose manifest is annotated with that name (buildah's are) is
        imported as it is, as `docker/load-images` does; only one carrying another name (or just a tag) gets
        ``--index-name`` (ctr then writes an index of its own: that import failed now and then on a loaded
        machine with "content digest sha256:<not in the archive>: not found", three times in a row once)."""
        args = ["images", "import"]
        if name and name not in _archive_names(archive):
            args += ["--index-name", name]
        for attempt in range(4):
            try:
                self.ctr(*args, str(archive))
                break
            except ClusterError as exc:
                # "content digest sha256:...: not found" (an import racing containerd's content garbage
                # collection); the next import of the same archive went through
                if "not found" not in str(exc) or attempt == 3:
                    raise
                time.sleep(1 + attempt)
        if name and name not in self.images():
            raise ClusterError(f"{archive} imported, but containerd has no image {name}: {self.images()}")

    def images(self) -> list[str]:
        return [line for line in self.ctr("images", "ls", "-q").stdout.splitlines() if line]

    def log_tails(self, n: int = 40) -> str:
        """The last lines of every component's log, for a failing test's report."""
        parts = []
        for path in sorted(self.logs.glob("*.log")) + sorted((self.state_dir / "cluster" / "logs").glob("*.log")):
            parts.append(f"----- {path} (last {n} lines)\n{controlplane._tail(path, n)}")
        return "\n".join(parts)

    def to_json(self) -> dict:
        return {
            "state_dir": str(self.state_dir),
            "index": self.index,
            "name": self.name,
            "netns": self.netns,
            "host_ip": self.host_ip,
            "node_ip": self.node_ip,
            "kubeconfig": str(self.kubeconfig),
            "cgroup_root": self.cgroup_root,
            "bin_dir": str(self.bin_dir) if self.bin_dir else None,
            "pids": self.pids,
            "timings": self.timings,
        }

    @classmethod
    def from_json(cls, d: dict) -> Node:
        return cls(
            state_dir=Path(d["state_dir"]),
            index=d["index"],
            name=d["name"],
            netns=d["netns"],
            host_ip=d["host_ip"],
            node_ip=d["node_ip"],
            kubeconfig=Path(d["kubeconfig"]),
            cgroup_root=d["cgroup_root"],
            bin_dir=Path(d["bin_dir"]) if d.get("bin_dir") else None,
            pids=dict(d.get("pids", {})),
            timings=dict(d.get("timings", {})),
        )


def load(state_dir: Path | str | None = None) -> Node | None:
    state = Path(state_dir) if state_dir else default_state_dir()
    f = state / "node.json"
    if not f.is_file():
        return None
    return Node.from_json(json.loads(f.read_text()))


# --------------------------------------------------------------------------- network


def _claim_netns() -> int:
    """An index no other node on this machine uses: `ip netns add` is the atomic claim."""
    for i in range(MAX_NODES):
        if _run("ip", "netns", "add", f"konnectz-node-{i}", check=False).returncode == 0:
            return i
    raise ClusterError(f"{MAX_NODES} network namespaces konnectz-node-* exist already (`ip netns list`)")


def _setup_network(node: Node) -> None:
    ns = node.netns
    host_if, node_if = f"kzh{node.index}", f"kzn{node.index}"
    _run("ip", "link", "del", host_if, check=False)
    try:
        _run("ip", "link", "add", host_if, "type", "veth", "peer", "name", node_if)
    except ClusterError as exc:
        raise ClusterError(f"cannot create a veth pair (is veth in the kernel?): {exc}") from exc
    _run("ip", "link", "set", node_if, "netns", ns)
    _run("ip", "addr", "add", f"{node.host_ip}/30", "dev", host_if)
    _run("ip", "link", "set", host_if, "up")

    def nsip(*args: str) -> None:
        _run("ip", "-n", ns, *args)

    nsip("link", "set", "lo", "up")
    nsip("link", "set", node_if, "name", "eth0")
    nsip("addr", "add", f"{node.node_ip}/30", "dev", "eth0")
    nsip("link", "set", "eth0", "up")
    # The pods' bridge, made here (the CNI bridge plugin takes it as it finds it) so that the
    # Service range can be routed to it: a Service IP kube-proxy has not translated (yet) goes
    # nowhere instead of to a default route. There is no default route in the namespace.
    try:
        nsip("link", "add", BRIDGE, "type", "bridge")
    except ClusterError as exc:
        raise ClusterError(f"cannot create a bridge (is bridge support in the kernel?): {exc}") from exc
    nsip("addr", "add", f"{POD_GATEWAY}/24", "dev", BRIDGE)
    nsip("link", "set", BRIDGE, "up")
    nsip("route", "add", SERVICE_CIDR, "dev", BRIDGE)
    for key, value in (
        ("net/ipv4/ip_forward", "1"),
        ("net/bridge/bridge-nf-call-iptables", "1"),  # bridged pod-to-pod traffic through kube-proxy's rules
        ("net/ipv4/conf/all/route_localnet", "1"),
    ):
        node.exec("sh", "-c", f"[ ! -e /proc/sys/{key} ] || echo {value} > /proc/sys/{key}")


def _teardown_network(netns: str, index: int) -> None:
    _run("ip", "netns", "del", netns, check=False)
    _run("ip", "link", "del", f"kzh{index}", check=False)


# --------------------------------------------------------------------------- images


def _tar_add(tar: tarfile.TarFile, name: str, *, data: bytes | None = None, mode: int = 0o644, **kw) -> None:
    info = tarfile.TarInfo(name)
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mode = mode
    for k, v in kw.items():
        setattr(info, k, v)
    if data is not None:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    else:
        tar.addfile(info)


BUSYBOX_APPLETS = ("sh", "httpd", "wget", "sleep", "cat", "echo", "ls", "nc", "env", "hostname", "true", "false",
                   "mkdir", "ps", "kill", "id", "grep", "nslookup", "timeout", "head", "tail", "sed", "tr", "wc",
                   "date")  # fmt: skip


def _archive_names(archive: Path) -> set[str]:
    """The names an OCI archive's index gives its manifests (``org.opencontainers.image.ref.name``)."""
    try:
        with tarfile.open(archive) as tar:
            member = tar.extractfile("index.json")
            index = json.loads(member.read()) if member else {}
    except (OSError, KeyError, tarfile.TarError, ValueError):
        return set()
    return {
        str(m["annotations"]["org.opencontainers.image.ref.name"])
        for m in index.get("manifests") or []
        if (m.get("annotations") or {}).get("org.opencontainers.image.ref.name")
    }


def busybox_archive(cache: Path | None = None) -> Path:
    """An OCI archive with two images from Debian's static busybox: BUSYBOX_IMAGE (``sh``; httpd,
    wget, nc, ...; a page in /www) and PAUSE_IMAGE (sleeps: the pods' sandbox). Cached by content."""
    bb = _busybox()
    if bb is None:
        raise ClusterError("/bin/busybox (static) missing: make node-tools (Debian's busybox-static)")
    binary = Path(bb).read_bytes()
    out_dir = (cache or CACHE) / "node"
    out_dir.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(binary + "\0".join(BUSYBOX_APPLETS).encode() + b"v1").hexdigest()[:16]
    out = out_dir / f"busybox-{key}.oci.tar"
    if out.is_file():
        return out

    layer_buf = io.BytesIO()
    with tarfile.open(fileobj=layer_buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for d in ("bin", "www", "tmp", "etc", "proc", "sys", "dev"):
            _tar_add(tar, d, type=tarfile.DIRTYPE, mode=0o1777 if d == "tmp" else 0o755)
        _tar_add(tar, "bin/busybox", data=binary, mode=0o755)
        for applet in BUSYBOX_APPLETS:
            _tar_add(tar, f"bin/{applet}", type=tarfile.SYMTYPE, linkname="busybox", mode=0o777)
        _tar_add(tar, "www/index.html", data=b"konnectz real node\n")
        _tar_add(tar, "etc/passwd", data=b"root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n")
        _tar_add(tar, "etc/group", data=b"root:x:0:\nnogroup:x:65534:\n")
    layer = layer_buf.getvalue()
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    gz = gzip.compress(layer, mtime=0)
    blobs: dict[str, bytes] = {}

    def blob(data: bytes) -> tuple[str, int]:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        return digest, len(data)

    layer_digest, layer_size = blob(gz)
    manifests = []
    for name, cfg in (
        (BUSYBOX_IMAGE, {"Cmd": ["sh"], "WorkingDir": "/"}),
        (PAUSE_IMAGE, {"Entrypoint": ["/bin/sleep", "2147483647"], "WorkingDir": "/"}),
    ):
        config = {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Env": ["PATH=/bin"], **cfg},
            "rootfs": {"type": "layers", "diff_ids": [diff_id]},
            "history": [{"created_by": "tests/cluster/node.py: busybox-static"}],
        }
        cdigest, csize = blob(json.dumps(config, sort_keys=True).encode())
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cdigest, "size": csize},
            "layers": [
                {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest, "size": layer_size}
            ],
        }
        mdigest, msize = blob(json.dumps(manifest, sort_keys=True).encode())
        manifests.append(
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": mdigest,
                "size": msize,
                "platform": {"architecture": "amd64", "os": "linux"},
                "annotations": {"io.containerd.image.name": name, "org.opencontainers.image.ref.name": name},
            }
        )
    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": manifests}
    tmp = out.with_suffix(".tmp")
    with tarfile.open(tmp, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _tar_add(tar, "oci-layout", data=b'{"imageLayoutVersion":"1.0.0"}')
        _tar_add(tar, "index.json", data=json.dumps(index, sort_keys=True).encode())
        _tar_add(tar, "blobs", type=tarfile.DIRTYPE, mode=0o755)
        _tar_add(tar, "blobs/sha256", type=tarfile.DIRTYPE, mode=0o755)
        for digest, data in sorted(blobs.items()):
            _tar_add(tar, f"blobs/sha256/{digest.split(':', 1)[1]}", data=data)
    tmp.replace(out)
    return out


# --------------------------------------------------------------------------- configuration files


def _containerd_config(node: Node) -> str:
    c = node.state_dir / "containerd"
    return f"""version = 2
root = "{c / "root"}"
state = "{c / "state"}"
oom_score = 0
# not the snapshotters this machine may lack, nor the ones a node does not use
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "{node.sock}"

[ttrpc]
  address = "{c / "containerd.sock.ttrpc"}"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "{c / "opt"}"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{PAUSE_IMAGE}"
  # the pods' network namespaces under this node's state folder, not /run/netns
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  disable_apparmor = true
  restrict_oom_score_adj = true
  max_container_log_line_size = 16384

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "{shutil.which("runc") or "runc"}"
        Root = "{c / "runc"}"
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{CNI_DIR}"
    conf_dir = "{node.state_dir / "cni" / "net.d"}"
    max_conf_num = 1
"""


def _cni_config(node: Node) -> str:
    return json.dumps(
        {
            "cniVersion": "0.4.0",
            "name": "konnectz",
            "plugins": [
                {
                    "type": "bridge",
                    "bridge": BRIDGE,
                    "isGateway": True,
                    "ipMasq": True,  # pods reach the host end of the link (the API server) as the node
                    "hairpinMode": True,  # a pod reaches itself through its Service
                    "ipam": {
                        "type": "host-local",
                        "ranges": [[{"subnet": POD_CIDR, "gateway": POD_GATEWAY}]],
                        "routes": [{"dst": "0.0.0.0/0"}],
                        "dataDir": str(node.state_dir / "cni" / "ipam"),
                    },
                },
                {"type": "portmap", "capabilities": {"portMappings": True}},
            ],
        },
        indent=2,
    )


def _kubeconfig(path: Path, server: str, ca_file: Path, token: str) -> None:
    ca = base64.b64encode(ca_file.read_bytes()).decode()
    path.write_text(
        f"""apiVersion: v1
kind: Config
clusters:
- name: konnectz
  cluster:
    server: {server}
    certificate-authority-data: {ca}
users:
- name: konnectz-node
  user:
    token: {token}
contexts:
- name: konnectz
  context: {{cluster: konnectz, user: konnectz-node}}
current-context: konnectz
"""
    )
    os.chmod(path, 0o600)


def _kubelet_config(node: Node, version: int) -> str:
    cfg = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cgroupDriver": "cgroupfs",  # no systemd on these machines
        "cgroupRoot": node.cgroup_root,  # pods under /konnectz-node-<i>/kubepods: apart from other nodes
        "cgroupsPerQOS": True,
        "failSwapOn": False,
        "containerRuntimeEndpoint": f"unix://{node.sock}",
        "address": node.node_ip,
        "port": 10250,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": 10248,
        # Reached only through the node's own namespace link: the API server (logs, exec) is let in
        # without client certificates.
        "authentication": {"anonymous": {"enabled": True}, "webhook": {"enabled": False}},
        "authorization": {"mode": "AlwaysAllow"},
        "registerNode": True,
        "registerWithTaints": [TAINT],
        "podLogsDir": str(node.state_dir / "pod-logs"),
        # a shared, busy disk must not evict the tests' pods
        "evictionHard": {
            "memory.available": "100Mi",
            "nodefs.available": "1%",
            "imagefs.available": "1%",
            "nodefs.inodesFree": "1%",
        },
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "serializeImagePulls": False,
        "maxPods": 60,
        "nodeStatusUpdateFrequency": "5s",
        "syncFrequency": "10s",
        "fileCheckFrequency": "10s",
        "resolvConf": str(node.state_dir / "resolv.conf"),
        # CoreDNS in the node's namespace, on its InternalIP: pods find Services by name
        "clusterDNS": [node.node_ip],
        "clusterDomain": CLUSTER_DOMAIN,
        "rotateCertificates": False,
        "serverTLSBootstrap": False,
        "shutdownGracePeriod": "0s",
        "enableServer": True,
    }
    if version == 1:
        cfg["failCgroupV1"] = False  # recent kubelets refuse cgroup v1 unless told
    return json.dumps(cfg, indent=2)


def _corefile(node: Node) -> str:
    """Cluster DNS: Services and pods of this control plane, nothing forwarded (nothing outside)."""
    return f"""{CLUSTER_DOMAIN}:53 in-addr.arpa:53 ip6.arpa:53 {{
    bind {node.node_ip}
    errors
    ready 127.0.0.1:8181
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
        kubeconfig {node.state_dir / "kubeconfig.node"}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }}
    cache 5
}}
.:53 {{
    bind {node.node_ip}
    errors
    template ANY ANY {{
        rcode NXDOMAIN
    }}
}}
"""


def _kube_proxy_config(node: Node) -> str:
    return json.dumps(
        {
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
            "kind": "KubeProxyConfiguration",
            "clientConnection": {"kubeconfig": str(node.state_dir / "kubeconfig.node")},
            "mode": "iptables",
            "hostnameOverride": node.name,
            "clusterCIDR": POD_CIDR,
            "bindAddress": node.node_ip,
            "healthzBindAddress": "127.0.0.1:10256",
            "metricsBindAddress": "127.0.0.1:10249",
            # conntrack sysctls are the machine's, not this namespace's: leave them as they are
            "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
            "iptables": {"masqueradeAll": False, "syncPeriod": "10s", "minSyncPeriod": "0s"},
            "nodePortAddresses": [f"{node.node_ip}/32"],
        },
        indent=2,
    )


# --------------------------------------------------------------------------- start


def _spawn(node: Node, name: str, argv: list[str]) -> int:
    """Start NAME in the node's network namespace (nsenter execs it: the pid is the component's)."""
    node.logs.mkdir(parents=True, exist_ok=True)
    with open(node.logs / f"{name}.log", "ab") as log:
        proc = subprocess.Popen(
            ["nsenter", f"--net=/run/netns/{node.netns}", "--", *argv],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    piddir = node.state_dir / "pids"
    piddir.mkdir(parents=True, exist_ok=True)
    (piddir / f"{name}.pid").write_text(str(proc.pid))
    node.pids[name] = proc.pid
    return proc.pid


def _wait(node: Node, what: str, check, timeout: float, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    last_err: object = None
    while time.monotonic() < deadline:
        for name, pid in node.pids.items():
            if not controlplane._pid_alive(pid):
                log = node.logs / f"{name}.log"
                raise ClusterError(
                    f"{name} exited while waiting for {what}; last log lines ({log}):\n{controlplane._tail(log)}"
                )
        try:
            result = check()
            if result:
                return result
        except Exception as exc:
            last_err = exc
        time.sleep(interval)
    raise ClusterError(
        f"timed out after {timeout:.0f}s waiting for {what} (last: {last_err}); logs in {node.logs}\n"
        + node.log_tails(15)
    )


def up(
    state_dir: Path | str | None = None,
    timeout: float = 120.0,
    build: bool = True,
    *,
    taint: bool = True,
    volumes: int = VOLUMES,
) -> Node:
    """A fresh control plane (no kwok) and a real node joined to it; returns when the node is Ready.

    ``taint=False``: no ``konnectz.io/real-node`` taint (the control plane is the node's own either
    way: a chart installed with its defaults, which tolerate nothing, runs there).
    ``volumes``: local PersistentVolumes of VOLUME_SIZE under the state folder, offered through the
    default StorageClass ``konnectz-local`` (so that claims of the default class bind, as on a
    cluster with a provisioner)."""
    state = (Path(state_dir) if state_dir else default_state_dir()).resolve()
    bins = controlplane.bin_dir(build=build)
    missing = missing_prerequisites(bins)
    if missing:
        raise ClusterError("a real node cannot start here; missing: " + "; ".join(missing))
    down(state, quiet=True)  # leftovers of a crashed run
    (state / "sandbox-ids").unlink(missing_ok=True)
    for sub in ("containerd", "kubelet", "cni", "logs", "pids", "pod-logs", "volumes"):
        path = state / sub
        if path.exists():
            _unmount_under(path)
            shutil.rmtree(path, ignore_errors=True)
    state.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    index = _claim_netns()
    node = Node(
        state_dir=state,
        index=index,
        name=f"konnectz-real-node-{index}",
        netns=f"konnectz-node-{index}",
        host_ip=f"10.250.{index}.1",
        node_ip=f"10.250.{index}.2",
        kubeconfig=state / "kubeconfig",
        cgroup_root=f"/konnectz-node-{index}",
        bin_dir=bins,
    )
    (state / "node.json").write_text(json.dumps(node.to_json(), indent=2))  # for down() from here on
    try:
        _setup_network(node)
        node.timings["network"] = round(time.monotonic() - t0, 2)

        t = time.monotonic()
        cp = controlplane.start(state / "cluster", node.kubeconfig, timeout=timeout, build=build, kwok=False,
                                address=node.host_ip)  # fmt: skip
        node.timings["control_plane"] = round(time.monotonic() - t, 2)
        _kubeconfig(state / "kubeconfig.node", cp.server, cp.ca_file, cp.token)

        version = cgroup_version()
        _make_cgroup_root(node, version)

        t = time.monotonic()
        (state / "containerd").mkdir(parents=True, exist_ok=True)
        (state / "containerd" / "config.toml").write_text(_containerd_config(node))
        (state / "cni" / "net.d").mkdir(parents=True, exist_ok=True)
        (state / "cni" / "net.d" / "10-konnectz.conflist").write_text(_cni_config(node))
        (state / "resolv.conf").write_text("nameserver 127.0.0.1\noptions ndots:1\n")
        _spawn(node, "containerd", ["containerd", "--config", str(state / "containerd" / "config.toml")])
        _wait(node, "containerd's socket", lambda: node.ctr("version", timeout=5, check=False).returncode == 0, 60)
        node.load_image(busybox_archive())
        node.timings["containerd"] = round(time.monotonic() - t, 2)

        t = time.monotonic()
        (state / "kubelet.json").write_text(_kubelet_config(node, version))
        _spawn(
            node,
            "kubelet",
            [
                str(bins / "kubelet"),
                f"--config={state / 'kubelet.json'}",
                f"--kubeconfig={state / 'kubeconfig.node'}",
                f"--root-dir={state / 'kubelet'}",
                f"--cert-dir={state / 'kubelet' / 'pki'}",
                f"--hostname-override={node.name}",
                f"--node-ip={node.node_ip}",
                f"--node-labels={NODE_LABEL}=true",
                "--v=1",
            ],
        )
        (state / "kube-proxy.json").write_text(_kube_proxy_config(node))
        _spawn(node, "kube-proxy", [str(bins / "kube-proxy"), f"--config={state / 'kube-proxy.json'}", "--v=1"])
        (state / "Corefile").write_text(_corefile(node))
        _spawn(node, "coredns", [str(bins / "coredns"), "-conf", str(state / "Corefile")])

        def ready() -> bool:
            code, body = cp.request(f"/api/v1/nodes/{node.name}")
            if code != 200:
                return False
            conds = json.loads(body).get("status", {}).get("conditions") or []
            return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)

        _wait(node, f"node {node.name} Ready", ready, timeout, 0.5)
        node.timings["node_ready"] = round(time.monotonic() - t, 2)

        def dns_ready() -> bool:  # CoreDNS's `ready` plugin: 200 once the kubernetes plugin has synced
            got = node.exec("busybox", "wget", "-q", "-O-", "http://127.0.0.1:8181/ready", check=False, timeout=10)
            return got.returncode == 0

        t = time.monotonic()
        _wait(node, "CoreDNS ready", dns_ready, timeout, 0.3)
        node.timings["dns"] = round(time.monotonic() - t, 2)
        if not taint:
            _untaint(cp, node)
        _local_volumes(cp, node, volumes)
        node.timings["total"] = round(time.monotonic() - t0, 2)
    except BaseException:
        (state / "node.json").write_text(json.dumps(node.to_json(), indent=2))
        down(state, quiet=True)
        raise
    (state / "node.json").write_text(json.dumps(node.to_json(), indent=2))
    return node


def _untaint(cp, node: Node) -> None:
    code, body = cp.request(f"/api/v1/nodes/{node.name}")
    if code != 200:
        raise ClusterError(f"reading node {node.name}: HTTP {code} {body[:300]!r}")
    taints = [t for t in json.loads(body)["spec"].get("taints") or [] if t.get("key") != TAINT_KEY]
    _patch_node(cp, node, {"spec": {"taints": taints}})


def _patch_node(cp, node: Node, patch: dict, timeout: float = 10) -> None:
    req = urllib.request.Request(cp.server + f"/api/v1/nodes/{node.name}", data=json.dumps(patch).encode(),
                                 method="PATCH")  # fmt: skip
    req.add_header("Authorization", f"Bearer {cp.token}")
    req.add_header("Content-Type", "application/merge-patch+json")
    with urllib.request.urlopen(req, context=cp._ssl(), timeout=timeout) as resp:
        if resp.status != 200:
            raise ClusterError(f"patching node {node.name}: HTTP {resp.status}")


def _local_volumes(cp, node: Node, count: int) -> None:
    """The default StorageClass (static: no provisioner, bound when the pod is scheduled) and COUNT
    local PersistentVolumes on this node. Local volumes, not hostPath: the kubelet gives them the
    pod's fsGroup, as a provisioner's volumes get it."""
    if count <= 0:
        return
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": STORAGE_CLASS, "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
        "reclaimPolicy": "Retain",
    }
    code, body = cp.request("/apis/storage.k8s.io/v1/storageclasses", "POST", sc)
    if code not in (201, 409):
        raise ClusterError(f"creating StorageClass {STORAGE_CLASS}: HTTP {code} {body[:300]!r}")
    for i in range(count):
        path = node.state_dir / "volumes" / f"vol-{i}"
        path.mkdir(parents=True, exist_ok=True)
        pv = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"{node.name}-vol-{i}", "labels": {NODE_LABEL: "true"}},
            "spec": {
                "capacity": {"storage": VOLUME_SIZE},
                "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Retain",
                "storageClassName": STORAGE_CLASS,
                "volumeMode": "Filesystem",
                "local": {"path": str(path)},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "kubernetes.io/hostname", "operator": "In", "values": [node.name]}
                                ]
                            }
                        ]
                    }
                },
            },
        }
        code, body = cp.request("/api/v1/persistentvolumes", "POST", pv)
        if code not in (201, 409):
            raise ClusterError(f"creating PersistentVolume {pv['metadata']['name']}: HTTP {code} {body[:300]!r}")


def buildah_archive(image: str, buildah: list[str] | None = None, cache: Path | None = None) -> Path:
    """IMAGE from buildah's storage (``make images``'s, by default) as an OCI archive for ``load_image``;
    cached by the image's id (a second load of the same image costs only the import)."""
    cache = cache or CACHE
    buildah = buildah or ["buildah", "--root", str(cache / "containers" / "storage"), "--runroot",
                          str(cache / "containers" / "run"), "--storage-driver", "vfs"]  # fmt: skip
    found = subprocess.run([*buildah, "inspect", "--type", "image", "--format", "{{.FromImageID}}", image],
                           capture_output=True, text=True)  # fmt: skip
    if found.returncode != 0:
        raise ClusterError(f"image {image} is not in buildah's storage: make images ({found.stderr.strip()})")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in image)
    out = cache / "node" / f"{safe}-{found.stdout.strip()[:16]}.oci.tar"
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        pushed = subprocess.run([*buildah, "push", "--quiet", image, f"oci-archive:{tmp}:{image}"],
                                capture_output=True, text=True, timeout=900)  # fmt: skip
        if pushed.returncode != 0:
            raise ClusterError(f"buildah push {image}: {pushed.stderr.strip()[-2000:]}")
        tmp.replace(out)
        for older in out.parent.glob(f"{safe}-*.oci.tar"):  # only the newest build of a name is kept
            if older != out:
                older.unlink(missing_ok=True)
    return out


def _cgroup_dirs(node: Node, version: int) -> list[Path]:
    rel = node.cgroup_root.lstrip("/")
    if version == 2:
        return [Path("/sys/fs/cgroup") / rel]
    return [h / rel for h in _hierarchies()]


def _make_cgroup_root(node: Node, version: int) -> None:
    for d in _cgroup_dirs(node, version):
        d.mkdir(exist_ok=True)


# --------------------------------------------------------------------------- stop


def _unmount_under(path: Path) -> list[str]:
    """Unmount everything mounted at or under path (deepest first). Returns what was unmounted."""
    prefix = str(path.resolve())
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        mp = line.split()[4].replace("\\040", " ")
        if mp == prefix or mp.startswith(prefix + "/"):
            points.append(mp)
    done = []
    for mp in sorted(set(points), key=lambda p: p.count("/"), reverse=True):
        if subprocess.run(["umount", mp], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", mp], capture_output=True)
        done.append(mp)
    return done


def _shim_pids(sock: Path) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        cmd = controlplane._cmdline(int(proc.name))
        if cmd and Path(cmd[0]).name.startswith("containerd-shim") and str(sock) in cmd:
            found.append(int(proc.name))
    return found


def _descendants(pids: list[int]) -> list[int]:
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(proc.name))
    out, todo = [], list(pids)
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            out.append(child)
            todo.append(child)
    return out


def _kill_pid(pid: int, name: str, grace: float) -> bool:
    cmd = controlplane._cmdline(pid)
    if not (controlplane._pid_alive(pid) and cmd and Path(cmd[0]).name == name):
        return False
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return False
    deadline = time.monotonic() + grace
    while controlplane._pid_alive(pid) and time.monotonic() < deadline:
        controlplane._reap(pid)
        time.sleep(0.05)
    if controlplane._pid_alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        time.sleep(0.1)
    controlplane._reap(pid)
    return True


def _stop_pods(node: Node) -> None:
    """Cordon the node and delete its pods through the API, so that the kubelet tears them down (CNI
    DEL, volumes) and no replacement lands there; what is left after 20 s is cleaned up by force."""
    cp = node.control_plane()
    if cp is None or not all(controlplane._pid_alive(node.pids.get(n, -1)) for n in ("containerd", "kubelet")):
        return
    try:
        _patch_node(cp, node, {"spec": {"unschedulable": True}}, timeout=5)
        code, body = cp.request(f"/api/v1/pods?fieldSelector=spec.nodeName%3D{node.name}", timeout=5)
        if code != 200:
            return
        pods = json.loads(body).get("items") or []
        for pod in pods:
            meta = pod["metadata"]
            cp.request(f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}?gracePeriodSeconds=0", "DELETE",
                       timeout=5)  # fmt: skip
        deadline = time.monotonic() + 20
        while pods and time.monotonic() < deadline:
            if not node.ctr("tasks", "ls", "-q", timeout=10, check=False).stdout.strip() and not _cni_results(node):
                break
            time.sleep(0.3)
    except (OSError, ClusterError, subprocess.TimeoutExpired):
        pass


CNI_RESULTS = Path("/var/lib/cni/results")  # containerd 1.6's CNI library caches results here, always


def _sandbox_ids(node: Node) -> set[str]:
    """The ids of every pod sandbox this node's containerd has made (its CRI and task folders)."""
    c = node.state_dir / "containerd"
    ids: set[str] = set()
    recorded = node.state_dir / "sandbox-ids"
    if recorded.is_file():
        ids.update(recorded.read_text().split())
    for d in (
        c / "root" / "io.containerd.grpc.v1.cri" / "sandboxes",
        c / "state" / "io.containerd.runtime.v2.task" / "k8s.io",
    ):
        if d.is_dir():
            ids.update(p.name for p in d.iterdir())
    return ids


def _cni_results(node: Node) -> list[Path]:
    """The CNI results cached for this node's sandboxes (named NETWORK-ID-IFNAME): CNI DEL removes them."""
    if not CNI_RESULTS.is_dir():
        return []
    ids = _sandbox_ids(node)
    return [p for p in CNI_RESULTS.iterdir() if any(f"-{i}-" in p.name for i in ids)]


def down(state_dir: Path | str | None = None, quiet: bool = False) -> list[str]:
    """Stop the node and its control plane: processes, containers, mounts, cgroups, namespace. Safe to repeat."""
    state = (Path(state_dir) if state_dir else default_state_dir()).resolve()
    node = load(state)
    stopped: list[str] = []
    if node is not None:
        _stop_pods(node)
        for name in reversed(COMPONENTS):
            pf = state / "pids" / f"{name}.pid"
            pid = node.pids.get(name)
            if pid is None and pf.is_file():
                try:
                    pid = int(pf.read_text().strip())
                except ValueError:
                    pid = None
            if pid is not None and _kill_pid(pid, name, grace=10 if name == "containerd" else 5):
                stopped.append(name)
            pf.unlink(missing_ok=True)
        # The containers' shims outlive containerd: kill what they run, then them.
        shims = _shim_pids(node.sock)
        for pid in _descendants(shims) + shims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if shims:
            stopped.append(f"{len(shims)} shim(s)")
            time.sleep(0.3)
        _remove_shim_sockets(node)
        for cached in _cni_results(node):
            cached.unlink(missing_ok=True)
        mounts = _unmount_under(state)
        if mounts:
            stopped.append(f"{len(mounts)} mount(s)")
        _remove_cgroups(node)
        _teardown_network(node.netns, node.index)
        # The images' content and snapshots (gigabytes once the chart's images are loaded), the pods' volumes
        # and the local volumes' data go; the logs and the configuration stay for a look afterwards.
        ids = _sandbox_ids(node)
        if ids:  # still known to leftovers() once containerd's folders are gone
            (state / "sandbox-ids").write_text("\n".join(sorted(ids)) + "\n")
        for sub in ("containerd", "kubelet", "volumes", "cni"):
            shutil.rmtree(state / sub, ignore_errors=True)
    # Its data is thrown away with it: the API server's graceful shutdown (15 s and more with the
    # node's watches open) is not waited for.
    stopped += controlplane.stop(state / "cluster", quiet=True, grace=2.0)
    if node is not None:
        (state / "node.json").unlink(missing_ok=True)
    if not quiet:
        _log(f"stopped: {', '.join(stopped) or 'nothing was running'}")
    return stopped


def _remove_shim_sockets(node: Node) -> None:
    """containerd 1.6's shims listen on /run/containerd/s/<sha256(address, namespace, id)>: gone with the
    shim when it exits cleanly, left behind when it is killed."""
    tasks = node.state_dir / "containerd" / "state" / "io.containerd.runtime.v2.task"
    if not tasks.is_dir():
        return
    for ns_dir in tasks.iterdir():
        for task in ns_dir.iterdir() if ns_dir.is_dir() else []:
            digest = hashlib.sha256(f"{node.sock}/{ns_dir.name}/{task.name}".encode()).hexdigest()
            for cand in (Path("/run/containerd/s") / digest,):
                cand.unlink(missing_ok=True)


def _remove_cgroups(node: Node, timeout: float = 10.0) -> None:
    """Kill what is left in the node's cgroups (in every hierarchy), then remove them, deepest first."""
    dirs: list[Path] = []
    for root in (d for d in _cgroup_dirs(node, 1) if d.is_dir()):
        dirs += [p for p in root.rglob("*") if p.is_dir()] + [root]
    dirs.sort(key=lambda p: len(p.parts), reverse=True)
    for d in dirs:
        try:
            pids = (d / "cgroup.procs").read_text().split()
        except OSError:
            continue
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + timeout
    while dirs and time.monotonic() < deadline:
        left = []
        for d in dirs:
            try:
                d.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                left.append(d)
        if left:
            time.sleep(0.05)
        dirs = left


def leftovers(node: Node) -> list[str]:
    """What a stopped node would have left behind (empty when down() did its work)."""
    found = []
    if _run("ip", "netns", "list", check=False).stdout.split().count(node.netns):
        found.append(f"netns {node.netns}")
    if Path(f"/sys/class/net/kzh{node.index}").exists():
        found.append(f"link kzh{node.index}")
    prefix = str(node.state_dir)
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        mp = line.split()[4]
        if mp.startswith(prefix):
            found.append(f"mount {mp}")
    for d in _cgroup_dirs(node, cgroup_version()):
        if d.exists():
            found.append(f"cgroup {d}")
    for pid in _shim_pids(node.sock):
        found.append(f"shim pid {pid}")
    for cached in _cni_results(node):
        found.append(f"CNI result {cached}")
    for name, pid in node.pids.items():
        if controlplane._pid_alive(pid) and (cmd := controlplane._cmdline(pid)) and Path(cmd[0]).name == name:
            found.append(f"{name} pid {pid}")
    return found


# --------------------------------------------------------------------------- CLI


def _main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="node", description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["up", "down", "status", "load"])
    ap.add_argument("images", nargs="*", help="load: images of buildah's storage (make images) to import")
    ap.add_argument("--no-taint", action="store_true", help="up: no konnectz.io/real-node taint")
    ap.add_argument("--state-dir", default=None, help="default: $KONNECTZ_NODE_DIR or <repo>/.konnectz/realnode")
    args = ap.parse_args(argv)
    state = Path(args.state_dir) if args.state_dir else default_state_dir()
    try:
        if args.command == "up":
            t0 = time.monotonic()
            node = up(state, taint=not args.no_taint)
            _log(f"node {node.name} Ready in {time.monotonic() - t0:.1f}s ({node.timings}); logs in {node.logs}")
            _log(f"pods: tolerate the taint {TAINT_KEY}:NoSchedule; images: ctr --address {node.sock} -n k8s.io")
            print(f"export KUBECONFIG={node.kubeconfig}")
            return 0
        if args.command == "down":
            down(state)
            return 0
        node = load(state)
        if node is None:
            print("not started", file=sys.stderr)
            return 1
        if args.command == "load":
            for image in args.images:
                t0 = time.monotonic()
                node.load_image(buildah_archive(image), name=image)
                _log(f"{image} loaded in {time.monotonic() - t0:.1f}s")
            return 0
        alive = {n: controlplane._pid_alive(p) for n, p in node.pids.items()}
        print(json.dumps({**node.to_json(), "alive": alive}, indent=2))
        return 0 if all(alive.values()) else 1
    except ClusterError as exc:
        print(f"[node] ERROR: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(_main())
