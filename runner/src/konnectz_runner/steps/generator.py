"""Generator (in-house add-on): make a value a flow needs — an id, a random value, a date, a list.

``what`` picks the value; the output is ``{"output": <value>}`` (lists add ``count``). Randomness
comes from the operating system's secure source (:mod:`secrets`), so ids and strings are fit for
tokens and codes.

- ``uuid4``: a random UUID; ``uuid7``: a time-ordered UUID (RFC 9562), sortable by creation time;
- ``nanoid``: a URL-safe random id of ``length`` characters (default 21, like Nano ID);
- ``random_number``: between ``min`` and ``max`` inclusive, with ``decimal_places`` (default 0);
- ``random_string``: ``length`` characters from ``charset``;
- ``date``: now, moved by ``amount`` ``unit`` (negative goes back), as ``to_format`` in ``timezone``
  (default: the flow's time zone; formats as in the formatter: iso, date, time, unix, unix_ms or
  an LDML pattern);
- ``list``: ``count`` values of the kind ``item`` (one of the ids, numbers or strings above);
- ``sequence``: ``count`` numbers from ``start`` in steps of ``step``.
"""

from __future__ import annotations

import secrets
import string
import time
import uuid
from decimal import Decimal
from typing import Any, Literal

from pydantic import Field, model_validator

from konnectz_runner import dates
from konnectz_runner.errors import StepError
from konnectz_runner.model import Outcome, StepBase, StepContext
from konnectz_runner.steps.formatter import number_value

__all__ = ["CHARSETS", "KIND", "Config", "generate", "run", "uuid7"]

KIND = "generator"

What = Literal["uuid4", "uuid7", "nanoid", "random_number", "random_string", "date", "list", "sequence"]
ItemKind = Literal["uuid4", "uuid7", "nanoid", "random_number", "random_string"]
Charset = Literal["alphanumeric", "letters", "lowercase", "uppercase", "digits", "hex", "url_safe"]
CHARSETS: dict[str, str] = {
    "alphanumeric": string.ascii_letters + string.digits,
    "letters": string.ascii_letters,
    "lowercase": string.ascii_lowercase,
    "uppercase": string.ascii_uppercase,
    "digits": string.digits,
    "hex": "0123456789abcdef",
    "url_safe": string.ascii_letters + string.digits + "_-",
}
MAX_COUNT = 1000
MAX_LENGTH = 1024


class Config(StepBase):
    kind: Literal["generator"] = "generator"
    what: What
    # random_number
    min: float = 0
    max: float = 100
    decimal_places: int = Field(default=0, ge=0, le=10)
    # nanoid, random_string
    length: int = Field(default=21, ge=1, le=MAX_LENGTH)
    charset: Charset = "alphanumeric"
    # date
    amount: int = Field(default=0, ge=-100_000, le=100_000)
    unit: dates.DateUnit = "days"
    to_format: str = Field(default="iso", max_length=100)
    timezone: str = ""
    locale: str = "en_US"
    # list, sequence
    count: int = Field(default=10, ge=1, le=MAX_COUNT)
    item: ItemKind = "uuid4"
    start: float = 1
    step: float = 1

    @model_validator(mode="after")
    def _check(self) -> Config:
        if self.min > self.max:
            raise ValueError("min must not be greater than max")
        if self.timezone:
            try:
                dates.zone(self.timezone)
            except StepError as exc:
                raise ValueError(str(exc)) from exc
        return self


def uuid7(now_ms: int | None = None) -> uuid.UUID:
    """A version 7 UUID (RFC 9562 §5.7): 48-bit Unix milliseconds, then 74 random bits."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    value = (ms & ((1 << 48) - 1)) << 80 | secrets.randbits(80)
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # variant 10
    return uuid.UUID(int=value)


def _random_number(config: Config) -> int | float:
    scale = 10**config.decimal_places
    low = Decimal(str(config.min)) * scale
    high = Decimal(str(config.max)) * scale
    low_int, high_int = int(low.to_integral_value(rounding="ROUND_CEILING")), int(high.to_integral_value("ROUND_FLOOR"))
    if low_int > high_int:
        raise StepError(f"No number with {config.decimal_places} decimal places lies between min and max")
    picked = Decimal(low_int + secrets.randbelow(high_int - low_int + 1)) / scale
    return number_value(picked)


def _random_string(length: int, charset: str) -> str:
    return "".join(secrets.choice(charset) for _ in range(length))


def _one(kind: str, config: Config) -> Any:
    if kind == "uuid4":
        return str(uuid.uuid4())
    if kind == "uuid7":
        return str(uuid7())
    if kind == "nanoid":
        return _random_string(config.length, CHARSETS["url_safe"])
    if kind == "random_number":
        return _random_number(config)
    return _random_string(config.length, CHARSETS[config.charset])


def generate(config: Config, ctx: StepContext) -> dict[str, Any]:
    """The output of ``config``; raises StepError."""
    if config.what == "date":
        tz = dates.zone(config.timezone or ctx.timezone)
        moment = dates.shift(ctx.now(), config.amount, config.unit, tz)
        return {"output": dates.format_date(moment, config.to_format, tz, config.locale)}
    if config.what == "list":
        values = [_one(config.item, config) for _ in range(config.count)]
        return {"output": values, "count": len(values)}
    if config.what == "sequence":
        start, step = Decimal(str(config.start)), Decimal(str(config.step))
        values = [number_value(start + step * i) for i in range(config.count)]
        return {"output": values, "count": len(values)}
    return {"output": _one(config.what, config)}


async def run(config: Config, ctx: StepContext) -> Outcome:
    recorded: dict[str, Any] = {"what": config.what}
    try:
        output = generate(config, ctx)
    except StepError as exc:
        return Outcome.failed(str(exc), input=recorded)
    return Outcome(output=output, input=recorded)
