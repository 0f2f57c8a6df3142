/** The inspector page: a header, the page the hash names, read-only. Served at /ui/ by `proxy serve`. */
import 'uplot/dist/uPlot.min.css';
import './app.css';
import { render } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { href, useRoute, type Route } from './router.js';
import { OverviewPage } from './views/overview/view.js';
import { RequestPage } from './views/request/view.js';
import { SessionPage } from './views/session/view.js';
import { SessionsPage } from './views/sessions/view.js';

function App() {
  const route = useRoute();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  // After a page change, focus goes to the new page's heading (as a full page load would start there).
  useEffect(() => {
    if (first.current) { first.current = false; return; }
    const h1 = main.current?.querySelector('h1');
    if (h1 instanceof HTMLElement) { h1.tabIndex = -1; h1.focus({ preventScroll: false }); }
  }, [route.page, route.page === 'session' || route.page === 'request' ? route.id : '', route.page === 'request' ? route.seq : 0]);
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); main.current?.focus(); }}>Skip to content</a>
      <header class="top">
        <p class="brand">prefix-proxy <span>inspector</span></p>
        <nav aria-label="Main">
          <a href={href.overview()} aria-current={route.page === 'overview' ? 'page' : undefined} data-testid="nav-overview">Overview</a>
          <a href={href.sessions()} aria-current={route.page === 'sessions' ? 'page' : undefined} data-testid="nav-sessions">Sessions</a>
        </nav>
      </header>
      <main id="main" ref={main} tabIndex={-1} data-page={route.page}>
        <Page route={route} />
      </main>
      <footer class="muted">Read-only. Figures come from the session logs; unknown prices stay unknown.</footer>
    </>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'overview': return <OverviewPage query={route.query} />;
    case 'sessions': return <SessionsPage query={route.query} />;
    case 'session': return <SessionPage key={route.id} id={route.id} />;
    case 'request': return <RequestPage id={route.id} seq={route.seq} />;
    default: return <><h1>Not found</h1><p>No such page. <a href={href.overview()}>Go to the overview</a>.</p></>;
  }
}

render(<App />, document.getElementById('app')!);
