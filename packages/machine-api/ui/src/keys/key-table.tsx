/** The API keys (never their secrets), each with a revoke button that asks first. */

import { ConfirmButton } from '../components/confirm';
import { when } from '../format';
import type { ApiKey, Keys } from './use-keys';

export function KeyTable({ keys, revoke }: { keys: ApiKey[]; revoke: Keys['revoke'] }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.name} data-key={key.name}>
              <td>{key.name}</td>
              <td>{key.scopes.join(', ')}</td>
              <td>{when(key.created_at)}</td>
              <td>
                <ConfirmButton
                  label="Revoke"
                  class="danger"
                  question={`Revoke the key ${key.name}?`}
                  detail="Whoever uses it is refused from their next request on. This cannot be undone."
                  confirmLabel="Revoke key"
                  onConfirm={() => revoke(key.name)}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
