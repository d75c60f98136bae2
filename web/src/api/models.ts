/**
 * Named aliases of the generated schema (src/api/schema.d.ts, from the api's OpenAPI document):
 * no hand-written shapes here. A reply the document leaves loose stays loose.
 */
import type { components } from './schema';

type Schemas = components['schemas'];

export type Profile = Schemas['Profile'];
export type App = Schemas['AppOut'];
export type KonnectListItem = Schemas['KonnectItem'];
export type KonnectEdit = Schemas['KonnectEdit'];
export type SaveKonnectIn = Schemas['SaveKonnectIn'];
export type SaveKonnectOut = Schemas['SaveKonnectOut'];
/** A task log's status (the api's enum): the values a task_log_type or history status filter takes. */
export type TaskLogType = Schemas['TaskLogOut']['status'];
export type TaskLog = Schemas['TaskLogOut'];
export type Task = Schemas['TaskOut'];
/** A run that has not finished (queued, running, waiting in a delay). */
export type ActiveRun = Schemas['ActiveRunOut'];
export type TasksResponse = Schemas['TaskList'];
/** A flow's revision (one publish), in the History panel's list; with its canvas and spec when read alone. */
export type RevisionItem = Schemas['RevisionItem'];
export type RevisionDetail = Schemas['RevisionDetail'];
/** A flow's evaluation set (example inputs and their checks) and one run's result (docs/ai.md, Evaluations). */
export type EvaluationSet = Schemas['EvaluationSetOut'];
export type EvaluationSetIn = Schemas['EvaluationSetIn'];
export type EvaluationRun = Schemas['EvaluationRunOut'];
/** One of the signed-in person's pending approvals (an Approval step waiting for a decision). */
export type PendingApproval = Schemas['PendingApproval'];
