/** The notification targets: send one the test message, switch it on or off, remove it (API ones only). */

import { api, must, type Schemas } from '../api/client';
import { ConfirmButton } from '../components/confirm';
import type { Notifications, Target } from './use-notifications';

function TargetRow({ target, act }: { target: Target; act: Notifications['act'] }) {
  const path = { params: { path: { id: target.id } } };
  const test = () =>
    act(
      () => must(api.POST('/notifications/targets/{id}/test', path)),
      `Test message for ${target.name} recorded; see the log below.`,
    );
  const patch = (body: Schemas['NotificationTargetPatch']) =>
    act(() => must(api.PATCH('/notifications/targets/{id}', { ...path, body })));
  const remove = () => act(() => must(api.DELETE('/notifications/targets/{id}', path)));
  return (
    <tr data-target={target.name}>
      <td>
        {target.name}
        {target.source === 'config' && <small> (configuration file)</small>}
      </td>
      <td>{target.kind}</td>
      <td>{target.events ? target.events.join(', ') : 'all'}</td>
      <td>{target.secret_set ? 'set' : '—'}</td>
      <td class="actions">
        <button type="button" onClick={() => void test()}>
          Send test
        </button>
        {target.source === 'api' && (
          <>
            <button type="button" onClick={() => void patch({ enabled: !target.enabled })}>
              {target.enabled ? 'Turn off' : 'Turn on'}
            </button>
            <ConfirmButton
              label="Remove"
              class="danger"
              question={`Remove the target ${target.name}?`}
              detail="Its pending notifications are given up; its log stays."
              confirmLabel="Remove target"
              onConfirm={remove}
            />
          </>
        )}
      </td>
    </tr>
  );
}

export function TargetsTable({ targets, act }: { targets: Target[]; act: Notifications['act'] }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col">Events</th>
            <th scope="col">Secret</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {targets.map((target) => (
            <TargetRow key={target.id} target={target} act={act} />
          ))}
        </tbody>
      </table>
    </div>
  );
}
