/** The folder sidebar of /flows/{index}: Home, the user's folders, Add Folder, rename and delete. */
import { DeleteOutlined, EditOutlined, FolderOutlined, HomeOutlined, PlusOutlined } from '@ant-design/icons';
import { Button, Empty, Input, Menu, Popconfirm, Popover, Space, Spin, Tooltip, type ButtonProps } from 'antd';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { $api, errorMessage, fetchClient, queryClient } from '../../api/typed';
import { useToast } from '../../lib/useToast';

export type Folder = { id: number; name: string; konnect_count: number };

export function invalidateFlows() {
  void queryClient.invalidateQueries({ queryKey: ['get', '/api/v1/folders/list'] });
  void queryClient.invalidateQueries({ queryKey: ['get', '/api/v1/konnects'] });
  void queryClient.invalidateQueries({ queryKey: ['get', '/api/v1/dashboard/stats'] });
}

function NameForm({
  initial,
  onSubmit,
  testId,
}: {
  initial: string;
  onSubmit: (name: string) => void | Promise<void>;
  testId: string;
}) {
  const [name, setName] = useState(initial);
  return (
    <Space.Compact>
      <Input
        autoFocus
        placeholder="Name of the Folder"
        value={name}
        maxLength={100}
        onChange={(e) => setName(e.target.value)}
        onPressEnter={() => void onSubmit(name.trim())}
        data-testid={`${testId}-input`}
      />
      <Button type="primary" onClick={() => void onSubmit(name.trim())} data-testid={`${testId}-submit`}>
        Submit
      </Button>
    </Space.Compact>
  );
}

function FolderActions({ folder, current }: { folder: Folder; current: boolean }) {
  const toast = useToast();
  const navigate = useNavigate();
  const [renaming, setRenaming] = useState(false);

  const rename = async (name: string) => {
    setRenaming(false);
    if (!name || name === folder.name) return; // the spec: the server is called only when the name changed
    try {
      const { data } = await fetchClient.PUT('/api/v1/folders/{folder_id}/rename', {
        params: { path: { folder_id: folder.id } },
        body: { folder_name: name },
      });
      if (data?.status === 'SUCCESS') void toast.success(data.message);
      else void toast.error(data?.message || 'Something went wrong.');
    } catch (err) {
      void toast.error(errorMessage(err, 'Something went wrong.'));
    }
    invalidateFlows();
  };

  const remove = async () => {
    try {
      const { data } = await fetchClient.GET('/api/v1/folders/{folder_id}/remove', {
        params: { path: { folder_id: folder.id } },
      });
      if (data?.status === 'SUCCESS') void toast.success(data.message);
      else void toast.error(data?.message || 'Something went wrong.');
      if (current) navigate('/flows/home');
    } catch (err) {
      void toast.error(errorMessage(err, 'Something went wrong.'));
    }
    invalidateFlows();
  };

  return (
    <span className="kz-folder-actions" onClick={(e) => e.stopPropagation()}>
      <Popover
        open={renaming}
        onOpenChange={setRenaming}
        trigger="click"
        destroyOnHidden
        content={<NameForm initial={folder.name} onSubmit={rename} testId={`folder-rename-${folder.id}`} />}
      >
        <Tooltip title="Rename">
          <Button size="small" type="text" icon={<EditOutlined />} data-testid={`folder-rename-${folder.id}`} />
        </Tooltip>
      </Popover>
      <Popconfirm
        title="Delete this folder?"
        description="Its flows return to Home."
        onConfirm={() => void remove()}
        okButtonProps={{ 'data-testid': `folder-delete-ok-${folder.id}` } as ButtonProps}
      >
        <Button size="small" type="text" danger icon={<DeleteOutlined />} data-testid={`folder-delete-${folder.id}`} />
      </Popconfirm>
    </span>
  );
}

export function FolderSidebar({ index }: { index: string }) {
  const navigate = useNavigate();
  const toast = useToast();
  const [adding, setAdding] = useState(false);
  const folders = $api.useQuery('get', '/api/v1/folders/list');
  const list: Folder[] = folders.data?.folders ?? [];

  const add = async (name: string) => {
    setAdding(false);
    if (!name) return; // the spec: an empty name just closes the popover
    try {
      const { data } = await fetchClient.POST('/api/v1/folders/add', { body: { folder_name: name } });
      if (data?.status === 'SUCCESS') void toast.success(data.message);
      else void toast.error('Something went wrong.');
    } catch {
      void toast.error('Something went wrong.');
    }
    invalidateFlows();
  };

  return (
    <aside className="kz-folders" data-testid="folder-sidebar">
      <div className="kz-folders-head">
        <span>Folders</span>
        <Popover
          open={adding}
          onOpenChange={setAdding}
          trigger="click"
          destroyOnHidden
          content={<NameForm initial="" onSubmit={add} testId="folder-add" />}
        >
          <Button size="small" icon={<PlusOutlined />} data-testid="folder-add">
            Add Folder
          </Button>
        </Popover>
      </div>
      <Menu
        mode="inline"
        selectedKeys={[index]}
        onClick={({ key }) => navigate(`/flows/${key}`)}
        items={[
          { key: 'home', icon: <HomeOutlined />, label: <span data-testid="folder-home">Home</span> },
          ...list.map((f) => ({
            key: String(f.id),
            icon: <FolderOutlined />,
            label: (
              <span className="kz-folder-item" data-testid={`folder-${f.id}`}>
                <span className="kz-folder-name" title={f.name}>
                  {f.name}
                </span>
                <FolderActions folder={f} current={index === String(f.id)} />
              </span>
            ),
          })),
        ]}
      />
      {folders.isPending ? (
        <Spin size="small" />
      ) : (
        list.length === 0 && <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description="No folders available" />
      )}
    </aside>
  );
}
