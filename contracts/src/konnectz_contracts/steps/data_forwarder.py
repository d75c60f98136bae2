"""Data forwarder (in-house add-on): gather values from earlier steps into one object.

``keys`` is a list of key/value rows; each value may carry references (a value that is exactly
one reference keeps its JSON type), dotted keys build nested objects (``customer.name``). The
output is that object, so later steps reference ``{{node-4.customer.name}}``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from konnectz_contracts.model import KeyValue, StepBase

__all__ = ["KIND", "Config"]

KIND = "data_forwarder"


class Config(StepBase):
    kind: Literal["data_forwarder"] = "data_forwarder"
    keys: list[KeyValue] = Field(min_length=1, max_length=200)
