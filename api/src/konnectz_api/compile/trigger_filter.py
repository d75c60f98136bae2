"""The trigger test drawer's AND/OR and labels (canvas spec §2 Trigger test drawer, §4 Trigger handling).

Before the trigger's Test & Review runs, the editor's drawer asks which fields the sample must
carry: the *labels* are keys of the trigger's data (the outputs of its last test, which later
nodes map; dotted for nested values, ``customer.email``, list items by index), the join says how
they combine: ``AND`` (the default) — the sample has a value for every checked label, ``OR`` — for
at least one. "Has a value" is the Filter add-on's *Is Exist*: the key is present and its value is
neither null nor empty text. No labels keeps any sample.

The test answers the first sample that qualifies (a trigger that offers several candidates, such
as a list of recent items, passes them newest first); when none does, the test is refused with
:func:`no_match` and the node keeps its earlier result. The choice applies to testing only: runs
are not filtered by it (the Filter add-on does that).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from konnectz_api.schemas import TriggerFilterIn
from konnectz_runner.apps import dig

__all__ = ["choose_sample", "describe", "has_value", "matches", "no_match"]


def has_value(sample: Any, label: str) -> bool:
    value = dig(sample, label)
    return value is not None and value != ""


def matches(sample: Any, choice: TriggerFilterIn | None) -> bool:
    if choice is None or not choice.labels:
        return True
    found = (has_value(sample, label) for label in choice.labels)
    return all(found) if choice.join == "AND" else any(found)


def choose_sample(samples: Iterable[Any], choice: TriggerFilterIn | None) -> Any | None:
    """The first sample that has the chosen labels, or None."""
    return next((sample for sample in samples if matches(sample, choice)), None)


def describe(choice: TriggerFilterIn) -> str:
    """'a value for name and email' (AND) or 'a value for name or email' (OR)."""
    labels = [f"'{label[:100]}'" for label in choice.labels[:10]]
    if len(choice.labels) > 10:
        labels.append(f"{len(choice.labels) - 10} more")
    word = " and " if choice.join == "AND" else " or "
    if len(labels) == 1:
        return f"a value for {labels[0]}"
    return f"a value for {', '.join(labels[:-1])}{word}{labels[-1]}"


def no_match(choice: TriggerFilterIn) -> str:
    either = "every one of" if choice.join == "AND" else "at least one of"
    return (
        f"No sample of the trigger has {describe(choice)} ({choice.join}: {either} the checked labels). "
        "Uncheck labels, choose OR, or send the trigger new data, then test again."
    )
