"""Formatter (in-house add-on): one text, number or date function applied to a value.

``operation`` picks the function; ``input`` (and every text option) may carry references
(``{{node-1.total}}``). The output is ``{"output": <value>}`` (``extract_pattern`` adds ``groups``).
The functions and their options are listed in docs/addons.md; the rules for dates (time zones,
DST) are in :mod:`konnectz_runner.engine.dates`. Patterns run on the ``regex`` engine with a time limit,
never as code.

From the canvas (``compile_node``, providers in ``PROVIDERS``):
Formatter node (provider ``formatter``) → the runner's ``formatter`` step.

The configuration fields (``configResponses`` / ``selectedAddonsValue``) are the runner's option
names: ``operation`` (``text.upper`` … or the catalogue's short names ``uppercase``,
``date_format`` …), ``input`` and the options the operation needs (``find``, ``to_format`` …).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from konnectz_contracts.compiling import config_values, fail, validated
from konnectz_contracts.formats import DateUnit, check_currency, check_locale, check_pattern, check_zone
from konnectz_contracts.model import StepBase

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = [
    "KIND",
    "MAX_DECIMALS",
    "MAX_PATTERN",
    "OPERATIONS",
    "PROVIDERS",
    "REQUIRED_OPTIONS",
    "Config",
    "compile_node",
]

KIND = "formatter"
ORDER = 2  # its place in the Step union (the CRD's oneOf order)

Operation = Literal[
    "text.upper",
    "text.lower",
    "text.title",
    "text.capitalize",
    "text.trim",
    "text.replace",
    "text.split",
    "text.truncate",
    "text.extract_email",
    "text.extract_url",
    "text.extract_number",
    "text.extract_pattern",
    "text.url_encode",
    "text.url_decode",
    "number.format",
    "number.arithmetic",
    "number.round",
    "number.currency",
    "date.format",
    "date.add",
    "date.subtract",
    "date.convert_timezone",
]
OPERATIONS: tuple[str, ...] = Operation.__args__  # type: ignore[attr-defined]
MAX_PATTERN = 500
MAX_DECIMALS = 12

REQUIRED_OPTIONS: dict[str, tuple[str, ...]] = {
    "text.replace": ("find",),
    "text.truncate": ("max_length",),
    "text.extract_pattern": ("pattern",),
    "number.arithmetic": ("operator", "operand"),
    "number.currency": ("currency",),
    "date.add": ("amount",),
    "date.subtract": ("amount",),
    "date.convert_timezone": ("to_timezone",),
}


class Config(StepBase):
    """One formatter function. Options that an operation does not use are ignored."""

    kind: Literal["formatter"] = "formatter"
    operation: Operation
    input: str = Field(default="", description="The value to format; may carry references")
    # text.replace
    find: str = ""
    replace_with: str = ""
    # text.split: the parts as a list
    separator: str = ","
    # text.truncate
    max_length: int | None = Field(default=None, ge=0, le=1_000_000)
    ellipsis: bool = False
    # text.extract_pattern (a regular expression; timeout-limited)
    pattern: str = Field(default="", max_length=MAX_PATTERN)
    # number.* and date.format
    locale: str = "en_US"
    decimal_places: int | None = Field(default=None, ge=0, le=MAX_DECIMALS)
    rounding: Literal["half_up", "half_even", "up", "down"] = "half_up"
    operator: Literal["add", "subtract", "multiply", "divide"] | None = None
    operand: str = ""
    currency: str = ""
    # date.*
    from_format: Literal["auto", "unix", "unix_ms"] = "auto"
    day_first: bool = False
    to_format: str = Field(default="iso", max_length=100)
    from_timezone: str = Field(default="", description="Zone of dates written without an offset; default: the flow's")
    to_timezone: str = Field(default="", description="Zone of the output; default: the flow's")
    amount: str = Field(default="", description="date.add / date.subtract: a whole number, may be a reference")
    unit: DateUnit = "days"

    @model_validator(mode="after")
    def _check_options(self) -> Config:
        for option in REQUIRED_OPTIONS.get(self.operation, ()):
            value = getattr(self, option)
            if value is None or value == "":
                raise ValueError(f"{self.operation} needs {option}")
        if self.operation == "text.extract_pattern":
            check_pattern(self.pattern)
        if self.operation == "text.split" and not self.separator:
            raise ValueError("text.split needs a separator")
        if self.currency:
            if not check_currency(self.currency.upper()):
                raise ValueError(f"unknown currency {self.currency!r}")
            self.currency = self.currency.upper()
        for name in ("from_timezone", "to_timezone"):
            if getattr(self, name):
                check_zone(getattr(self, name))
        check_locale(self.locale)
        return self


PROVIDERS = ("formatter",)
# The catalogue's short operation names.
ALIASES = {
    "uppercase": "text.upper",
    "lowercase": "text.lower",
    "titlecase": "text.title",
    "capitalize": "text.capitalize",
    "trim": "text.trim",
    "replace": "text.replace",
    "split": "text.split",
    "truncate": "text.truncate",
    "url_encode": "text.url_encode",
    "url_decode": "text.url_decode",
    "number_format": "number.format",
    "currency": "number.currency",
    "round": "number.round",
    "date_format": "date.format",
    "date_add": "date.add",
    "date_subtract": "date.subtract",
    "convert_timezone": "date.convert_timezone",
}
_OPTIONS = set(Config.model_fields) - {"id", "name", "kind", "operation"}


def compile_node(node: Node) -> Config:
    values = config_values(node)
    operation = values.get("operation")
    if not isinstance(operation, str) or not operation.strip():
        raise fail(node, "choose an operation")
    operation = ALIASES.get(operation.strip(), operation.strip())
    if operation not in OPERATIONS:
        raise fail(node, f"unknown operation {operation[:50]!r}")
    options = {k: v for k, v in values.items() if k in _OPTIONS}
    return validated(Config, node, id=node.id, name=node.detail.name or "Formatter", operation=operation, **options)
