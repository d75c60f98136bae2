"""Form input trigger: a run starts when someone submits the konnect's hosted form.

The runner serves the form at ``/forms/<token>`` (the token is matched in full, as for webhooks):

- ``GET`` renders an HTML page with the fields the user defined (:func:`render_form`), no
  JavaScript, every text escaped, behind a strict Content-Security-Policy;
- ``POST`` (``application/x-www-form-urlencoded`` from the page, ``multipart/form-data`` or JSON)
  checks the submission (:func:`check_submission`): required fields, the field types, select
  options, lengths. A bad submission shows the page again with a message beside each field (400);
  a good one is stored as a run whose trigger output is ``{<field key>: <value>, ...}`` and answers
  with the thank-you page (or ``{"status": "accepted", "run_id": ...}`` when JSON was sent or asked for).

Field types and their values in the trigger output: ``text``, ``textarea`` (a string),
``email`` (a string with one ``@`` and a dot in the domain), ``number`` (an int, or a float when it
has decimals), ``date`` (``YYYY-MM-DD``), ``select`` (one of ``options``), ``checkbox`` (a bool).
Keys the form does not define are ignored. An empty optional field is left out.

From the canvas (``compile_trigger``, providers in ``PROVIDERS``):
Form input trigger (provider ``form_input``) → the runner's ``form`` trigger.

The spec does not fix where the editor keeps the form, so the node carries it in its data:
``formFields`` (a list of ``{key, label, type, required, options, placeholder}``; ``type`` one of
text, textarea, email, number, date, select, checkbox) and, optionally, ``formTitle``,
``formDescription``, ``submitLabel`` and ``successMessage`` (also accepted in
``selectedAddonsValue``). The form is served at ``/forms/<the konnect's webhook token>``; each
submission starts a run whose trigger output maps field keys to the submitted values.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from konnectz_contracts.compiling import TriggerInput, fail, validated
from konnectz_contracts.model import Strict

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = [
    "FIELD_TYPES",
    "PAGE_HEADERS",
    "PROVIDERS",
    "FormField",
    "FormTrigger",
    "check_submission",
    "check_values",
    "compile_trigger",
    "render_done",
    "render_form",
]

FIELD_TYPES = ("text", "textarea", "email", "number", "date", "select", "checkbox")
FieldType = Literal["text", "textarea", "email", "number", "date", "select", "checkbox"]
REQUIRED = "This field is required"
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")
# Security headers of the hosted pages: no script, no framing, posts only to the page itself.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class FormField(Strict):
    """One input of the form. ``key`` is how later steps refer to it: ``{{node-1.<key>}}``."""

    key: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
    label: str = Field(min_length=1, max_length=200)
    type: FieldType = "text"
    required: bool = False
    options: list[str] = Field(default_factory=list, max_length=100, description="The choices of a select")
    placeholder: str = Field(default="", max_length=200)
    max_length: int = Field(default=1000, ge=1, le=10_000, description="Longest text accepted")

    @model_validator(mode="after")
    def _options(self) -> FormField:
        if self.type == "select" and not self.options:
            raise ValueError(f"field {self.key}: a select needs options")
        if self.type != "select" and self.options:
            raise ValueError(f"field {self.key}: only a select has options")
        return self


class FormTrigger(Strict):
    """A run starts when the form at ``/forms/<token>`` is submitted."""

    kind: Literal["form"] = "form"
    token: str = Field(min_length=20)
    title: str = Field(default="Form", min_length=1, max_length=200)
    description: str = Field(default="", max_length=2000)
    submit_label: str = Field(default="Submit", min_length=1, max_length=50)
    success_message: str = Field(default="Thank you! Your response has been received.", max_length=500)
    fields: list[FormField] = Field(min_length=1, max_length=50)

    @model_validator(mode="after")
    def _unique_keys(self) -> FormTrigger:
        keys = [f.key for f in self.fields]
        if len(set(keys)) != len(keys):
            raise ValueError("form field keys must be unique")
        return self


def _number(text: str) -> int | float:
    try:
        value = Decimal(text)
    except InvalidOperation as exc:
        raise ValueError("Enter a number") from exc
    if not value.is_finite() or abs(value) > Decimal(10) ** 15:
        raise ValueError("Enter a number")
    if value == value.to_integral_value():
        return int(value)
    result = float(value)
    if not math.isfinite(result):
        raise ValueError("Enter a number")
    return result


def _value(spec: FormField, raw: Any) -> Any:
    """The checked value of one field (raw is what was sent); raises ValueError with the message to show."""
    if spec.type == "checkbox":
        if raw in (None, "", False):
            if spec.required:
                raise ValueError(REQUIRED)
            return False
        if raw in (True, "on", "true", "1", "yes"):
            return True
        raise ValueError("Tick the box or leave it empty")
    if isinstance(raw, list | dict):
        raise ValueError("Give one value")
    if isinstance(raw, bool):
        raise ValueError("Give a text")
    text = "" if raw is None else str(raw).strip()
    if "\x00" in text:
        raise ValueError("The text contains a NUL character")
    if not text:
        if spec.required:
            raise ValueError(REQUIRED)
        return None
    if len(text) > spec.max_length:
        raise ValueError(f"At most {spec.max_length} characters")
    if spec.type == "email":
        if not _EMAIL.match(text):
            raise ValueError("Enter an email address")
        return text
    if spec.type == "number":
        return _number(text)
    if spec.type == "date":
        try:
            if len(text) != 10:
                raise ValueError(text)
            return date.fromisoformat(text).isoformat()
        except ValueError as exc:
            raise ValueError("Enter a date as YYYY-MM-DD") from exc
    if spec.type == "select" and text not in spec.options:
        raise ValueError("Choose one of the options")
    return text


def check_submission(trigger: FormTrigger, data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(values, errors): the trigger output of a good submission, or a message per bad field."""
    return check_values(trigger.fields, data)


def check_values(fields: Sequence[FormField], data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(values, errors) of ``data`` against ``fields``: the checked values, or a message per bad field."""
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for spec in fields:
        try:
            value = _value(spec, data.get(spec.key))
        except ValueError as exc:
            errors[spec.key] = str(exc)
            continue
        if value is not None:
            values[spec.key] = value
    return values, errors


_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f6fb;color:#1f2a44;margin:0}
main{max-width:560px;margin:40px auto;background:#fff;border-radius:8px;padding:32px;box-shadow:0 2px 8px #0001}
h1{font-size:1.5rem;margin:0 0 8px}p.description{color:#55607a;white-space:pre-line}
label{display:block;font-weight:600;margin:18px 0 6px}.req{color:#c0392b}
input,textarea,select{width:100%;box-sizing:border-box;padding:9px 10px;border:1px solid #c7cedd;border-radius:6px;
font:inherit}input[type=checkbox]{width:auto}textarea{min-height:110px}
.error{color:#c0392b;font-size:.9rem;margin-top:4px}.invalid{border-color:#c0392b}
button{margin-top:24px;background:#2e5bff;color:#fff;border:0;border-radius:6px;padding:11px 22px;font:inherit;
cursor:pointer}.notice{background:#fdecea;color:#8a1f11;padding:10px 12px;border-radius:6px}
"""


def _page(title: str, body: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body><main>{body}</main></body></html>"
    )


def _input(spec: FormField, value: Any, error: str | None) -> str:
    name = html.escape(spec.key)
    ident = f"f-{name}"
    cls = ' class="invalid"' if error else ""
    required = " required" if spec.required else ""
    shown = "" if value is None or isinstance(value, list | dict) else html.escape(str(value))
    placeholder = f' placeholder="{html.escape(spec.placeholder)}"' if spec.placeholder else ""
    star = ' <span class="req" aria-hidden="true">*</span>' if spec.required else ""
    label = f'<label for="{ident}">{html.escape(spec.label)}{star}</label>'
    if spec.type == "textarea":
        control = (
            f'<textarea id="{ident}" name="{name}" maxlength="{spec.max_length}"{placeholder}{required}{cls}>'
            f"{shown}</textarea>"
        )
    elif spec.type == "select":
        chosen = str(value) if isinstance(value, str) else None
        options = ['<option value="">Choose…</option>'] + [
            f'<option value="{html.escape(o)}"{" selected" if o == chosen else ""}>{html.escape(o)}</option>'
            for o in spec.options
        ]
        control = f'<select id="{ident}" name="{name}"{required}{cls}>{"".join(options)}</select>'
    elif spec.type == "checkbox":
        checked = " checked" if value in (True, "on", "true", "1", "yes") else ""
        control = f'<input type="checkbox" id="{ident}" name="{name}"{checked}{required}{cls}>'
    else:
        kind = {"email": "email", "number": "text", "date": "date"}.get(spec.type, "text")
        mode = ' inputmode="decimal"' if spec.type == "number" else ""
        control = (
            f'<input type="{kind}" id="{ident}" name="{name}" value="{shown}" maxlength="{spec.max_length}"'
            f"{mode}{placeholder}{required}{cls}>"
        )
    message = f'<div class="error" role="alert">{html.escape(error)}</div>' if error else ""
    return label + control + message


def render_form(
    trigger: FormTrigger, *, values: dict[str, Any] | None = None, errors: dict[str, str] | None = None
) -> str:
    """The form page; after a bad submission ``values`` refills it and ``errors`` name each problem."""
    values = values or {}
    errors = errors or {}
    parts = [f"<h1>{html.escape(trigger.title)}</h1>"]
    if trigger.description:
        parts.append(f'<p class="description">{html.escape(trigger.description)}</p>')
    if errors:
        parts.append('<p class="notice">Please correct the fields marked below.</p>')
    parts.append('<form method="post" accept-charset="utf-8" novalidate>')
    parts.extend(_input(spec, values.get(spec.key), errors.get(spec.key)) for spec in trigger.fields)
    parts.append(f'<button type="submit">{html.escape(trigger.submit_label)}</button></form>')
    return _page(trigger.title, "".join(parts))


def render_done(trigger: FormTrigger) -> str:
    """The page shown after a submission was stored."""
    return _page(trigger.title, f"<h1>{html.escape(trigger.title)}</h1><p>{html.escape(trigger.success_message)}</p>")


PROVIDERS = ("form_input", "form")

_OPTIONAL = {
    "formTitle": "title",
    "formDescription": "description",
    "submitLabel": "submit_label",
    "successMessage": "success_message",
}


def compile_trigger(node: Node, given: TriggerInput) -> FormTrigger:
    data = node.data
    extra = {**(data.model_extra or {}), **(data.selectedAddonsValue or {})}
    fields = extra.get("formFields")
    if not isinstance(fields, list) or not fields:
        raise fail(node, "Add at least one field to the form")
    options = {target: extra[source] for source, target in _OPTIONAL.items() if extra.get(source)}
    return validated(FormTrigger, node, token=given.webhook_token, fields=fields, **options)


#: This kind's model in the :data:`~konnectz_contracts.triggers.Trigger` union, at place ``ORDER``.
MODEL = FormTrigger
ORDER = 3
