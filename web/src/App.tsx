import { lazy, Suspense } from 'react';
import { Spin } from 'antd';
import { createBrowserRouter, Navigate, RouterProvider, type RouteObject } from 'react-router';
import { OAuthResponsePage } from './accounts/OAuthResponsePage';
import { AuthScreen } from './auth/AuthScreen';
import { AccountPage } from './pages/account/AccountPage';
import { AiFramePage } from './pages/ai/AiFramePage';
import { ApplicationsPage } from './pages/applications/ApplicationsPage';
import { Dashboard } from './pages/Dashboard';
import { FlowsPage } from './pages/flows/FlowsPage';
import { HistoryPage } from './pages/logs/HistoryPage';
import { ScriptTriggersPage } from './pages/scriptTriggers/ScriptTriggersPage';
import { AppShell } from './shell/AppShell';
import { RequireSession } from './shell/RequireSession';
import { Providers } from './theme/Providers';

const CanvasEditor = lazy(() => import('./editor/CanvasEditor').then((m) => ({ default: m.CanvasEditor })));

const editor = (
  <RequireSession>
    <Suspense fallback={<Spin className="kz-editor-loading" size="large" />}>
      <CanvasEditor />
    </Suspense>
  </RequireSession>
);

export const routes: RouteObject[] = [
  { path: '/', element: <AuthScreen /> },
  { path: '/login', element: <AuthScreen /> },
  { path: '/logout', element: <AuthScreen /> },
  { path: '/signup', element: <AuthScreen /> },
  { path: '/verify-email/:token', element: <AuthScreen /> },
  { path: '/forgot-password', element: <AuthScreen /> },
  { path: '/reset-password/:token', element: <AuthScreen /> },
  { path: '/oauth/response', element: <OAuthResponsePage /> },
  { path: '/oauth/response/:appId/:token', element: <OAuthResponsePage /> },
  { path: '/create', element: editor },
  { path: '/create/:id', element: editor },
  // The custom-script trigger's popup (opened by the editor; no shell around it).
  {
    path: '/script-triggers/:scriptId',
    element: (
      <RequireSession>
        <ScriptTriggersPage />
      </RequireSession>
    ),
  },
  {
    element: (
      <RequireSession>
        <AppShell />
      </RequireSession>
    ),
    children: [
      { path: '/dashboard', element: <Dashboard /> },
      { path: '/flows', element: <Navigate to="/flows/home" replace /> },
      { path: '/flows/:index', element: <FlowsPage /> },
      { path: '/applications', element: <ApplicationsPage /> },
      { path: '/logs', element: <HistoryPage /> },
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
