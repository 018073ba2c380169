/**
 * `/ui/keys` (admin scope): the service's API keys: create one (its secret is shown here once and never
 * again), list them, revoke one; and the apps asking for a key through OctoPrint's Application Keys flow
 * (Home Assistant, OctoPod, OctoApp), to approve or deny. Without the admin scope the service answers 403
 * and the page says so. The parts are in ../keys/.
 */

import { AppRequests } from '../keys/app-requests';
import { KeyForm } from '../keys/key-form';
import { KeyTable } from '../keys/key-table';
import { useKeys } from '../keys/use-keys';
import { useTitle } from '../title';

export function Keys() {
  useTitle('API keys');
  const { keys, requests, created, error, decide, create, revoke } = useKeys();
  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {created && (
        <div class="notice" role="status">
          <p>
            Key <strong>{created.name}</strong> created. Copy it now: it is not shown again.
          </p>
          <p class="key-once" data-field="new-key">
            {created.key}
          </p>
        </div>
      )}
      {requests.length > 0 && <AppRequests requests={requests} decide={decide} />}
      <KeyForm create={create} />
      <h2>Keys</h2>
      {keys === null && !error && <p aria-busy="true">Loading…</p>}
      {keys?.length === 0 && <p>No keys yet.</p>}
      {keys && keys.length > 0 && <KeyTable keys={keys} revoke={revoke} />}
    </section>
  );
}
