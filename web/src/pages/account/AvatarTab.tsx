import { PictureOutlined } from '@ant-design/icons';
import { Avatar, Button, Empty, Skeleton, Space, Typography } from 'antd';
import { useRef, useState } from 'react';
import { $api, errorMessage, fetchClient } from '../../api/typed';
import { useToast } from '../../lib/useToast';
import { useProfile } from '../../shell/profileStore';

export const SELECT_IMAGE = 'Select the image before uploading.';

/** /account/avatar: choose an image, Upload; Remove Picture sends an empty image. */
export function AvatarTab() {
  const toast = useToast();
  const profile = $api.useQuery('get', '/api/v1/users/profile');
  const input = useRef<HTMLInputElement>(null);
  const [file, setFile] = useState<File | null>(null);
  const [busy, setBusy] = useState(false);

  if (profile.isPending) return <Skeleton active />;
  if (!profile.data) return <Empty description="Your profile could not be loaded." />;

  const send = async (image: Blob, name: string, done: string) => {
    const form = new FormData();
    form.append('image', image, name);
    setBusy(true);
    try {
      await fetchClient.POST('/api/v1/users/profile', { body: form as never });
      void toast.success(done);
      setFile(null);
      if (input.current) input.current.value = '';
      void profile.refetch();
      void useProfile.getState().load();
    } catch (err) {
      void toast.error(errorMessage(err, 'Something went wrong!'));
    } finally {
      setBusy(false);
    }
  };

  const upload = () => {
    if (!file) {
      void toast.error(SELECT_IMAGE);
      return;
    }
    void send(file, file.name, 'Picture updated');
  };

  return (
    <Space direction="vertical" size="large" data-testid="avatar-tab">
      <Avatar size={128} src={profile.data.image_url ?? undefined} data-testid="avatar-image">
        {profile.data.first_name.slice(0, 1).toUpperCase()}
      </Avatar>
      {/* The browser's own file button ignores the theme: an antd button opens the hidden input. */}
      <input
        ref={input}
        type="file"
        hidden
        accept="image/png,image/jpeg,image/gif,image/webp"
        onChange={(e) => setFile(e.target.files?.[0] ?? null)}
        data-testid="avatar-file"
      />
      <Space>
        <Button icon={<PictureOutlined />} onClick={() => input.current?.click()} disabled={busy} data-testid="avatar-choose">
          Choose Image
        </Button>
        <Typography.Text type={file ? undefined : 'secondary'} data-testid="avatar-file-name">
          {file ? file.name : 'No image chosen'}
        </Typography.Text>
      </Space>
      <Typography.Text type="secondary">PNG, JPEG, GIF or WebP, at most 2 MB. Pictures are resized to 512 pixels.</Typography.Text>
      <Space>
        <Button type="primary" onClick={upload} disabled={busy} data-testid="avatar-upload">
          {busy ? 'Please Wait' : 'Upload'}
        </Button>
        <Button danger onClick={() => void send(new Blob([]), '', 'Picture removed')} disabled={busy || !profile.data.image_url} data-testid="avatar-remove">
          Remove Picture
        </Button>
      </Space>
    </Space>
  );
}
