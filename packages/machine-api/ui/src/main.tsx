/** The dashboard: header and navigation, the API key gate, and one route per page under /ui/. */

import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import { ErrorBoundary, LocationProvider, lazy, Route, Router, useLocation } from 'preact-iso';
import { connectEvents, connection } from './live/events';
import { CameraWall } from './pages/cameras';
import { History } from './pages/history';
import { JobPage } from './pages/job';
import { Keys } from './pages/keys';
import { Login } from './pages/login';
import { Notifications } from './pages/notifications';
import { Overview } from './pages/overview';
import { SendPrint } from './pages/print';
import { Queue } from './pages/queue';
import { apiKey, forgetKey, keyNeeded } from './session';
import './styles.css';

// The chart library comes with the machine page only.
const MachinePage = lazy(() => import('./pages/machine'));

const NAV = [
  { href: '/ui/', label: 'Farm' },
  { href: '/ui/print', label: 'Send a print' },
  { href: '/ui/queue', label: 'Queue' },
  { href: '/ui/history', label: 'History' },
  { href: '/ui/cameras', label: 'Cameras' },
  { href: '/ui/keys', label: 'Keys' },
  { href: '/ui/notifications', label: 'Notifications' },
];

function NotFound() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        There is no such page. <a href="/ui/">Back to the farm</a>.
      </p>
    </section>
  );
}

function Header() {
  const { path } = useLocation();
  return (
    <header class="top">
      <a class="brand" href="/ui/">
        machine-api
      </a>
      <nav aria-label="Pages">
        <ul>
          {NAV.map((item) => (
            <li key={item.href}>
              <a href={item.href} aria-current={path === item.href ? 'page' : undefined}>
                {item.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <p class="connection" aria-live="polite">
        {connection.value === 'live'
          ? 'Live'
          : connection.value === 'connecting'
            ? 'Connecting…'
            : 'Reconnecting…'}
      </p>
      {apiKey.value && (
        <button
          type="button"
          class="link"
          onClick={() => {
            forgetKey();
            location.reload();
          }}
        >
          Forget key
        </button>
      )}
    </header>
  );
}

function App() {
  useEffect(() => connectEvents(), []);
  return (
    <LocationProvider>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Header />
      <main id="main" tabIndex={-1}>
        {keyNeeded.value ? (
          <Login />
        ) : (
          <ErrorBoundary>
            <Router>
              <Route path="/ui/" component={Overview} />
              <Route path="/ui/print" component={SendPrint} />
              <Route path="/ui/queue" component={Queue} />
              <Route path="/ui/history" component={History} />
              <Route path="/ui/jobs/:id" component={JobPage} />
              <Route path="/ui/machines/:id" component={MachinePage} />
              <Route path="/ui/keys" component={Keys} />
              <Route path="/ui/notifications" component={Notifications} />
              <Route path="/ui/cameras" component={CameraWall} />
              <Route default component={NotFound} />
            </Router>
          </ErrorBoundary>
        )}
      </main>
    </LocationProvider>
  );
}

render(<App />, document.getElementById('app')!);
