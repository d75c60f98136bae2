"""Durable waits: a run suspended until its resume URL is called, or its timeout (docs/waits.md).

- ``KZ_WAITS`` (KV bucket): one :class:`WaitEntry` per waiting run and Wait step, key
  :func:`wait_key` (the same key as the timeout's timer, ``konnectz_runner.bus.timers.continuation_key``).
  The entry holds the waiting run (its :class:`~konnectz_contracts.events.Continuation`), and once the
  wait is decided, who decided it (a call, the timeout, a cancel) and when. A wait is decided once:
  every decision is a compare-and-set on the entry's revision, so of two concurrent calls one wins
  and the other is told the link was used. Entries expire :data:`WAITS_TTL_SECONDS` after their last
  write; a resumed wait keeps a small entry (no run, no body), so a reused link is answered 410.
- ``KZ_REVISIONS`` (KV bucket): the flow spec of each revision a suspended run started on, key
  ``<konnect_id>.<revision>``: a run resumes on that revision even if the konnect was published again
  meanwhile (delays and waits alike).

The resume URL is ``<webhook base URL>/resume/<token>``; the token names the konnect, the run and
the Wait step and carries an HMAC signature (:func:`resume_token`) under a key derived from the
konnect's broker token (:mod:`konnectz_contracts.broker_token`), which every runner serving the konnect
can compute and nobody else. The URL is known from the start of the run, so steps before the wait
can send it elsewhere: ``{{<wait step id>.resume_url}}``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict

from konnectz_contracts.compiling import fail, integer, is_blank

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

from konnectz_contracts.broker_token import token_for
from konnectz_contracts.events import RunRequest

__all__ = [
    "KV_REVISIONS",
    "KV_WAITS",
    "MAX_WAIT",
    "ON_TIMEOUT",
    "RESUME_PATH",
    "UNITS",
    "WAITING_FOR",
    "WAITS_TTL_SECONDS",
    "WaitEntry",
    "read_resume_token",
    "resume_base_url",
    "resume_secret",
    "resume_token",
    "resume_url",
    "revision_key",
    "timeout_settings",
    "wait_key",
]

KV_WAITS = "KZ_WAITS"
KV_REVISIONS = "KZ_REVISIONS"
#: The longest a Wait step waits (its timeout).
MAX_WAIT = timedelta(days=366)
#: Entries of KZ_WAITS and KZ_REVISIONS expire this long after their last write (longer than any wait).
WAITS_TTL_SECONDS = float(400 * 24 * 3600)
RESUME_PATH = "/resume/"
#: Whom a run in a Wait for a Call waits for (its active-run entry and its task log say so).
WAITING_FOR = "a call to its resume URL"
_SIGNATURE_HEX = 32


class WaitEntry(BaseModel):
    """A run's wait in ``KZ_WAITS``. ``run`` is the waiting RunRequest (resume set, wait undecided);
    None once resumed, and for a call that came before the run reached the wait (``early``)."""

    model_config = ConfigDict(extra="ignore")

    run_id: str
    konnect_id: int
    step_id: str
    since: AwareDatetime | None = None
    until: AwareDatetime | None = None
    run: RunRequest | None = None
    decided: Literal["call", "timeout", "cancel"] | None = None
    decided_at: AwareDatetime | None = None
    body: dict[str, Any] | None = None
    early: bool = False
    resumed_at: AwareDatetime | None = None


def wait_key(run_id: str, step_id: str) -> str:
    """The KZ_WAITS key of ``run_id``'s wait in ``step_id`` (the timeout timer's key too)."""
    return hashlib.sha256(f"{run_id}\x00{step_id}".encode()).hexdigest()[:40]


def revision_key(konnect_id: int, revision: int) -> str:
    return f"{int(konnect_id)}.{int(revision)}"


def resume_secret(konnect_id: int, env: Mapping[str, str] | None = None) -> str | None:
    """The key resume links of ``konnect_id`` are signed with: derived from the konnect's broker token
    (None when this process has neither the token nor the credentials key)."""
    token = token_for(konnect_id, env)
    if not token:
        return None
    return hmac.new(token.encode(), b"konnectz resume links", hashlib.sha256).hexdigest()


def _signature(secret: str, payload: str) -> str:
    return hmac.new(secret.encode(), f"konnectz-resume:{payload}".encode(), hashlib.sha256).hexdigest()[:_SIGNATURE_HEX]


def resume_token(secret: str, konnect_id: int, run_id: str, step_id: str) -> str:
    """The signed token of the resume URL of ``run_id``'s Wait step ``step_id``."""
    payload = f"{int(konnect_id)}:{run_id}:{step_id}"
    encoded = base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")
    return f"{encoded}.{_signature(secret, payload)}"


def read_resume_token(token: str, secret_of: Any) -> tuple[int, str, str] | None:
    """(konnect id, run id, step id) of a token whose signature holds; None for anything else.
    ``secret_of(konnect_id)`` gives the konnect's key (None: unknown)."""
    encoded, _, signature = token.partition(".")
    if not encoded or len(signature) != _SIGNATURE_HEX or len(token) > 600:
        return None
    try:
        payload = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    konnect, _, rest = payload.partition(":")
    run_id, _, step_id = rest.partition(":")
    if not konnect.isdigit() or not run_id or not step_id:
        return None
    secret = secret_of(int(konnect))
    if not secret or not hmac.compare_digest(_signature(secret, payload), signature):
        return None
    return int(konnect), run_id, step_id


def resume_base_url(env: Mapping[str, str] | None = None) -> str:
    """Where the runner's ingress is reached from outside: ``KONNECTZ_WEBHOOK_BASE_URL`` (the api's
    webhook base, the same ingress), else the runner's own host and port."""
    env = os.environ if env is None else env
    base = env.get("KONNECTZ_WEBHOOK_BASE_URL", "").strip()
    if base:
        return base.rstrip("/")
    host = env.get("KONNECTZ_RUNNER_HOST", "127.0.0.1")
    return f"http://{host}:{env.get('KONNECTZ_RUNNER_PORT', '8081')}"


def resume_url(konnect_id: int, run_id: str, step_id: str, env: Mapping[str, str] | None = None) -> str | None:
    """The resume URL of ``run_id``'s Wait step ``step_id`` (None: no signing key here)."""
    secret = resume_secret(konnect_id, env)
    if secret is None:
        return None
    return f"{resume_base_url(env)}{RESUME_PATH}{resume_token(secret, konnect_id, run_id, step_id)}"


#: The units of a wait's timeout, and what its end does (the Wait for a Call and Approval steps).
UNITS = ("seconds", "minutes", "hours", "days")
ON_TIMEOUT = ("continue", "stop", "fail")


def timeout_settings(node: Node, values: dict[str, Any], *, default_unit: str, waits_for: str) -> dict[str, Any]:
    """The ``timeout``, ``timeout_unit`` and ``on_timeout`` of a waiting step's node (``waits_for``: what
    the run waits for, in the message of a missing timeout)."""
    if is_blank(values.get("timeout")):
        raise fail(node, f"enter the timeout: how long the run waits for {waits_for}")
    timeout = integer(node, values["timeout"], what="Timeout")
    if timeout < 1:
        raise fail(node, "the timeout must be at least 1")
    unit = values.get("timeout_unit") or default_unit
    if unit not in UNITS:
        raise fail(node, f"the timeout unit must be one of {', '.join(UNITS)}")
    on_timeout = values.get("on_timeout") or "continue"
    if on_timeout not in ON_TIMEOUT:
        raise fail(node, f"on timeout must be one of {', '.join(ON_TIMEOUT)}")
    return {"timeout": timeout, "timeout_unit": unit, "on_timeout": on_timeout}
