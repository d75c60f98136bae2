import { SearchOutlined } from '@ant-design/icons';
import { Empty, Input, Spin, Tooltip } from 'antd';
import { pickerName } from '../../lib/names';
import type { AppListing, AppOut } from '../api/editorApi';
import { kindIcon } from '../nodes/registry';
import { AppIcon } from './AppIcon';
import { useAppSearch } from './useAppSearch';

interface Props {
  listings: AppListing[];
  enabled?: boolean;
  onPick: (app: AppOut) => void;
  placeholder: string;
  searchTestId: string;
  /** Apps not offered here (add-ons that only start flows, in the action drawer). */
  hide?: (app: AppOut) => boolean;
  /** Why an app cannot be picked now (its tile is disabled with that tooltip), or null. */
  refusal?: (app: AppOut) => string | null;
  /** Fill the container (a drawer's body): the grid takes its full width and height. */
  fill?: boolean;
}

/** Searchable grid of catalogue apps (server search from 2 characters); tiles are `app-tile-<provider>`. */
export function AppPicker({ listings, enabled = true, onPick, placeholder, searchTestId, hide, refusal, fill = false }: Props) {
  const { text, setText, apps: all, loadMore, fetching, total } = useAppSearch(listings, enabled);
  const apps = all && hide ? all.filter((a) => !hide(a)) : all;
  return (
    <div className={fill ? 'kz-picker kz-picker-fill' : 'kz-picker'}>
      <Input
        allowClear
        prefix={<SearchOutlined />}
        placeholder={placeholder}
        value={text}
        onChange={(e) => setText(e.target.value)}
        data-testid={searchTestId}
      />
      {apps === null ? (
        <Spin className="kz-picker-spin" />
      ) : apps.length === 0 ? (
        <Empty description="No App Found" />
      ) : (
        <div
          className="kz-app-grid-scroll nowheel"
          data-testid="app-grid"
          data-count={apps.length}
          data-total={total}
          onScroll={(e) => {
            const el = e.currentTarget;
            if (el.scrollTop + el.clientHeight >= el.scrollHeight - 40) loadMore();
          }}
        >
          <div className="kz-app-grid">
            {apps.map((app) => {
              const refused = refusal?.(app) ?? null;
              return (
                <Tooltip key={`${app.app_type}-${app.id}`} title={refused ?? app.name}>
                  {/* A disabled button gets no pointer events: the span keeps the tooltip working. */}
                  <span className="kz-app-tile-wrap">
                    <button
                      type="button"
                      className="kz-app-tile"
                      disabled={refused !== null}
                      aria-label={refused ? `${app.name}: ${refused}` : undefined}
                      onClick={() => onPick(app)}
                      data-testid={`app-tile-${app.provider}`}
                    >
                      <AppIcon name={app.name} provider={app.provider} imageUrl={app.image_url} icon={kindIcon(app.provider)} />
                      <span className="kz-app-name">{pickerName(app.name)}</span>
                    </button>
                  </span>
                </Tooltip>
              );
            })}
          </div>
          {fetching && <Spin size="small" className="kz-picker-spin" />}
        </div>
      )}
    </div>
  );
}
