"""API call (in-house add-on): one HTTP request built from the node's configuration.

url, header, param and body values may carry references (``{{node-1.customer.name}}``);
params go to the query string (added to one the URL may already carry), the body is JSON built
from key/value rows (dotted keys nest), optionally wrapped in an array. The output is
``{"status": int, "headers": {...}, "body": <parsed JSON or text>}``; a status of 400 or more
is a step ERROR.

Headers and params marked ``secret`` (and headers whose names look like credentials, see
:func:`konnectz_runner.outbound.is_secret_header`) show as ``***`` in the task log; secret headers are
dropped when a redirect leads to another origin. A secret typed into the step arrives sealed
(``KeyValue.sealed``): it is opened through the api's broker when the step runs and sent only to the
origin it was typed for (:mod:`konnectz_runner.step_secrets`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from konnectz_contracts.model import KeyValue, StepBase

__all__ = ["KIND", "ApiCallStep", "Config"]

KIND = "api_call"


class ApiCallStep(StepBase):
    """One HTTP request. ``body`` keys may be dotted (``customer.name``) to build nested JSON."""

    kind: Literal["api_call"] = "api_call"
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    url: str
    headers: list[KeyValue] = Field(default_factory=list)
    params: list[KeyValue] = Field(default_factory=list)
    body: list[KeyValue] = Field(default_factory=list)
    payload_type: Literal["JSON"] = "JSON"
    wrap_in_array: bool = False


Config = ApiCallStep
