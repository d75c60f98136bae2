"""Rate budgets per app account: the ``KZ_BUDGETS`` bucket, its keys and the override's bounds.

The runner takes tokens from an account's bucket (its ``budgets`` module); the api shows the
budget and checks an owner's override against :data:`MIN_RATE` and :data:`MAX_RATE`.
"""

from __future__ import annotations

__all__ = ["KV_BUDGETS", "MAX_RATE", "MIN_RATE", "TTL_SECONDS", "budget_key"]

KV_BUDGETS = "KZ_BUDGETS"
#: An entry not written for this long is dropped (the bucket is full again long before: 1 token / 0.01 rps = 100 s).
TTL_SECONDS = 3600.0
#: The override's bounds (requests per second), also checked by the api.
MIN_RATE = 0.01
MAX_RATE = 1000.0


def budget_key(account_id: int) -> str:
    """The ``KZ_BUDGETS`` key of one app account."""
    return f"acct.{account_id}"
