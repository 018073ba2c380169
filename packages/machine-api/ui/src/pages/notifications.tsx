/**
 * `/ui/notifications` (admin scope): notification targets and the delivery log. Add a target (the kind's
 * own fields), send it the test message, switch it on or off, choose its events, remove it; targets of the
 * configuration file are shown read-only. Secrets are write-only: the service only says whether one is set.
 */

import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api/client';
import { ConfirmButton } from '../components/confirm';
import { when } from '../format';
import { useTitle } from '../title';

type Target = Schemas['NotificationTarget'];
type NewTarget = Schemas['NewNotificationTarget'];
type Delivery = Schemas['NotificationDelivery'];
type Kind = NewTarget['kind'];
type EventName = NonNullable<NewTarget['events']>[number];

const EVENTS: EventName[] = [
  'job.started',
  'job.completed',
  'job.failed',
  'job.cancelled',
  'job.paused',
  'machine.failed',
  'machine.offline',
  'machine.online',
  'machine.awaiting_clear',
  'queue.waiting',
  'queue.unroutable',
];

/** The fields each kind asks for, in the order a person fills them in; `secret` ones are write-only. */
const FIELDS: Record<Kind, { key: keyof NewTarget; label: string; secret?: boolean; optional?: boolean }[]> =
  {
    webhook: [
      { key: 'url', label: 'Receiver URL' },
      { key: 'secret', label: 'Signing secret (whsec_…)', secret: true },
    ],
    ntfy: [
      { key: 'url', label: 'Topic URL (https://ntfy.sh/…)' },
      { key: 'token', label: 'Access token', secret: true, optional: true },
    ],
    discord: [{ key: 'url', label: 'Discord webhook URL', secret: true }],
    telegram: [
      { key: 'bot_token', label: 'Bot token', secret: true },
      { key: 'chat_id', label: 'Chat id' },
    ],
    email: [
      { key: 'host', label: 'SMTP server' },
      { key: 'port', label: 'Port', optional: true },
      { key: 'username', label: 'User name', optional: true },
      { key: 'password', label: 'Password', secret: true, optional: true },
      { key: 'from', label: 'From' },
      { key: 'to', label: 'To (comma-separated)' },
    ],
  };

function newTarget(name: string, kind: Kind, values: Record<string, string>, events: EventName[]): NewTarget {
  const target: Record<string, unknown> = { name, kind };
  for (const { key } of FIELDS[kind]) {
    const value = values[key]?.trim();
    if (!value) continue;
    if (key === 'port') target.port = Number(value);
    else if (key === 'to') target.to = value.split(',').map((address) => address.trim());
    else target[key] = value;
  }
  if (events.length < EVENTS.length) target.events = [...events, 'test'];
  return target as NewTarget;
}

export function Notifications() {
  useTitle('Notifications');
  const [targets, setTargets] = useState<Target[] | null>(null);
  const [deliveries, setDeliveries] = useState<Delivery[]>([]);
  const [status, setStatus] = useState<'' | Delivery['status']>('');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [kind, setKind] = useState<Kind>('ntfy');
  const [values, setValues] = useState<Record<string, string>>({});
  const [events, setEvents] = useState<EventName[]>(EVENTS);

  const reload = async () => {
    try {
      setTargets(await must(api.GET('/notifications/targets')));
      const query = status ? { status, limit: 200 } : { limit: 200 };
      setDeliveries(await must(api.GET('/notifications/deliveries', { params: { query } })));
      setError(null);
    } catch (e) {
      setError(errorText(e));
    }
  };
  useEffect(() => {
    void reload();
    const timer = setInterval(() => void reload(), 5000);
    return () => clearInterval(timer);
  }, [status]);

  const act = async (what: () => Promise<unknown>, done?: string) => {
    setError(null);
    setNotice(null);
    try {
      await what();
      if (done) setNotice(done);
      await reload();
    } catch (e) {
      setError(errorText(e));
    }
  };

  const create = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      await must(api.POST('/notifications/targets', { body: newTarget(name, kind, values, events) }));
      setName('');
      setValues({});
    }, `Target ${name} added.`);
  };

  const test = (target: Target) =>
    act(
      () => must(api.POST('/notifications/targets/{id}/test', { params: { path: { id: target.id } } })),
      `Test message for ${target.name} recorded; see the log below.`,
    );
  const patch = (target: Target, body: Schemas['NotificationTargetPatch']) =>
    act(() => must(api.PATCH('/notifications/targets/{id}', { params: { path: { id: target.id } }, body })));
  const remove = (target: Target) =>
    act(() => must(api.DELETE('/notifications/targets/{id}', { params: { path: { id: target.id } } })));

  return (
    <section aria-labelledby="notify-title">
      <h1 id="notify-title">Notifications</h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <h2>Targets</h2>
      {targets === null && !error && <p aria-busy="true">Loading…</p>}
      {targets?.length === 0 && <p>No targets yet.</p>}
      {targets && targets.length > 0 && (
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
                <tr key={target.id} data-target={target.name}>
                  <td>
                    {target.name}
                    {target.source === 'config' && <small> (configuration file)</small>}
                  </td>
                  <td>{target.kind}</td>
                  <td>{target.events ? target.events.join(', ') : 'all'}</td>
                  <td>{target.secret_set ? 'set' : '—'}</td>
                  <td class="actions">
                    <button type="button" onClick={() => void test(target)}>
                      Send test
                    </button>
                    {target.source === 'api' && (
                      <>
                        <button
                          type="button"
                          onClick={() => void patch(target, { enabled: !target.enabled })}
                        >
                          {target.enabled ? 'Turn off' : 'Turn on'}
                        </button>
                        <ConfirmButton
                          label="Remove"
                          class="danger"
                          question={`Remove the target ${target.name}?`}
                          detail="Its pending notifications are given up; its log stays."
                          confirmLabel="Remove target"
                          onConfirm={() => remove(target)}
                        />
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form class="stack" onSubmit={create}>
        <h2>New target</h2>
        <label>
          Name
          <input
            name="name"
            required
            pattern="[A-Za-z0-9][A-Za-z0-9 ._\-]*"
            value={name}
            onInput={(event) => setName((event.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <label>
          Kind
          <select
            name="kind"
            value={kind}
            onChange={(event) => {
              setKind((event.currentTarget as HTMLSelectElement).value as Kind);
              setValues({});
            }}
          >
            <option value="webhook">Webhook (Standard Webhooks)</option>
            <option value="ntfy">ntfy</option>
            <option value="discord">Discord</option>
            <option value="telegram">Telegram</option>
            <option value="email">E-mail (SMTP)</option>
          </select>
        </label>
        {FIELDS[kind].map((field) => {
          const onInput = (event: Event) =>
            setValues({ ...values, [field.key]: (event.currentTarget as HTMLInputElement).value });
          const id = `notify-field-${field.key}`;
          const common = {
            id,
            name: field.key,
            required: !field.optional,
            value: values[field.key] ?? '',
            onInput,
          };
          return (
            <div key={field.key} class="field">
              <label for={id}>{field.label}</label>
              {field.secret ? (
                <input type="password" autoComplete="new-password" {...common} />
              ) : (
                <input type="text" autoComplete="off" {...common} />
              )}
            </div>
          );
        })}
        <fieldset>
          <legend>Events</legend>
          {EVENTS.map((name) => (
            <label key={name} class="check">
              <input
                type="checkbox"
                name="events"
                value={name}
                checked={events.includes(name)}
                onChange={(event) =>
                  setEvents((current) =>
                    (event.currentTarget as HTMLInputElement).checked
                      ? [...current, name]
                      : current.filter((entry) => entry !== name),
                  )
                }
              />
              <span>{name}</span>
            </label>
          ))}
        </fieldset>
        <div>
          <button type="submit" class="primary" disabled={events.length === 0}>
            Add target
          </button>
        </div>
      </form>
      <h2>Delivery log</h2>
      <label>
        Status
        <select
          name="status"
          value={status}
          onChange={(event) => setStatus((event.currentTarget as HTMLSelectElement).value as typeof status)}
        >
          <option value="">all</option>
          <option value="pending">pending</option>
          <option value="delivered">delivered</option>
          <option value="failed">failed</option>
          <option value="folded">folded into a digest</option>
        </select>
      </label>
      {deliveries.length === 0 ? (
        <p>Nothing sent yet.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Target</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Answer</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((delivery) => (
                <tr key={delivery.id} data-delivery={delivery.id}>
                  <td>{when(delivery.created_at)}</td>
                  <td>{delivery.target_name}</td>
                  <td>{delivery.event}</td>
                  <td>{delivery.status}</td>
                  <td>{delivery.attempts}</td>
                  <td>
                    {delivery.response_status ?? ''} {delivery.error ?? ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
