/** Left navigation entries and which one a path highlights. */
export type NavKey = 'home' | 'applications' | 'flows' | 'chatflows' | 'agentflows' | 'tools' | 'history' | 'approvals';

export interface NavEntry {
  key: NavKey;
  label: string;
  path: string;
  heading: string;
}

export const NAV: NavEntry[] = [
  { key: 'home', label: 'Home', path: '/dashboard', heading: 'DASHBOARD' },
  { key: 'applications', label: 'Applications', path: '/applications', heading: 'APPLICATIONS' },
  { key: 'flows', label: 'Flows', path: '/flows/home', heading: 'FLOWS' },
  { key: 'chatflows', label: 'Chatflows', path: '/chatflows', heading: 'CHATFLOWS' },
  { key: 'agentflows', label: 'Agentflows', path: '/agentflows', heading: 'AGENTFLOWS' },
  { key: 'tools', label: 'Tools', path: '/tools', heading: 'TOOLS' },
  { key: 'history', label: 'History', path: '/logs', heading: 'FLOW HISTORY' },
  { key: 'approvals', label: 'Approvals', path: '/approvals', heading: 'PENDING APPROVALS' },
];

const startsWithSegment = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/** Account paths highlight none; /flows/... and /create... highlight Flows. */
export function activeNavKey(pathname: string): NavKey | null {
  if (startsWithSegment(pathname, '/account')) return null;
  if (startsWithSegment(pathname, '/flows') || pathname.startsWith('/create')) return 'flows';
  if (startsWithSegment(pathname, '/dashboard')) return 'home';
  if (startsWithSegment(pathname, '/applications')) return 'applications';
  if (startsWithSegment(pathname, '/logs')) return 'history';
  if (startsWithSegment(pathname, '/approvals')) return 'approvals';
  if (startsWithSegment(pathname, '/chatflows')) return 'chatflows';
  if (startsWithSegment(pathname, '/agentflows')) return 'agentflows';
  if (startsWithSegment(pathname, '/tools')) return 'tools';
  return null;
}

export function headingFor(pathname: string): string {
  if (startsWithSegment(pathname, '/account')) return 'ACCOUNT';
  const key = activeNavKey(pathname);
  return NAV.find((n) => n.key === key)?.heading ?? '';
}
