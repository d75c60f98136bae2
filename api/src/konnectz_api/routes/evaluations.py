"""Evaluations of a flow: its example inputs with checks (read, replace), and a run that scores a revision.

Scoped like the other flow routes: the account's own flows (404 for any other); a team member reads at
any level, replaces the set and runs it with Create. The logic is :mod:`konnectz_api.services.evaluations`.
"""

from __future__ import annotations

from fastapi import APIRouter

from konnectz_api.deps import CurrentUser, SessionDep, SettingsDep
from konnectz_api.params import IdPath
from konnectz_api.schemas import EvaluationRunIn, EvaluationRunOut, EvaluationSetIn, EvaluationSetOut, Message
from konnectz_api.services import evaluations as service

router = APIRouter(prefix="/api/v1/konnects", tags=["evaluations"])

#: Time the HTTP run leaves itself under the request deadline, to answer with what it has.
REPLY_MARGIN_SECONDS = 5.0


@router.get(
    "/{konnect_id}/evaluations",
    response_model=EvaluationSetOut,
    summary="A flow's evaluation set: example inputs and their checks",
    description="An empty set (no cases, `updated_at` null) when the flow has none yet. `last_run`: the score of "
    "the last finished run.",
)
def get_evaluations(konnect_id: IdPath, user: CurrentUser, session: SessionDep) -> EvaluationSetOut:
    return service.get_set(session, user, konnect_id)


@router.put(
    "/{konnect_id}/evaluations",
    response_model=EvaluationSetOut,
    responses={422: {"model": Message}},
    summary="Replace a flow's evaluation set",
    description="Each case: a `name`, an `input` (the trigger's output for the case) and `checks` on a step's "
    "output (`step`, default the last step that ran; `path`, dotted; `op` equals, contains, matches, exists, "
    "between or schema). Limits: 200 cases, 64 KiB of input each, 20 checks per case, 32 KiB per expected "
    "value or schema, 1000 characters per pattern (422 naming the limit).",
)
def put_evaluations(
    konnect_id: IdPath, body: EvaluationSetIn, user: CurrentUser, session: SessionDep
) -> EvaluationSetOut:
    saved = service.save_set(session, user, konnect_id, body)
    session.commit()
    return saved


@router.post(
    "/{konnect_id}/evaluations/run",
    response_model=EvaluationRunOut,
    responses={404: {"model": Message}, 422: {"model": Message}, 429: {"model": Message}},
    summary="Run a flow's evaluations against a revision and score them",
    description="Runs the whole flow once per case, headless, with the case's input as the trigger's output: no "
    'task log, no task of the quota. `revision`: a number or "draft"; default the live revision, else the draft. '
    "The reply: each case's result with each check's actual value, `score` = passed / total and `passed_threshold` "
    "(score ≥ `threshold`, default the set's). Cases run 60 s at most each; the run stops under the request "
    "deadline (cases left are NOT_RUN and fail). 422: no cases, or the draft does not compile. 429: this flow's "
    "evaluation is already running, or the account runs 2 already.",
)
async def run_evaluations(
    konnect_id: IdPath,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    body: EvaluationRunIn | None = None,
) -> EvaluationRunOut:
    seconds = max(1.0, settings.request_deadline_seconds - REPLY_MARGIN_SECONDS)
    return await service.run_evaluation(
        session, settings, user, konnect_id, body or EvaluationRunIn(), run_seconds=seconds
    )
