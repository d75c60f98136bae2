"""Runs the ``formatter`` step; its config and constants are :mod:`konnectz_contracts.steps.formatter`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, ROUND_UP, Decimal, DivisionByZero, InvalidOperation
from typing import Any
from urllib.parse import quote, unquote

import regex
from babel.numbers import format_currency, format_decimal, parse_decimal

from konnectz_contracts.errors import StepError
from konnectz_contracts.refs import resolve, resolve_value
from konnectz_contracts.steps.formatter import OPERATIONS, REQUIRED_OPTIONS, Config
from konnectz_runner.engine import dates
from konnectz_runner.engine.context import Outcome, StepContext

__all__ = ["run"]


REGEX_TIMEOUT_SECONDS = 0.5
_EMAIL = regex.compile(
    r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+"
)
_URL = regex.compile(r"https?://[^\s<>\"'`]+", regex.IGNORECASE)
_NUMBER = regex.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_WORD = regex.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
_ROUNDING = {"half_up": ROUND_HALF_UP, "half_even": ROUND_HALF_EVEN, "up": ROUND_UP, "down": ROUND_DOWN}
_URL_TRAILING = ".,;:!?)]}"


# The options each operation needs (checked when the flow is compiled, before it runs).
# --- helpers ------------------------------------------------------------------------------------
def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))  # numbers, lists, objects as JSON


def to_decimal(value: Any, locale: str = "en_US") -> Decimal:
    """A number from a number or from text such as ``1,234.50``, ``$ 12`` or (locale ``de_DE``) ``1.234,5``."""
    if isinstance(value, bool) or value is None:
        raise StepError(f"{value!r} is not a number")
    if isinstance(value, int | float):
        number = Decimal(str(value))
    else:
        text = str(value).strip()
        try:
            number = Decimal(text)
        except InvalidOperation:
            cleaned = re.sub(r"[^0-9,.\-+\u00a0\u202f' ]", "", text).strip()
            try:
                number = parse_decimal(cleaned, locale=locale.replace("-", "_")) if cleaned else Decimal("NaN")
            except Exception:  # babel raises NumberFormatError (a ValueError) or others on odd input
                number = Decimal("NaN")
    if not number.is_finite():
        raise StepError(f"{_text(value)[:50]!r} is not a number")
    return number


def number_value(number: Decimal) -> int | float:
    """A JSON number: an integer when the value is whole (and exact in JSON), else a float."""
    if number == number.to_integral_value() and abs(number) < 2**53:
        return int(number)
    return float(number)


def _regex_search(pattern: Any, text: str) -> Any:
    try:
        return regex.search(pattern, text, timeout=REGEX_TIMEOUT_SECONDS)
    except TimeoutError as exc:
        raise StepError(f"The pattern took longer than {REGEX_TIMEOUT_SECONDS} s on this text") from exc


def _zones(config: Config, ctx: StepContext) -> tuple[Any, Any]:
    source = dates.zone(config.from_timezone or ctx.timezone)
    target = dates.zone(config.to_timezone or ctx.timezone)
    return source, target


def _amount(text: str) -> int:
    number = to_decimal(text)
    if number != number.to_integral_value():
        raise StepError(f"The amount must be a whole number, not {text!r}")
    return int(number)


# --- functions: each takes (value, resolved options, ctx) and returns the output ----------------
Options = dict[str, Any]
Function = Callable[[Any, Config, Options, StepContext], Any]


def _upper(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    return _text(v).upper()


def _lower(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    return _text(v).lower()


def _title(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    # Word-wise (str.title would also capitalise after apostrophes: "don'T").
    return _WORD.sub(lambda m: m.group(0)[:1].upper() + m.group(0)[1:].lower(), _text(v))


def _capitalize(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    text = _text(v)
    return text[:1].upper() + text[1:]


def _trim(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    return _text(v).strip()


def _replace(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    return _text(v).replace(o["find"], o["replace_with"])


def _split(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    return [part.strip() for part in _text(v).split(unescape(o["separator"]))]


def _truncate(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    text = _text(v)
    limit = c.max_length or 0
    if len(text) <= limit:
        return text
    if c.ellipsis and limit >= 1:
        return text[: limit - 1].rstrip() + "…"
    return text[:limit]


def _extract_email(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    match = _regex_search(_EMAIL, _text(v))
    return match.group(0) if match else ""


def _extract_url(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    match = _regex_search(_URL, _text(v))
    return match.group(0).rstrip(_URL_TRAILING) if match else ""


def _extract_number(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    match = _regex_search(_NUMBER, _text(v))
    if not match:
        return ""
    return number_value(Decimal(match.group(0).replace(",", "")))


def _extract_pattern(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    match = _regex_search(c.pattern, _text(v))
    if not match:
        return {"output": "", "groups": {}}
    groups = {str(i): g or "" for i, g in enumerate(match.groups(), start=1)}
    groups.update({name: g or "" for name, g in match.groupdict().items()})
    return {"output": match.group(0), "groups": groups}


def _url_encode(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    return quote(_text(v), safe="")


def _url_decode(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    return unquote(_text(v).replace("+", " "))


def _number_format(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    number = to_decimal(v, c.locale)
    locale = dates.parse_locale(c.locale)
    if c.decimal_places is None:
        return format_decimal(number, locale=locale)
    quantized = number.quantize(Decimal(1).scaleb(-c.decimal_places), rounding=_ROUNDING[c.rounding])
    pattern = "#,##0" + ("." + "0" * c.decimal_places if c.decimal_places else "")
    return format_decimal(quantized, format=pattern, locale=locale, decimal_quantization=False)


def _arithmetic(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    left, right = to_decimal(v, c.locale), to_decimal(o["operand"], c.locale)
    try:
        if c.operator == "add":
            result = left + right
        elif c.operator == "subtract":
            result = left - right
        elif c.operator == "multiply":
            result = left * right
        else:
            if right == 0:
                raise StepError("Cannot divide by zero")
            result = left / right
    except (InvalidOperation, DivisionByZero) as exc:
        raise StepError(f"Cannot compute {left} {c.operator} {right}") from exc
    if c.decimal_places is not None:
        result = result.quantize(Decimal(1).scaleb(-c.decimal_places), rounding=_ROUNDING[c.rounding])
    return number_value(result)


def _round(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    number = to_decimal(v, c.locale)
    places = c.decimal_places or 0
    try:
        return number_value(number.quantize(Decimal(1).scaleb(-places), rounding=_ROUNDING[c.rounding]))
    except InvalidOperation as exc:
        raise StepError(f"Cannot round {number} to {places} decimal places") from exc


def _currency(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    number = to_decimal(v, c.locale)
    return format_currency(number, c.currency, locale=dates.parse_locale(c.locale))


def _date_in(v: Any, c: Config, ctx: StepContext) -> Any:
    source, target = _zones(c, ctx)
    return dates.parse_date(v, source, from_format=c.from_format, day_first=c.day_first), target


def _date_format(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    moment, target = _date_in(v, c, ctx)
    return dates.format_date(moment, o["to_format"], target, c.locale)


def _date_add(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    moment, target = _date_in(v, c, ctx)
    amount = _amount(o["amount"])
    if c.operation == "date.subtract":
        amount = -amount
    return dates.format_date(dates.shift(moment, amount, c.unit, target), o["to_format"], target, c.locale)


def _convert_timezone(v: Any, c: Config, o: Options, ctx: StepContext) -> Any:
    moment, target = _date_in(v, c, ctx)
    return dates.format_date(moment, o["to_format"], target, c.locale)


FUNCTIONS: dict[str, Function] = {
    "text.upper": _upper,
    "text.lower": _lower,
    "text.title": _title,
    "text.capitalize": _capitalize,
    "text.trim": _trim,
    "text.replace": _replace,
    "text.split": _split,
    "text.truncate": _truncate,
    "text.extract_email": _extract_email,
    "text.extract_url": _extract_url,
    "text.extract_number": _extract_number,
    "text.extract_pattern": _extract_pattern,
    "text.url_encode": _url_encode,
    "text.url_decode": _url_decode,
    "number.format": _number_format,
    "number.arithmetic": _arithmetic,
    "number.round": _round,
    "number.currency": _currency,
    "date.format": _date_format,
    "date.add": _date_add,
    "date.subtract": _date_add,
    "date.convert_timezone": _convert_timezone,
}
assert set(FUNCTIONS) == set(OPERATIONS)


def unescape(separator: str) -> str:
    r"""``\n``, ``\t`` and ``\r`` typed in a form mean the control characters."""
    return separator.replace("\\n", "\n").replace("\\t", "\t").replace("\\r", "\r")


def apply(config: Config, ctx: StepContext, warnings: list[str] | None = None) -> tuple[Any, dict[str, Any]]:
    """(output, recorded input) of ``config`` in ``ctx``; raises StepError."""
    value = resolve_value(config.input, ctx.outputs, warnings)
    options = {
        name: resolve(getattr(config, name), ctx.outputs, warnings)
        for name in ("find", "replace_with", "separator", "operand", "amount", "to_format")
    }
    recorded: dict[str, Any] = {"operation": config.operation, "input": value}
    recorded.update({k: v for k, v in options.items() if k in _used_options(config)})
    output = FUNCTIONS[config.operation](value, config, options, ctx)
    if not (isinstance(output, dict) and "output" in output):
        output = {"output": output}
    return output, recorded


def _used_options(config: Config) -> set[str]:
    family = config.operation.split(".", 1)[0]
    used = set(REQUIRED_OPTIONS.get(config.operation, ()))
    if config.operation == "text.replace":
        used.add("replace_with")
    if config.operation == "text.split":
        used.add("separator")
    if family == "date":
        used.add("to_format")
    return used


async def run(config: Config, ctx: StepContext) -> Outcome:
    warnings: list[str] = []
    recorded: dict[str, Any] = {"operation": config.operation}
    try:
        output, recorded = apply(config, ctx, warnings)
    except StepError as exc:
        if warnings:
            recorded["warnings"] = warnings
        return Outcome.failed(f"{config.operation}: {exc}", input=recorded)
    if warnings:
        recorded["warnings"] = warnings
    return Outcome(output=output, input=recorded)
