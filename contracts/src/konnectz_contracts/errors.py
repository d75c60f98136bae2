"""The runner's error hierarchy.

::

    RunnerError                 anything the runner raises on purpose
     ├── StepError              a step failed; ``str(exc)`` is what the task log shows
     │    ├── RefusedError      the outbound guard refused a URL (never retried)
     │    ├── ConnectFailed     no connection could be made (the request was never sent: retryable)
     │    ├── TimedOut          the call or its response timed out (it may have been received)
     │    └── HttpFailed        the other side answered 4xx or 5xx (``status``, ``retry_after``)
     └── ConfigError            the runner cannot start with these settings
"""

from __future__ import annotations

__all__ = ["ConfigError", "ConnectFailed", "HttpFailed", "RefusedError", "RunnerError", "StepError", "TimedOut"]


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


class TimedOut(StepError):
    """The call, or reading its response, timed out: the other side may have acted on it."""


class HttpFailed(StepError):
    """The other side answered with an error status; ``retry_after``: the seconds its ``Retry-After``
    asked for (None when it sent none, or one that could not be read)."""

    def __init__(self, message: str, status: int, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class ConfigError(RunnerError):
    """Invalid settings or spec file."""
