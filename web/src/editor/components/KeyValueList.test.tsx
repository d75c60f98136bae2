import { fireEvent, render, screen } from '@testing-library/react';
import { useState } from 'react';
import { describe, expect, it } from 'vitest';
import { EditorProvider } from '../EditorContext';
import { isDefaultSecret, SECRET_MASK } from '../model/secrets';
import type { KeyValue } from '../model/types';
import { KeyValueList, withKey, withSecret } from './KeyValueList';

function Headers({ initial, seen }: { initial: KeyValue[]; seen: KeyValue[][] }) {
  const [items, setItems] = useState(initial);
  return (
    <EditorProvider>
      <KeyValueList
        nodeId="node-2"
        label="Headers"
        items={items}
        onChange={(next) => {
          seen.push(next);
          setItems(next);
        }}
        testId="api-header"
        secrets
      />
    </EditorProvider>
  );
}

describe('secret header and param rows', () => {
  it('knows the default secret names, case-insensitively', () => {
    for (const name of ['Authorization', 'proxy-authorization', 'X-API-Key', 'Api-Key', 'Cookie', 'Set-Cookie', 'X-Auth-Token']) {
      expect(isDefaultSecret(name), name).toBe(true);
    }
    for (const name of ['X-Refresh-Token', 'client_secret', 'DB_PASSWORD', 'apikey', 'my-api-key', 'api_key']) {
      expect(isDefaultSecret(name), name).toBe(true);
    }
    for (const name of ['Content-Type', 'Accept', 'X-Order', '']) expect(isDefaultSecret(name), name).toBe(false);
  });

  it('locks a credential name for good, and any other row the user locks', () => {
    const seen: KeyValue[][] = [];
    render(<Headers initial={[]} seen={seen} />);
    fireEvent.click(screen.getByTestId('api-header-add'));
    fireEvent.change(screen.getByTestId('api-header-key-0'), { target: { value: 'Authorization' } });
    expect(seen.at(-1)).toEqual([{ key: 'Authorization', value: '', secret: true }]);
    expect(screen.getByTestId('api-header-secret-0').getAttribute('aria-pressed')).toBe('true');

    fireEvent.click(screen.getByTestId('api-header-add'));
    fireEvent.change(screen.getByTestId('api-header-key-1'), { target: { value: 'X-Order' } });
    expect(seen.at(-1)?.[1]).toEqual({ key: 'X-Order', value: '', secret: false });
    expect(screen.getByTestId('api-header-secret-1').getAttribute('aria-pressed')).toBe('false');

    // The user may mark any row secret, and make it plain again.
    fireEvent.click(screen.getByTestId('api-header-secret-1'));
    expect(seen.at(-1)?.[1].secret).toBe(true);
    fireEvent.click(screen.getByTestId('api-header-secret-1'));
    expect(seen.at(-1)?.[1].secret).toBe(false);

    // A credential name is always secret (the api stores it so whatever is sent): its lock cannot be turned off.
    const lock = screen.getByTestId('api-header-secret-0') as HTMLButtonElement;
    expect(lock.disabled).toBe(true);
    const changes = seen.length;
    fireEvent.click(lock);
    expect(seen.length).toBe(changes);
    expect(lock.getAttribute('aria-pressed')).toBe('true');
  });

  it('shows a credential name locked even when a draft has it plain', () => {
    render(<Headers initial={[{ key: 'X-Api-Key', value: 'k', secret: false }]} seen={[]} />);
    expect(screen.getByTestId('api-header-secret-0').getAttribute('aria-pressed')).toBe('true');
  });

  it('shows a stored secret as the mask only, and replaces it when typed over', () => {
    const seen: KeyValue[][] = [];
    render(<Headers initial={[{ key: 'Authorization', value: SECRET_MASK, secret: true }]} seen={seen} />);
    const value = screen.getByTestId('api-header-value-0') as HTMLInputElement;
    expect(value.value).toBe('');
    expect(value.placeholder).toContain(SECRET_MASK);
    fireEvent.change(value, { target: { value: 'Bearer new' } });
    expect(seen.at(-1)).toEqual([{ key: 'Authorization', value: 'Bearer new', secret: true }]);
  });

  it('keeps a choice the user made when the name changes, and never turns the mask into a plain value', () => {
    expect(withKey({ key: 'X-Order', value: 'x', secret: true }, 'X-Order-Id').secret).toBe(true);
    expect(withKey({ key: 'X-Order', value: 'x', secret: false }, 'X-Order-Id').secret).toBe(false);
    expect(withKey({ key: 'Authorizatio', value: 'x', secret: false }, 'Authorization').secret).toBe(true);
    // A credential name is secret whatever the row was.
    expect(withKey({ key: 'X-Order', value: 'x', secret: false }, 'X-Auth-Token').secret).toBe(true);
    expect(withSecret({ key: 'Authorization', value: SECRET_MASK, secret: true }, false)).toEqual({
      key: 'Authorization',
      value: SECRET_MASK,
      secret: true,
    });
    expect(withSecret({ key: 'X-Signature', value: SECRET_MASK, secret: true }, false)).toEqual({
      key: 'X-Signature',
      value: '',
      secret: false,
    });
    expect(withKey({ key: 'Authorization', value: SECRET_MASK, secret: true }, 'X-Order')).toEqual({
      key: 'X-Order',
      value: '',
      secret: false,
    });
  });
});
