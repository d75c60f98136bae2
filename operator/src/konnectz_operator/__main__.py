"""``python -m konnectz_operator``: run the operator (Kopf, standalone, no peering).

Scope: ``KONNECTZ_NAMESPACE`` (comma-separated namespaces) or, when empty, all namespaces.
Liveness: ``http://0.0.0.0:$KONNECTZ_LIVENESS_PORT/healthz`` (0 disables it).
"""

from __future__ import annotations

import sys

import kopf

from .config import OperatorSettings


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    config = OperatorSettings()
    namespaces = [ns.strip() for ns in config.namespace.split(",") if ns.strip()]
    kopf.configure(verbose="--verbose" in args or "-v" in args)
    from . import handlers  # noqa: F401 - registers the handlers in Kopf's default registry

    kopf.run(
        standalone=True,
        clusterwide=not namespaces,
        namespaces=namespaces,
        liveness_endpoint=f"http://0.0.0.0:{config.liveness_port}/healthz" if config.liveness_port else None,
        memo=kopf.Memo(config=config),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
