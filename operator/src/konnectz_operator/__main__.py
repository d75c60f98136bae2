"""``python -m konnectz_operator``: run the operator (Kopf).

With ``KONNECTZ_PEERING`` (the chart sets it) every replica joins that Kopf peering object with a
random priority: all but the highest pause, so one replica is active and the others stand by
until its record is older than ``KONNECTZ_PEERING_LIFETIME`` seconds. Without it, standalone.

``python -m konnectz_operator crd [--check] [FILE ...]`` writes (or checks) the generated Konnect
CRD, by default crds/konnects.konnectz.io.yaml and charts/konnectz/crds/konnects.konnectz.io.yaml.

Scope: ``KONNECTZ_NAMESPACE`` (comma-separated namespaces) or, when empty, all namespaces.
Liveness: ``http://0.0.0.0:$KONNECTZ_LIVENESS_PORT/healthz`` (0 disables it).
"""

from __future__ import annotations

import secrets
import sys

from .config import OperatorSettings


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["crd"]:
        return _crd(args[1:])  # the pydantic models only: no kopf needed
    # Kopf imports the official ``kubernetes`` client when it is installed (to type its objects);
    # the operator does not use it, and it costs about 40 MiB of memory per process.
    sys.modules.setdefault("kubernetes", None)  # type: ignore[arg-type]
    import kopf  # after the line above; `crd` runs without kopf installed

    config = OperatorSettings()
    namespaces = [ns.strip() for ns in config.namespace.split(",") if ns.strip()]
    kopf.configure(verbose="--verbose" in args or "-v" in args)
    from . import handlers  # noqa: F401  # import-ok: importing registers the handlers in Kopf, only for `run`

    peering = config.peering.strip()
    kopf.run(
        standalone=not peering,
        peering_name=peering or None,
        # Equal priorities pause every peer (Kopf's rule); a random one makes exactly one active.
        priority=config.peering_priority or secrets.randbelow(2**31 - 1) + 1,
        clusterwide=not namespaces,
        namespaces=namespaces,
        liveness_endpoint=f"http://0.0.0.0:{config.liveness_port}/healthz" if config.liveness_port else None,
        memo=kopf.Memo(config=config),
    )
    return 0


def _crd(args: list[str]) -> int:
    from pathlib import Path

    from .crd import write  # import-ok: only the crd subcommand loads it

    check = "--check" in args
    files = [Path(a) for a in args if a != "--check"] or [
        Path("crds/konnects.konnectz.io.yaml"),
        Path("charts/konnectz/crds/konnects.konnectz.io.yaml"),
    ]
    stale = write(files, check=check)
    for path in stale:
        print(f"{path} is stale: run 'make gen-crd' and commit it" if check else f"wrote {path}")
    if not stale:
        print("the Konnect CRD is up to date")
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
