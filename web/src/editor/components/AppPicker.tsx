import { SearchOutlined } from '@ant-design/icons';
import { Empty, Input, Spin, Tooltip } from 'antd';
import { useMemo, useState } from 'react';
import type { App } from '../../api/types';
import { APP_SEARCH_MIN } from '../../lib/constants';
import { pickerName } from '../../lib/names';
import { AppIcon } from './AppIcon';

export function filterApps(apps: App[], search: string): App[] {
  const q = search.trim().toLowerCase();
  if (q.length < APP_SEARCH_MIN) return apps;
  return apps.filter((a) => a.name.toLowerCase().includes(q));
}

interface Props {
  apps: App[] | null;
  onPick: (app: App) => void;
  placeholder: string;
  searchTestId: string;
}

/** Searchable grid of apps (search from 2 characters); tiles are `app-tile-<provider>`. */
export function AppPicker({ apps, onPick, placeholder, searchTestId }: Props) {
  const [search, setSearch] = useState('');
  const shown = useMemo(() => filterApps(apps ?? [], search), [apps, search]);

  return (
    <div className="kz-picker">
      <Input
        allowClear
        prefix={<SearchOutlined />}
        placeholder={placeholder}
        value={search}
        onChange={(e) => setSearch(e.target.value)}
        data-testid={searchTestId}
      />
      {apps === null ? (
        <Spin className="kz-picker-spin" />
      ) : shown.length === 0 ? (
        <Empty description="No App Found" />
      ) : (
        <div className="kz-app-grid">
          {shown.map((app) => (
            <Tooltip key={`${app.app_type}-${app.id}`} title={app.name}>
              <button type="button" className="kz-app-tile" onClick={() => onPick(app)} data-testid={`app-tile-${app.provider}`}>
                <AppIcon name={app.name} provider={app.provider} imageUrl={app.image_url} />
                <span className="kz-app-name">{pickerName(app.name)}</span>
              </button>
            </Tooltip>
          ))}
        </div>
      )}
    </div>
  );
}
