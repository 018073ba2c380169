/** The apps asking for a key through OctoPrint's Application Keys flow, each to approve or deny. */

import { when } from '../format';
import type { KeyRequest, Keys } from './use-keys';

export function AppRequests({ requests, decide }: { requests: KeyRequest[]; decide: Keys['decide'] }) {
  return (
    <section aria-labelledby="requests-title" class="notice">
      <h2 id="requests-title">Apps asking for a key</h2>
      <p>Approving gives the app a key named after it, with the read and control scopes.</p>
      <ul class="stack">
        {requests.map((request) => (
          <li key={request.id} data-request={request.id}>
            <strong>{request.app}</strong>
            {request.user ? ` for ${request.user}` : ''} on <code>{request.machine_id}</code>, asked{' '}
            {when(request.created_at)}{' '}
            <button type="button" class="primary" onClick={() => decide(request.id, true)}>
              Approve
            </button>{' '}
            <button type="button" class="danger" onClick={() => decide(request.id, false)}>
              Deny
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
