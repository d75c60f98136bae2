/**
 * The editor's History panel: the flow's revisions (every publish), newest first, with who, when, the
 * message and a Live badge. Choosing one shows what differs from the live revision (or, for the live
 * one, from the revision before it), node by node and field by field (./diff.ts); Restore publishes the
 * chosen revision again as a new revision and reloads the editor.
 */
import { HistoryOutlined } from '@ant-design/icons';
import { Alert, Button, Empty, Input, List, Popconfirm, Space, Spin, Tag, Typography } from 'antd';
import dayjs from 'dayjs';
import { useState } from 'react';
import type { RevisionDetail, RevisionItem } from '../../api/models';
import { $api, errorMessage, queryClient } from '../../api/typed';
import { Drawer } from '../../lib/Drawer';
import { useToast } from '../../lib/useToast';
import { diffCanvases, formatValue, type CanvasDiff } from './diff';

export const REVISIONS_PAGE_SIZE = 20;
export const MESSAGE_MAX = 500;
const KIND_COLOR = { added: 'green', removed: 'red', changed: 'blue' } as const;
const KIND_LABEL = { added: 'Added', removed: 'Removed', changed: 'Changed' } as const;

const when = (value: string) => (dayjs(value).isValid() ? dayjs(value).format('DD MMM YYYY, HH:mm') : value);

/** The revision the chosen one is compared with: the live one, or for the live one the one before it. */
export function baseOf(selected: number, live: number | null | undefined, numbers: number[]): number | null {
  if (live != null && live !== selected) return live;
  const earlier = numbers.filter((n) => n < selected).sort((a, b) => b - a);
  return earlier[0] ?? (selected > 1 ? selected - 1 : null);
}

function DiffView({ diff, base, target }: { diff: CanvasDiff; base: number | null; target: number }) {
  return (
    <div data-testid="revision-diff">
      <Typography.Paragraph type="secondary" data-testid="revision-diff-title">
        {base === null ? `Revision ${target} is the first: everything in it is new.` : `Changes from revision ${base} to revision ${target}`}
      </Typography.Paragraph>
      {diff.same ? <Typography.Text data-testid="revision-diff-same">No difference in what the flow does.</Typography.Text> : null}
      {diff.name ? (
        <Typography.Paragraph data-testid="revision-diff-name">
          Name: <Typography.Text delete>{formatValue(diff.name.before)}</Typography.Text> → <Typography.Text strong>{formatValue(diff.name.after)}</Typography.Text>
        </Typography.Paragraph>
      ) : null}
      {diff.nodes.map((node) => (
        <div key={`${node.kind}-${node.id}`} className="kz-diff-node" data-testid={`diff-node-${node.id}`} data-kind={node.kind}>
          <Space size={6} wrap>
            <Tag color={KIND_COLOR[node.kind]}>{KIND_LABEL[node.kind]}</Tag>
            <Typography.Text strong>{node.label}</Typography.Text>
            <Typography.Text type="secondary">{node.id}</Typography.Text>
          </Space>
          {node.fields.length > 0 ? (
            <ul className="kz-diff-fields">
              {node.fields.map((field) => (
                <li key={field.path} data-testid={`diff-field-${node.id}`}>
                  <Typography.Text code>{field.path}</Typography.Text>{' '}
                  <Typography.Text delete type="danger" data-testid="diff-before">
                    {formatValue(field.before)}
                  </Typography.Text>
                  {' → '}
                  <Typography.Text type="success" data-testid="diff-after">
                    {formatValue(field.after)}
                  </Typography.Text>
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ))}
      {diff.linksAdded.map((link) => (
        <div key={`+${link}`} data-testid="diff-link-added">
          <Tag color="green">Connected</Tag>
          {link}
        </div>
      ))}
      {diff.linksRemoved.map((link) => (
        <div key={`-${link}`} data-testid="diff-link-removed">
          <Tag color="red">Disconnected</Tag>
          {link}
        </div>
      ))}
    </div>
  );
}

function useRevision(konnectId: number, number: number | null) {
  return $api.useQuery(
    'get',
    '/api/v1/konnects/{konnect_id}/revisions/{number}',
    { params: { path: { konnect_id: konnectId, number: number ?? 1 } } },
    { enabled: number !== null },
  );
}

function Chosen({
  konnectId,
  item,
  base,
  onRestored,
}: {
  konnectId: number;
  item: RevisionItem;
  base: number | null;
  onRestored: () => Promise<unknown> | void;
}) {
  const toast = useToast();
  const [message, setMessage] = useState('');
  const target = useRevision(konnectId, item.number);
  const compared = useRevision(konnectId, base);
  const restore = $api.useMutation('post', '/api/v1/konnects/{konnect_id}/revisions/{number}/restore');
  const loading = target.isPending || (base !== null && compared.isPending);
  const baseDetail: RevisionDetail | undefined = base !== null && !compared.isError ? compared.data : undefined;

  const onRestore = async () => {
    try {
      const reply = await restore.mutateAsync({
        params: { path: { konnect_id: konnectId, number: item.number } },
        body: message.trim() ? { message: message.trim() } : {},
      });
      void toast.success(reply.message);
      setMessage('');
      await queryClient.invalidateQueries({ queryKey: ['get', '/api/v1/konnects/{konnect_id}/revisions'] });
      await onRestored();
    } catch (err) {
      void toast.error(errorMessage(err, 'The revision could not be restored'));
    }
  };

  return (
    <div className="kz-revision-chosen" data-testid="revision-chosen">
      <Space style={{ justifyContent: 'space-between', width: '100%' }} wrap>
        <Typography.Title level={5} style={{ margin: 0 }}>
          Revision {item.number}
        </Typography.Title>
        {item.live ? (
          <Tag color="green">Live</Tag>
        ) : (
          <Space>
            <Input
              size="small"
              placeholder="Message (optional)"
              maxLength={MESSAGE_MAX}
              value={message}
              onChange={(e) => setMessage(e.target.value)}
              data-testid="revision-restore-message"
            />
            <Popconfirm
              title={`Restore revision ${item.number}?`}
              description="Its flow replaces the draft and is published as a new revision; the live one stops."
              okText="Restore"
              cancelText="Cancel"
              onConfirm={() => onRestore()}
              okButtonProps={{ 'data-testid': 'revision-restore-confirm' }}
            >
              <Button type="primary" size="small" loading={restore.isPending} data-testid="revision-restore">
                Restore
              </Button>
            </Popconfirm>
          </Space>
        )}
      </Space>
      {loading ? <Spin /> : null}
      {target.isError ? <Alert type="error" title={errorMessage(target.error, 'This revision could not be read')} /> : null}
      {target.data && !loading ? (
        <DiffView diff={diffCanvases(baseDetail?.canvas_json, target.data.canvas_json)} base={baseDetail ? base : null} target={item.number} />
      ) : null}
    </div>
  );
}

export function RevisionsPanel({
  konnectId,
  open,
  onClose,
  onRestored,
}: {
  konnectId: number;
  open: boolean;
  onClose: () => void;
  onRestored: () => Promise<unknown> | void;
}) {
  const [page, setPage] = useState(1);
  const [selected, setSelected] = useState<number | null>(null);
  const list = $api.useQuery(
    'get',
    '/api/v1/konnects/{konnect_id}/revisions',
    { params: { path: { konnect_id: konnectId }, query: { page_size: REVISIONS_PAGE_SIZE, page_index: page } } },
    { enabled: open },
  );
  const items = list.data?.revisions ?? [];
  const live = list.data?.live_revision ?? null;
  const chosen = items.find((r) => r.number === selected) ?? null;

  return (
    <Drawer
      open={open}
      onClose={onClose}
      title={
        <Space>
          <HistoryOutlined />
          History
        </Space>
      }
      size="large"
      destroyOnHidden
    >
      <div data-testid="revisions-panel">
        {list.isPending ? <Spin /> : null}
        {list.isError ? <Alert type="error" title={errorMessage(list.error, 'The history could not be loaded')} /> : null}
        {list.data && items.length === 0 ? <Empty description="Not published yet: each publish is kept here as a revision." /> : null}
        {items.length > 0 ? (
          <List
            size="small"
            dataSource={items}
            pagination={
              (list.data?.total ?? 0) > REVISIONS_PAGE_SIZE
                ? { current: page, pageSize: REVISIONS_PAGE_SIZE, total: list.data?.total ?? 0, onChange: setPage, size: 'small' }
                : false
            }
            renderItem={(item) => (
              <List.Item
                data-testid={`revision-item-${item.number}`}
                className={item.number === selected ? 'kz-selected' : undefined}
                onClick={() => setSelected(item.number)}
                style={{ cursor: 'pointer' }}
              >
                <Space orientation="vertical" size={0} style={{ width: '100%' }}>
                  <Space size={6} wrap>
                    <Typography.Text strong>#{item.number}</Typography.Text>
                    {item.live ? (
                      <Tag color="green" data-testid={`revision-live-${item.number}`}>
                        Live
                      </Tag>
                    ) : null}
                    {item.restored_from != null ? <Tag>{`Restored from #${item.restored_from}`}</Tag> : null}
                    <Typography.Text type="secondary">{when(item.created_at)}</Typography.Text>
                    <Typography.Text type="secondary">{item.published_by_email}</Typography.Text>
                  </Space>
                  {item.message ? <Typography.Text data-testid={`revision-message-${item.number}`}>{item.message}</Typography.Text> : null}
                </Space>
              </List.Item>
            )}
          />
        ) : null}
        {chosen ? (
          <Chosen
            key={chosen.number}
            konnectId={konnectId}
            item={chosen}
            base={baseOf(chosen.number, live, items.map((r) => r.number))}
            onRestored={async () => {
              setSelected(null);
              await onRestored();
            }}
          />
        ) : items.length > 0 ? (
          <Typography.Paragraph type="secondary">Choose a revision to see what differs.</Typography.Paragraph>
        ) : null}
      </div>
    </Drawer>
  );
}
