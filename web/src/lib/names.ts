/** Name truncation rules of the spec (§9) and the label of an unnamed flow. */

/** Cut `name` when longer than `max` to `keep` characters plus `suffix`. */
export function truncate(name: string, max: number, keep: number, suffix: string): string {
  return name.length > max ? `${name.slice(0, keep)}${suffix}` : name;
}

/** App grid and app picker: longer than 9 becomes 7 plus '...'. */
export const pickerName = (name: string) => truncate(name, 9, 7, '...');

/** Node card header: longer than 13 becomes 11 plus '..'. */
export const nodeCardName = (name: string) => truncate(name, 13, 11, '..');

/** Manage Accounts drawer: names cut beyond 10 characters. */
export const accountName = (name: string) => truncate(name, 10, 10, '...');

export interface FlowNameSource {
  konnect_name?: string | null;
  left_app?: { name: string } | null;
  right_apps?: { app_name: string }[] | null;
}

/** A flow without a name is labelled by its app names joined with dashes. */
export function flowLabel(flow: FlowNameSource): string {
  const name = flow.konnect_name?.trim();
  if (name) return name;
  const apps = [flow.left_app?.name, ...(flow.right_apps ?? []).map((a) => a.app_name)].filter(
    (n): n is string => Boolean(n),
  );
  return apps.join('-');
}

/** Status Draft is shown as Unpublished. */
export function statusLabel(status: string): string {
  return status === 'Draft' ? 'Unpublished' : status;
}
