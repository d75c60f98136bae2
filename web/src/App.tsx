import { lazy, Suspense, type ReactNode } from 'react';
import { Spin } from 'antd';
import { createBrowserRouter, Navigate, RouterProvider, type RouteObject } from 'react-router';
import { RequireSession } from './shell/RequireSession';
import { Providers } from './theme/Providers';

// Every page is its own chunk, loaded when its route is first shown: the initial script holds only
// React, the router, the query client and the theme (web/scripts/check-initial-size.mjs keeps it
// under its budget; see docs/architecture.md, "The web app's weight").
const AuthScreen = lazy(() => import('./auth/AuthScreen').then((m) => ({ default: m.AuthScreen })));
const OAuthResponsePage = lazy(() =>
  import('./accounts/OAuthResponsePage').then((m) => ({ default: m.OAuthResponsePage })),
);
const CanvasEditor = lazy(() => import('./editor/CanvasEditor').then((m) => ({ default: m.CanvasEditor })));
const ScriptTriggersPage = lazy(() =>
  import('./pages/scriptTriggers/ScriptTriggersPage').then((m) => ({ default: m.ScriptTriggersPage })),
);
const AppShell = lazy(() => import('./shell/AppShell').then((m) => ({ default: m.AppShell })));
const Dashboard = lazy(() => import('./pages/Dashboard').then((m) => ({ default: m.Dashboard })));
const FlowsPage = lazy(() => import('./pages/flows/FlowsPage').then((m) => ({ default: m.FlowsPage })));
const ApplicationsPage = lazy(() =>
  import('./pages/applications/ApplicationsPage').then((m) => ({ default: m.ApplicationsPage })),
);
const HistoryPage = lazy(() => import('./pages/logs/HistoryPage').then((m) => ({ default: m.HistoryPage })));
const ApprovalsPage = lazy(() =>
  import('./pages/approvals/ApprovalsPage').then((m) => ({ default: m.ApprovalsPage })),
);
const AiFramePage = lazy(() => import('./pages/ai/AiFramePage').then((m) => ({ default: m.AiFramePage })));
const AccountPage = lazy(() => import('./pages/account/AccountPage').then((m) => ({ default: m.AccountPage })));

/** A page outside the shell, with a spinner while its chunk loads. */
function page(element: ReactNode) {
  return <Suspense fallback={<Spin className="kz-editor-loading" size="large" />}>{element}</Suspense>;
}

const editor = <RequireSession>{page(<CanvasEditor />)}</RequireSession>;

export const routes: RouteObject[] = [
  { path: '/', element: page(<AuthScreen />) },
  { path: '/login', element: page(<AuthScreen />) },
  { path: '/logout', element: page(<AuthScreen />) },
  { path: '/signup', element: page(<AuthScreen />) },
  { path: '/verify-email/:token', element: page(<AuthScreen />) },
  { path: '/forgot-password', element: page(<AuthScreen />) },
  { path: '/reset-password/:token', element: page(<AuthScreen />) },
  { path: '/oauth/response', element: page(<OAuthResponsePage />) },
  { path: '/oauth/response/:appId/:token', element: page(<OAuthResponsePage />) },
  { path: '/create', element: editor },
  { path: '/create/:id', element: editor },
  // The custom-script trigger's popup (opened by the editor; no shell around it).
  {
    path: '/script-triggers/:scriptId',
    element: <RequireSession>{page(<ScriptTriggersPage />)}</RequireSession>,
  },
  {
    // The shell's own Suspense (around its Outlet) keeps the menu up while a page's chunk loads.
    element: <RequireSession>{page(<AppShell />)}</RequireSession>,
    children: [
      { path: '/dashboard', element: <Dashboard /> },
      { path: '/flows', element: <Navigate to="/flows/home" replace /> },
      { path: '/flows/:index', element: <FlowsPage /> },
      { path: '/applications', element: <ApplicationsPage /> },
      { path: '/logs', element: <HistoryPage /> },
      { path: '/approvals', element: <ApprovalsPage /> },
      { path: '/chatflows', element: <AiFramePage widget="chatflows" title="Chatflows" /> },
      { path: '/agentflows', element: <AiFramePage widget="agentflows" title="Agentflows" /> },
      { path: '/tools', element: <AiFramePage widget="tools" title="Tools" /> },
      { path: '/account', element: <Navigate to="/account/profile" replace /> },
      { path: '/account/:tab', element: <AccountPage /> },
    ],
  },
  { path: '*', element: <Navigate to="/dashboard" replace /> },
];

const router = createBrowserRouter(routes);

export function App() {
  return (
    <Providers>
      <RouterProvider router={router} />
    </Providers>
  );
}
