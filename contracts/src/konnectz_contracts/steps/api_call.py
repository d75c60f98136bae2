"""API call (in-house add-on): one HTTP request built from the node's configuration.

url, header, param and body values may carry references (``{{node-1.customer.name}}``);
params go to the query string (added to one the URL may already carry), the body is JSON built
from key/value rows (dotted keys nest), optionally wrapped in an array. The output is
``{"status": int, "headers": {...}, "body": <parsed JSON or text>}``; a status of 400 or more
is a step ERROR.

Headers and params marked ``secret`` (and headers whose names look like credentials, see
:func:`konnectz_runner.apps.outbound.is_secret_header`) show as ``***`` in the task log; secret headers are
dropped when a redirect leads to another origin. A secret typed into the step arrives sealed
(``KeyValue.sealed``): it is opened through the api's broker when the step runs and sent only to the
origin it was typed for (:mod:`konnectz_runner.apps.step_secrets`).

From the canvas (``compile_node``, providers in ``PROVIDERS``):
Api node (provider ``api``) → the runner's ``api_call`` step.

``selectedValue``: ``wrap_in_array`` (NO or YES), ``payload_type`` (JSON only) and ``apiDetails``
(``method``, ``endpointURL``, ``headers``, ``params``, ``body`` as lists of key/value entries).
Header and param rows marked ``secret`` compile with their ``sealed`` value (encrypted by the api,
:mod:`konnectz_api.step_secrets`), never with plain text; the runner opens it when the step runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from konnectz_contracts.compiling import fail, text
from konnectz_contracts.model import KeyValue, StepBase

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = ["KIND", "PROVIDERS", "ApiCallStep", "Config", "compile_node"]

KIND = "api_call"
ORDER = 1  # its place in the Step union (the CRD's oneOf order)


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


PROVIDERS = ("api",)
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def key_values(node: Node, entries: Any, what: str, *, secrets: bool = False) -> list[KeyValue]:
    """Key/value rows; blank rows are dropped, a value without a key is refused. With ``secrets``,
    a row marked secret compiles to its sealed value (a secret row without one must be typed again)."""
    out: list[KeyValue] = []
    for entry in entries or ():
        if isinstance(entry, str):
            raise fail(node, f"a {what} entry must have a key and a value")
        key = entry.key.strip()
        if secrets and entry.secret:
            if not key:
                raise fail(node, f"a secret {what} entry has no key")
            if not entry.sealed:
                raise fail(node, f"the secret {what} {key!r} has no value: type it again")
            out.append(KeyValue(key=key, value="", secret=True, sealed=entry.sealed))
            continue
        try:
            value = text(entry.value)
        except TypeError as exc:
            raise fail(node, f"the {what} {key!r} must be text") from exc
        if not key:
            if value:
                raise fail(node, f"a {what} entry has a value but no key")
            continue
        out.append(KeyValue(key=key, value=value))
    return out


def compile_node(node: Node) -> ApiCallStep:
    selected = node.data.selectedValue
    details = selected.apiDetails if selected is not None else None
    if selected is None or details is None:
        raise fail(node, "the Endpoint URL is required")
    url = details.endpointURL.strip()
    if not url:
        raise fail(node, "the Endpoint URL is required")
    if not (url.startswith(("http://", "https://")) or url.startswith("{{")):
        raise fail(node, "the Endpoint URL must start with http:// or https://")
    method = (details.method or "POST").strip().upper()
    if method not in METHODS:
        raise fail(node, f"unsupported method {method[:20]!r}")
    if (selected.payload_type or "JSON").upper() != "JSON":
        raise fail(node, "Payload Type must be JSON")
    wrap = (selected.wrap_in_array or "NO").upper()
    if wrap not in ("NO", "YES"):
        raise fail(node, "Wrap Request in Array must be NO or YES")
    return ApiCallStep(
        id=node.id,
        name=node.detail.name or "API Call",
        method=method,
        url=url,
        headers=key_values(node, details.headers, "header", secrets=True),
        params=key_values(node, details.params, "param", secrets=True),
        body=key_values(node, details.body, "body"),
        payload_type="JSON",
        wrap_in_array=wrap == "YES",
    )
