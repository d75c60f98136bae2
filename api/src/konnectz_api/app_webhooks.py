"""Moved to :mod:`konnectz_api.services.app_webhooks`; this name stays only for the runner's tests.

TODO: drop it once runner/tests import ``konnectz_api.services.app_webhooks``.
"""

from konnectz_api.services.app_webhooks import subscription_id

__all__ = ["subscription_id"]
