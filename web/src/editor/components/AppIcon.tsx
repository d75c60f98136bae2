import { ApiOutlined, AppstoreOutlined, LinkOutlined } from '@ant-design/icons';
import { Avatar } from 'antd';
import { useState, type ReactNode } from 'react';
import { sameOriginImage } from '../../lib/appImage';

/**
 * An app's image (served by the api), or an icon while the image is not loaded: when image_url is
 * not a path of this origin (no third-party host is asked), fails, or never answers, the icon shows
 * instead of an empty square. The editor passes the kind's icon (nodes/registry.ts kindIcon); pages
 * outside the editor (which do not load the kind registry and its cards) get the same glyphs here.
 */
export function AppIcon({
  name,
  provider,
  imageUrl,
  size = 40,
  icon: kindIcon,
}: {
  name: string;
  provider: string;
  imageUrl: string | null;
  size?: number;
  icon?: ReactNode;
}) {
  const icon = kindIcon ?? (provider === 'webhook' ? <LinkOutlined /> : provider === 'api' ? <ApiOutlined /> : <AppstoreOutlined />);
  const src = sameOriginImage(imageUrl);
  const [loaded, setLoaded] = useState<string | null>(null);
  const shown = src !== undefined && loaded === src;
  return (
    <>
      {src && !shown && <img src={src} alt="" hidden onLoad={() => setLoaded(src)} data-testid="app-icon-probe" />}
      <Avatar shape="square" size={size} src={shown ? src : undefined} icon={icon} alt={name} className="kz-app-icon" />
    </>
  );
}
