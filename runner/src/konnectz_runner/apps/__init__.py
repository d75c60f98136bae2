"""The apps room: talking to the outside world on a flow's behalf.

- :mod:`.catalogue`: the app catalogue (every manifest, loaded and validated once);
- :mod:`.app_request`: a manifest event's HTTP request and reading its reply (shared with the api);
- :mod:`.outbound`: outbound HTTP for steps (guarded, redirect-safe, size-limited), behind
  :mod:`.netguard` (no private addresses) and sent by :mod:`.aiohttp_transport`;
- :mod:`.aws_sigv4`: the ``aws_sigv4`` signing hook; :mod:`.step_secrets`: secrets typed into steps;
- :mod:`.budgets`: each app account's rate budget, shared through NATS KV;
- :mod:`.chat`: the OpenAI-compatible chat-completions wire (Ask AI), with its price table;
- :mod:`.mcp_client`: an MCP client (list and call a server's tools through the guard, bounded), loaded
  on first use (``apps.mcp_client``): the MCP SDK takes about 0.4 s to import, which only flows with an
  MCP tool step, and the api's tool listing, pay.

This face is what other rooms, the api and the tools may import (``from konnectz_runner.apps
import ...``); the modules above are the room's own (``chat``, ``outbound`` and ``step_secrets``
are public as modules, and ``mcp_client``, loaded on first use).
"""

import importlib
import types
import typing

from konnectz_runner.apps import chat, outbound, step_secrets
from konnectz_runner.apps.agent_memory import MemorySource, memory_source, set_memory_source
from konnectz_runner.apps.aiohttp_transport import AiohttpTransport
from konnectz_runner.apps.app_request import (
    AppRequest,
    build_app_request,
    build_event_request,
    build_test_request,
    dig,
    hook_error,
    is_expired,
    items_at,
    picked,
    rows_as_objects,
    secret_values,
)
from konnectz_runner.apps.approvals import request_approval
from konnectz_runner.apps.budgets import Budget, Budgets, LocalSpacing, wait_reason
from konnectz_runner.apps.catalogue import (
    GENERATED_BUNDLE,
    BundleIndex,
    Catalogue,
    CatalogueError,
    LazyCatalogue,
    default_root,
    load_catalogue,
    load_manifest,
)
from konnectz_runner.apps.netguard import IPNetwork, NetGuard, guarded_transport, parse_networks
from konnectz_runner.apps.outbound import ERROR_BODY_CHARS, parse_body
from konnectz_runner.apps.outbound import send as send_outbound
from konnectz_runner.apps.step_secrets import origin_of

if typing.TYPE_CHECKING:
    from konnectz_runner.apps import mcp_client

__all__ = [
    "ERROR_BODY_CHARS",
    "GENERATED_BUNDLE",
    "AiohttpTransport",
    "AppRequest",
    "Budget",
    "Budgets",
    "BundleIndex",
    "Catalogue",
    "CatalogueError",
    "IPNetwork",
    "LazyCatalogue",
    "LocalSpacing",
    "MemorySource",
    "NetGuard",
    "build_app_request",
    "build_event_request",
    "build_test_request",
    "chat",
    "default_root",
    "dig",
    "guarded_transport",
    "hook_error",
    "is_expired",
    "items_at",
    "load_catalogue",
    "load_manifest",
    "mcp_client",
    "memory_source",
    "origin_of",
    "outbound",
    "parse_body",
    "parse_networks",
    "picked",
    "request_approval",
    "rows_as_objects",
    "secret_values",
    "send_outbound",
    "set_memory_source",
    "step_secrets",
    "wait_reason",
]


def __getattr__(name: str) -> types.ModuleType:
    """``mcp_client``, imported on first use (see the module's docstring)."""
    if name == "mcp_client":
        return importlib.import_module("konnectz_runner.apps.mcp_client")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
