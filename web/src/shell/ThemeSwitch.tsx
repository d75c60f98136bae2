import { MoonOutlined, SunOutlined } from '@ant-design/icons';
import { Switch, Tooltip } from 'antd';
import { useTheme } from '../theme/theme';

export function ThemeSwitch() {
  const mode = useTheme((s) => s.mode);
  const toggle = useTheme((s) => s.toggle);
  return (
    <Tooltip title={mode === 'dark' ? 'Switch to light theme' : 'Switch to dark theme'}>
      <Switch
        checked={mode === 'dark'}
        onChange={toggle}
        checkedChildren={<MoonOutlined />}
        unCheckedChildren={<SunOutlined />}
        aria-label="Dark theme"
        data-testid="theme-switch"
      />
    </Tooltip>
  );
}
