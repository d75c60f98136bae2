import { useEffect, type ReactNode } from 'react';
import { Navigate, useNavigate } from 'react-router';
import { setUnauthorizedHandler } from '../api/typed';
import { useSession } from '../lib/sessionStore';
import { useProfile } from './profileStore';

/** Signed-in routes: no session goes to /login; any 401 from the api ends the session. */
export function RequireSession({ children }: { children: ReactNode }) {
  const session = useSession((s) => s.session);
  const signOut = useSession((s) => s.signOut);
  const navigate = useNavigate();

  useEffect(
    () =>
      setUnauthorizedHandler(() => {
        signOut();
        useProfile.getState().clear();
        navigate('/login', { replace: true });
      }),
    [navigate, signOut],
  );

  if (!session) return <Navigate to="/login" replace />;
  return <>{children}</>;
}
