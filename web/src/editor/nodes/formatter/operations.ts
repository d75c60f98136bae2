/** The formatter's functions (the runner's names) and the options each one shows. */
export const FORMATTER_OPERATIONS: Record<string, string[]> = {
  'text.upper': [],
  'text.lower': [],
  'text.title': [],
  'text.capitalize': [],
  'text.trim': [],
  'text.replace': ['find', 'replace_with'],
  'text.split': ['separator'],
  'text.truncate': ['max_length'],
  'text.extract_email': [],
  'text.extract_url': [],
  'text.extract_number': [],
  'text.extract_pattern': ['pattern'],
  'text.url_encode': [],
  'text.url_decode': [],
  'number.format': ['locale', 'decimal_places'],
  'number.arithmetic': ['operator', 'operand'],
  'number.round': ['decimal_places'],
  'number.currency': ['currency', 'locale'],
  'date.format': ['to_format', 'to_timezone'],
  'date.add': ['amount', 'unit'],
  'date.subtract': ['amount', 'unit'],
  'date.convert_timezone': ['to_timezone'],
};

/** Each operation in words (what the editor shows); the id is the secondary text. */
export const FORMATTER_LABELS: Record<string, string> = {
  'text.upper': 'Uppercase',
  'text.lower': 'Lowercase',
  'text.title': 'Title case',
  'text.capitalize': 'Capitalize first letter',
  'text.trim': 'Trim spaces',
  'text.replace': 'Find and replace',
  'text.split': 'Split text',
  'text.truncate': 'Shorten text',
  'text.extract_email': 'Extract email address',
  'text.extract_url': 'Extract web address (URL)',
  'text.extract_number': 'Extract number',
  'text.extract_pattern': 'Extract by pattern',
  'text.url_encode': 'Encode for a URL',
  'text.url_decode': 'Decode from a URL',
  'number.format': 'Format number',
  'number.arithmetic': 'Arithmetic',
  'number.round': 'Round number',
  'number.currency': 'Format as currency',
  'date.format': 'Format date',
  'date.add': 'Add time to a date',
  'date.subtract': 'Subtract time from a date',
  'date.convert_timezone': 'Convert time zone',
};

/** The groups of the operation list, by the id's prefix. */
export const FORMATTER_GROUPS: Record<string, string> = { text: 'Text', number: 'Numbers', date: 'Dates' };

/** The catalogue's short names of the operations (the api takes both). */
export const OPERATION_ALIASES: Record<string, string> = {
  uppercase: 'text.upper',
  lowercase: 'text.lower',
  titlecase: 'text.title',
  capitalize: 'text.capitalize',
  trim: 'text.trim',
  replace: 'text.replace',
  split: 'text.split',
  truncate: 'text.truncate',
  url_encode: 'text.url_encode',
  url_decode: 'text.url_decode',
  number_format: 'number.format',
  currency: 'number.currency',
  round: 'number.round',
  date_format: 'date.format',
  date_add: 'date.add',
  date_subtract: 'date.subtract',
  convert_timezone: 'date.convert_timezone',
};

/** The operation's id (a short catalogue name resolved). */
export const canonicalOperation = (op: string): string => OPERATION_ALIASES[op] ?? op;

/** An operation in words; an unknown id shows as itself. */
export const operationLabel = (op: string): string => FORMATTER_LABELS[canonicalOperation(op)] ?? op;

/** The operation select's options: grouped (Text, Numbers, Dates), each in words with its id as secondary text. */
export function operationOptions(): { label: string; options: { value: string; label: string; hint: string }[] }[] {
  return Object.entries(FORMATTER_GROUPS).map(([prefix, group]) => ({
    label: group,
    options: Object.keys(FORMATTER_OPERATIONS)
      .filter((op) => op.startsWith(`${prefix}.`))
      .map((op) => ({ value: op, label: operationLabel(op), hint: op })),
  }));
}

export const OPTION_LABELS: Record<string, string> = {
  find: 'Find',
  replace_with: 'Replace With',
  separator: 'Separator',
  max_length: 'Max Length',
  pattern: 'Pattern',
  locale: 'Locale',
  decimal_places: 'Decimal Places',
  operator: 'Operator (add, subtract, multiply, divide)',
  operand: 'Operand',
  currency: 'Currency (ISO 4217)',
  to_format: 'To Format',
  to_timezone: 'To Time Zone',
  amount: 'Amount',
  unit: 'Unit (minutes, hours, days, ...)',
};
