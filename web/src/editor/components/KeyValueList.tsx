import { DeleteOutlined, LockOutlined, PlusOutlined, UnlockOutlined } from '@ant-design/icons';
import { Button, Input, Tooltip } from 'antd';
import { isDefaultSecret, SECRET_MASK } from '../model/secrets';
import type { KeyValue } from '../model/types';
import { RefInput } from './RefInput';

interface Props {
  nodeId: string;
  label: string;
  items: KeyValue[];
  onChange: (items: KeyValue[]) => void;
  /** data-testid stem: `<stem>-add`, `<stem>-key-<i>`, `<stem>-value-<i>`, `<stem>-remove-<i>`, `<stem>-secret-<i>`. */
  testId: string;
  /**
   * Rows may be secret (API Call headers and params): a lock per row. Credential names
   * (model/secrets.ts) are always secret, as the api stores them whatever the editor sends: their lock
   * is on and cannot be turned off; the user may lock any other row. A secret value is stored
   * encrypted and comes back as the mask: it can be replaced, never read back.
   */
  secrets?: boolean;
}

/**
 * The row after its key changed: a credential name locks it; otherwise the lock follows the name's
 * default unless the user set it otherwise. A row that stops being secret loses the mask (it is no value).
 */
export function withKey(item: KeyValue, key: string): KeyValue {
  const automatic = (item.secret ?? false) === isDefaultSecret(item.key);
  const secret = isDefaultSecret(key) || (automatic ? false : (item.secret ?? false));
  return { ...item, key, secret, value: !secret && item.value === SECRET_MASK ? '' : item.value };
}

/**
 * The row after its lock was toggled; a credential name stays secret. Turning the lock off on a stored
 * secret empties the value (the mask is no value).
 */
export function withSecret(item: KeyValue, secret: boolean): KeyValue {
  const next = secret || isDefaultSecret(item.key);
  return { ...item, secret: next, value: !next && item.value === SECRET_MASK ? '' : item.value };
}

export function KeyValueList({ nodeId, label, items, onChange, testId, secrets = false }: Props) {
  const update = (index: number, next: (item: KeyValue) => KeyValue) =>
    onChange(items.map((item, i) => (i === index ? next(item) : item)));

  return (
    <div className="kz-kv">
      <div className="kz-kv-head">
        <span className="kz-field-label">{label}</span>
        <Button
          size="small"
          icon={<PlusOutlined />}
          onClick={() => onChange([...items, secrets ? { key: '', value: '', secret: false } : { key: '', value: '' }])}
          data-testid={`${testId}-add`}
        >
          Add
        </Button>
      </div>
      {items.map((item, i) => {
        const always = secrets && isDefaultSecret(item.key);
        const secret = always || (secrets && item.secret === true);
        return (
          <div className={secrets ? 'kz-kv-row kz-kv-row-secret' : 'kz-kv-row'} key={i}>
            <Input
              className="nodrag nopan"
              placeholder="Key"
              value={item.key}
              onChange={(e) => update(i, (it) => (secrets ? withKey(it, e.target.value) : { ...it, key: e.target.value }))}
              data-testid={`${testId}-key-${i}`}
            />
            {secret && item.value === SECRET_MASK ? (
              <Input
                className="nodrag nopan"
                value=""
                placeholder={`${SECRET_MASK} stored; type to replace`}
                aria-label={`${label} ${item.key} (secret, stored)`}
                onChange={(e) => update(i, (it) => ({ ...it, value: e.target.value }))}
                data-testid={`${testId}-value-${i}`}
              />
            ) : (
              <RefInput
                nodeId={nodeId}
                placeholder={secret ? 'Secret value (stored encrypted, never shown again)' : 'Value (type @ to use data of earlier steps)'}
                value={item.value}
                onChange={(value) => update(i, (it) => ({ ...it, value }))}
                testId={`${testId}-value-${i}`}
              />
            )}
            {secrets && (
              <Tooltip
                title={
                  always
                    ? `Always secret: ${item.key.trim()} is a credential name, stored encrypted and shown to nobody.`
                    : secret
                      ? 'Secret: stored encrypted, shown to nobody. Click to make it plain.'
                      : 'Plain text. Click to make it secret.'
                }
              >
                <Button
                  type={secret ? 'primary' : 'text'}
                  icon={secret ? <LockOutlined /> : <UnlockOutlined />}
                  aria-label={`${label} ${item.key || 'entry'} is ${secret ? 'secret' : 'plain'}`}
                  aria-pressed={secret}
                  disabled={always}
                  onClick={() => update(i, (it) => withSecret(it, !secret))}
                  data-testid={`${testId}-secret-${i}`}
                />
              </Tooltip>
            )}
            <Button
              type="text"
              danger
              icon={<DeleteOutlined />}
              aria-label={`Remove ${label} entry`}
              onClick={() => onChange(items.filter((_, j) => j !== i))}
              data-testid={`${testId}-remove-${i}`}
            />
          </div>
        );
      })}
    </div>
  );
}
