/** Filter conditions (spec §5 Filters): +And/+OR joins, delete beyond the first, one blank left. */
import type { FilterCondition } from '../../model/types';

let counter = 0;
export const blankCondition = (): FilterCondition => ({ id: `c${Date.now().toString(36)}${(counter += 1)}`, field: '', operator: '', valueOfFilter: '', joinWith: '' });

/** A new condition records its join (+And / +OR) on the previous one. */
export function addCondition(list: FilterCondition[], join: 'AND' | 'OR'): FilterCondition[] {
  if (list.length === 0) return [blankCondition()];
  const last = list[list.length - 1];
  return [...list.slice(0, -1), { ...last, joinWith: join }, blankCondition()];
}

/** Removing a condition; the last one removed leaves one blank condition. */
export function removeCondition(list: FilterCondition[], id: string): FilterCondition[] {
  const index = list.findIndex((c) => c.id === id);
  if (index < 0) return list;
  const next = list.filter((c) => c.id !== id);
  if (next.length === 0) return [blankCondition()];
  // The condition now last joins nothing.
  if (index === list.length - 1) next[next.length - 1] = { ...next[next.length - 1], joinWith: '' };
  return next;
}

export function updateCondition(list: FilterCondition[], id: string, patch: Partial<FilterCondition>): FilterCondition[] {
  return list.map((c) => (c.id === id ? { ...c, ...patch } : c));
}
