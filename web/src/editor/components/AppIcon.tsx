import { ApiOutlined, AppstoreOutlined, LinkOutlined } from '@ant-design/icons';
import { Avatar } from 'antd';

/** An app's image, or an icon when image_url is not an http URL. */
export function AppIcon({ name, provider, imageUrl, size = 40 }: { name: string; provider: string; imageUrl: string | null; size?: number }) {
  if (imageUrl && /^https?:\/\//.test(imageUrl)) return <Avatar shape="square" size={size} src={imageUrl} alt={name} />;
  const icon = provider === 'webhook' ? <LinkOutlined /> : provider === 'api' ? <ApiOutlined /> : <AppstoreOutlined />;
  return <Avatar shape="square" size={size} icon={icon} className="kz-app-icon" />;
}
