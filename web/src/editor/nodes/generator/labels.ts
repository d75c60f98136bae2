/** The generator's kinds (the runner's names), the options each one shows, and their words. */
export const GENERATOR_KINDS: Record<string, string[]> = {
  uuid4: [],
  uuid7: [],
  nanoid: ['length'],
  random_number: ['min', 'max', 'decimal_places'],
  random_string: ['length', 'charset'],
  date: ['amount', 'unit', 'to_format', 'timezone'],
  list: ['count', 'item'],
  sequence: ['count', 'start', 'step'],
};

/** Each kind in words; its id is the secondary text. */
export const GENERATOR_LABELS: Record<string, string> = {
  uuid4: 'Random ID (UUID v4)',
  uuid7: 'Time-ordered ID (UUID v7)',
  nanoid: 'Short random ID (Nano ID)',
  random_number: 'Random number',
  random_string: 'Random text',
  date: 'Date',
  list: 'List',
  sequence: 'Number sequence',
};

export const GENERATOR_OPTION_LABELS: Record<string, string> = {
  length: 'Length',
  min: 'Minimum',
  max: 'Maximum',
  decimal_places: 'Decimal places',
  charset: 'Characters to use',
  amount: 'Amount',
  unit: 'Unit (minutes, hours, days, ...)',
  to_format: 'Format',
  timezone: 'Time zone',
  count: 'How many',
  item: 'Item',
  start: 'Start at',
  step: 'Step',
};
