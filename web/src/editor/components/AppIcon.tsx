import { ApiOutlined, AppstoreOutlined, LinkOutlined } from '@ant-design/icons';
import { Avatar } from 'antd';

/** An app's image, or an icon when image_url is not an http URL or does not load (offline). */
export function AppIcon({ name, provider, imageUrl, size = 40 }: { name: string; provider: string; imageUrl: string | null; size?: number }) {
  const icon = provider === 'webhook' ? <LinkOutlined /> : provider === 'api' ? <ApiOutlined /> : <AppstoreOutlined />;
  const src = imageUrl && /^https?:\/\//.test(imageUrl) ? imageUrl : undefined;
  return <Avatar shape="square" size={size} src={src} icon={icon} alt={name} className="kz-app-icon" />;
}
