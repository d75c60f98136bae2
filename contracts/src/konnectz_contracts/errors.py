"""The runner's error hierarchy.

::

    RunnerError                 anything the runner raises on purpose
     ├── StepError              a step failed; ``str(exc)`` is what the task log shows
     │    ├── RefusedError      the outbound guard refused a URL (never retried)
     │    └── ConnectFailed     no connection could be made (the request was never sent: retryable)
     └── ConfigError            the runner cannot start with these settings
"""

from __future__ import annotations

__all__ = ["ConfigError", "ConnectFailed", "RefusedError", "RunnerError", "StepError"]


class RunnerError(Exception):
    """Base of every error the runner raises on purpose."""


class StepError(RunnerError):
    """A step failed. ``retryable`` is True only when repeating the step cannot duplicate an effect."""

    retryable: bool = False


class RefusedError(StepError):
    """The outbound guard refused the URL (scheme, or a private address that is not allowed)."""


class ConnectFailed(StepError):
    """The connection could not be made, so nothing was sent: safe to try again."""

    retryable = True


class ConfigError(RunnerError):
    """Invalid settings or spec file."""
