import type { FlowNodeData } from '../model/types';

/**
 * A kind's summary naming the add-on's chosen option: the text at selectedAddonsValue[key] through
 * `label`, or null while it is not chosen.
 */
export function addonSummary(key: string, label: (value: string) => string): (data: FlowNodeData) => string | null {
  return (data) => {
    const value = data.selectedAddonsValue?.[key];
    return typeof value === 'string' && value ? label(value) : null;
  };
}
