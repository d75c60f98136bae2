/** The plan's name, as the product spec has it: 'Complete' for Team (task usage is on the dashboard). */
export function planLabel(plan: string): string {
  return plan === 'Team' ? 'Complete' : plan;
}
