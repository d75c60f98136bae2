import { Empty, Typography } from 'antd';

/** Screens of the shell that later issues fill in. */
export function ComingSoon({ title }: { title: string }) {
  return (
    <div className="kz-page">
      <Typography.Title level={3}>{title}</Typography.Title>
      <Empty description="Coming soon" />
    </div>
  );
}
