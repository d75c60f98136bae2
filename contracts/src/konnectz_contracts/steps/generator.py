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

From the canvas (``compile_node``, providers in ``PROVIDERS``):
Generator node (provider ``generator``) → the runner's ``generator`` step.

``what`` (or the catalogue's ``type``: ``number``, ``uuid``, ``password``, ``date``) picks the value;
the other fields are the runner's option names (``min``, ``max``, ``length``, ``count`` …).
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from konnectz_contracts.compiling import config_values, fail, validated
from konnectz_contracts.formats import DateUnit, check_zone
from konnectz_contracts.model import StepBase

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = ["CHARSETS", "KIND", "PROVIDERS", "Config", "compile_node"]

KIND = "generator"
ORDER = 5  # its place in the Step union (the CRD's oneOf order)

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
    unit: DateUnit = "days"
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
            check_zone(self.timezone)
        return self


PROVIDERS = ("generator",)
ALIASES = {"number": "random_number", "uuid": "uuid4", "password": "random_string", "string": "random_string"}
_OPTIONS = set(Config.model_fields) - {"id", "name", "kind", "what"}


def compile_node(node: Node) -> Config:
    values = config_values(node)
    what = values.get("what", values.get("type"))
    if not isinstance(what, str) or not what.strip():
        raise fail(node, "choose what to generate")
    what = ALIASES.get(what.strip(), what.strip())
    options = {k: v for k, v in values.items() if k in _OPTIONS}
    return validated(Config, node, id=node.id, name=node.detail.name or "Generator", what=what, **options)
