import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Select, Tooltip } from 'antd';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { Drawer } from './Drawer';

describe('Drawer', () => {
  it('closes on Esc pressed anywhere, even with a tooltip opened inside it after it', async () => {
    const onClose = vi.fn();
    render(
      <Drawer open onClose={onClose} title="Add Action">
        <Tooltip title="Slack" open>
          <button type="button">tile</button>
        </Tooltip>
      </Drawer>,
    );
    expect(await screen.findByText('Slack')).toBeInTheDocument();
    fireEvent.keyDown(document.body, { key: 'Escape' });
    await waitFor(() => expect(onClose).toHaveBeenCalledTimes(1));
  });

  it('closes only the drawer opened last', async () => {
    function Two() {
      const [outer, setOuter] = useState(true);
      const [inner, setInner] = useState(true);
      return (
        <>
          <Drawer open={outer} onClose={() => setOuter(false)} title="Outer" />
          <Drawer open={inner} onClose={() => setInner(false)} title="Inner" />
          <span data-testid="state">{`${outer}-${inner}`}</span>
        </>
      );
    }
    render(<Two />);
    await screen.findByText('Inner');
    fireEvent.keyDown(document.body, { key: 'Escape' });
    await waitFor(() => expect(screen.getByTestId('state')).toHaveTextContent('true-false'));
    fireEvent.keyDown(document.body, { key: 'Escape' });
    await waitFor(() => expect(screen.getByTestId('state')).toHaveTextContent('false-false'));
  });

  it('leaves the drawer open while Esc closes a select list open in it', async () => {
    const onClose = vi.fn();
    render(
      <Drawer open onClose={onClose} title="Test Trigger">
        <Select options={[{ value: 'a', label: 'A' }]} />
      </Drawer>,
    );
    await userEvent.click(screen.getByRole('combobox'));
    expect(screen.getByRole('combobox')).toHaveAttribute('aria-expanded', 'true');
    fireEvent.keyDown(screen.getByRole('combobox'), { key: 'Escape' });
    expect(onClose).not.toHaveBeenCalled();
  });
});
