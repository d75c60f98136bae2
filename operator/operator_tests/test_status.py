from __future__ import annotations

import re

from konnectz_operator.status import now_rfc3339, set_condition


def test_a_new_condition_gets_all_metav1_fields():
    (cond,) = set_condition(
        None, type_="Ready", status="True", reason="Reconciled", message="ok", generation=4, now="2026-01-01T00:00:00Z"
    )
    assert cond == {
        "type": "Ready",
        "status": "True",
        "reason": "Reconciled",
        "message": "ok",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
        "observedGeneration": 4,
    }


def test_transition_time_moves_only_when_the_status_changes():
    first = set_condition(None, type_="Ready", status="True", reason="A", message="", generation=1, now="T1")
    same = set_condition(first, type_="Ready", status="True", reason="B", message="m", generation=2, now="T2")
    assert same[0]["lastTransitionTime"] == "T1"
    assert same[0]["reason"] == "B"
    assert same[0]["observedGeneration"] == 2
    flipped = set_condition(same, type_="Ready", status="False", reason="C", message="", generation=3, now="T3")
    assert flipped[0]["lastTransitionTime"] == "T3"


def test_other_conditions_are_kept_in_a_stable_order():
    other = {"type": "Available", "status": "True", "reason": "X", "message": "", "lastTransitionTime": "T0"}
    result = set_condition([other], type_="Ready", status="False", reason="R", message="", generation=None, now="T1")
    assert [c["type"] for c in result] == ["Available", "Ready"]
    assert result[0] == other
    assert "observedGeneration" not in result[1]


def test_now_is_rfc3339_utc():
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", now_rfc3339())
