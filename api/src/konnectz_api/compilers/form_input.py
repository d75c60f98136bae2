"""Form input trigger (provider ``form_input``) → the runner's ``form`` trigger.

The spec does not fix where the editor keeps the form, so the node carries it in its data:
``formFields`` (a list of ``{key, label, type, required, options, placeholder}``; ``type`` one of
text, textarea, email, number, date, select, checkbox) and, optionally, ``formTitle``,
``formDescription``, ``submitLabel`` and ``successMessage`` (also accepted in
``selectedAddonsValue``). The form is served at ``/forms/<the konnect's webhook token>``; each
submission starts a run whose trigger output maps field keys to the submitted values.
"""

from __future__ import annotations

from typing import Any

from konnectz_api.compilers._common import TriggerInput, fail, validated
from konnectz_contracts.triggers import FormTrigger

PROVIDERS = ("form_input", "form")

_OPTIONAL = {
    "formTitle": "title",
    "formDescription": "description",
    "submitLabel": "submit_label",
    "successMessage": "success_message",
}


def compile_trigger(node: Any, given: TriggerInput) -> FormTrigger:
    data = node.data
    extra = {**(data.model_extra or {}), **(data.selectedAddonsValue or {})}
    fields = extra.get("formFields")
    if not isinstance(fields, list) or not fields:
        raise fail(node, "Add at least one field to the form")
    options = {target: extra[source] for source, target in _OPTIONAL.items() if extra.get(source)}
    return validated(FormTrigger, node, token=given.webhook_token, fields=fields, **options)
