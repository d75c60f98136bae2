"""What the api shows of an app account's rate budget (docs/rate-budgets.md).

The runners enforce the budget in the ``KZ_BUDGETS`` bucket (:mod:`konnectz_runner.apps.budgets`); the
api stores the owner's override (``app_accounts.rate_limit_rps``, handed to the runners by the
credential broker) and reads the bucket, through its own NATS connection, to show the use: tokens
left now, requests in the last minute. A bucket that cannot be read within
:data:`READ_TIMEOUT_SECONDS` shows the rate without its use (``live`` false), never an error.

The api's own requests with an account (Test & Review of an app step or an app's polling trigger)
take their tokens from the same bucket (:func:`shared_budgets`), so testing a step while the flow
runs does not push the account over its budget.
"""

from __future__ import annotations

import asyncio
import logging

from nats.js.errors import KeyNotFoundError

from konnectz_api.bus import Bus
from konnectz_api.models import AppAccount
from konnectz_api.schemas import RateBudgetOut
from konnectz_contracts.budgets import KV_BUDGETS, budget_key, budget_usage
from konnectz_contracts.manifest import App
from konnectz_runner.apps import Budgets
from konnectz_runner.engine import remember_account

__all__ = ["READ_TIMEOUT_SECONDS", "budget_of", "budgets_of", "shared_budgets", "use_account"]

log = logging.getLogger(__name__)
READ_TIMEOUT_SECONDS = 2.0


async def _stored(bus: Bus, account_id: int) -> tuple[bytes | None, bool]:
    """The stored bucket of the account (None: never used or expired) and whether it could be read."""
    try:
        kv = await asyncio.wait_for(bus.js.key_value(KV_BUDGETS), READ_TIMEOUT_SECONDS)
        entry = await asyncio.wait_for(kv.get(budget_key(account_id)), READ_TIMEOUT_SECONDS)
    except KeyNotFoundError:
        return None, True
    except Exception as exc:
        log.info("Rate budget of account %s not read: %s", account_id, exc or type(exc).__name__)
        return None, False
    return entry.value, True


_shared: Budgets | None = None


def shared_budgets(bus: Bus) -> Budgets | None:
    """The buckets this api process takes tokens from (one per NATS connection), None while NATS is
    unreachable: the step then spaces its requests within this process (as a runner does)."""
    global _shared
    try:
        js = bus.js
    except ConnectionError:
        return None
    if _shared is None or _shared.js is not js:  # a new connection: the old context is gone
        _shared = Budgets(js)
    return _shared


def use_account(account: AppAccount) -> None:
    """Tell the step code the account's rate override and name, as the credential broker tells a
    runner, before the api sends a request with it (Test & Review of a polling trigger)."""
    remember_account(account.id, account.rate_limit_rps, account.label)


async def budget_of(bus: Bus, app: App | None, account: AppAccount) -> RateBudgetOut:
    app_rate = app.rate_limit.requests_per_second if app is not None else None
    burst = app.rate_limit.burst if app is not None else 1
    rate = account.rate_limit_rps or app_rate
    source = "override" if account.rate_limit_rps else "app default" if app_rate else "none"
    raw, live = await _stored(bus, account.id)
    usage = budget_usage(raw, rate, burst) if live else {"tokens_left": None, "used_last_minute": None}
    return RateBudgetOut(
        account_id=account.id,
        rate_limit_rps=account.rate_limit_rps,
        app_rate_rps=app_rate,
        rate_rps=rate,
        source=source,
        burst=burst,
        tokens_left=usage["tokens_left"],
        used_last_minute=usage["used_last_minute"],
        live=live,
    )


async def budgets_of(bus: Bus, app: App | None, accounts: list[AppAccount]) -> list[RateBudgetOut]:
    return list(await asyncio.gather(*(budget_of(bus, app, a) for a in accounts)))
