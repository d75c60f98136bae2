/** Replay of a failed run (POST /api/v1/task_logs/{id}/replay): one new run of the same request, linked to it.
 * A run is replayed once: asking again answers that replay; "Replay again" asks for a new run explicitly. */
import { RedoOutlined } from '@ant-design/icons';
import { Button, Descriptions, Typography } from 'antd';
import { $api, errorMessage, queryClient } from '../../api/typed';
import type { TaskLog } from '../../api/models';
import { useToast } from '../../lib/useToast';

export const REPLAY_DONE = 'The run was replayed: its new task log appears here when it finishes.';
export const REPLAY_ALREADY = 'This run was replayed already: its replay is shown in the history.';

export function ReplayButton({ log, onReplayed }: { log: TaskLog; onReplayed?: (runId: string) => void }) {
  const toast = useToast();
  const replay = $api.useMutation('post', '/api/v1/task_logs/{task_log_id}/replay');
  if (log.status !== 'ERROR') return null;
  const again = Boolean(log.replayed_as || log.replay_of);
  const onClick = async () => {
    try {
      const reply = await replay.mutateAsync({
        params: { path: { task_log_id: log.id }, query: again ? { again: true } : {} },
      });
      void toast.success(reply.already_replayed ? REPLAY_ALREADY : REPLAY_DONE);
      void queryClient.invalidateQueries({ queryKey: ['get', '/api/v1/task_logs/logs'] });
      onReplayed?.(reply.run_id);
    } catch (err) {
      void toast.error(errorMessage(err, 'The run could not be replayed'));
    }
  };
  return (
    <Button size="small" icon={<RedoOutlined />} loading={replay.isPending} onClick={() => void onClick()} data-testid={`replay-${log.id}`}>
      {again ? 'Replay again' : 'Replay'}
    </Button>
  );
}

/** Attempts and replay link of a run, shown in its details. */
export function RunFacts({ log }: { log: TaskLog }) {
  return (
    <Descriptions column={1} size="small" bordered data-testid="run-facts">
      {log.run_id ? (
        <Descriptions.Item label="Run">
          <Typography.Text code>{log.run_id}</Typography.Text>
        </Descriptions.Item>
      ) : null}
      {log.revision != null ? (
        <Descriptions.Item label="Revision">
          <span data-testid="run-revision">{log.revision}</span>
        </Descriptions.Item>
      ) : null}
      <Descriptions.Item label="Attempts">{log.attempts ?? 1}</Descriptions.Item>
      {log.cancelled_by ? (
        <Descriptions.Item label="Cancelled by">
          <Typography.Text data-testid="cancelled-by">{log.cancelled_by}</Typography.Text>
        </Descriptions.Item>
      ) : null}
      {log.replay_of ? (
        <Descriptions.Item label="Replay of">
          <Typography.Text code data-testid="replay-of">{log.replay_of}</Typography.Text>
        </Descriptions.Item>
      ) : null}
      {log.replayed_as ? (
        <Descriptions.Item label="Replayed as">
          <Typography.Text code data-testid="replayed-as">{log.replayed_as}</Typography.Text>
        </Descriptions.Item>
      ) : null}
    </Descriptions>
  );
}
