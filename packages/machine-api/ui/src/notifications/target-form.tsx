/** The form that adds a notification target: its name, its kind and that kind's fields, its events. */

import { useState } from 'preact/hooks';
import { api, must } from '../api/client';
import { EVENTS, type EventName, FIELDS, type Kind, type KindField, newTarget } from './fields';
import type { Notifications } from './use-notifications';

function KindFieldInput({
  field,
  value,
  onValue,
}: {
  field: KindField;
  value: string;
  onValue: (value: string) => void;
}) {
  const id = `notify-field-${field.key}`;
  const common = {
    id,
    name: field.key,
    required: !field.optional,
    value,
    onInput: (event: Event) => onValue((event.currentTarget as HTMLInputElement).value),
  };
  return (
    <div class="field">
      <label for={id}>{field.label}</label>
      {field.secret ? (
        <input type="password" autoComplete="new-password" {...common} />
      ) : (
        <input type="text" autoComplete="off" {...common} />
      )}
    </div>
  );
}

function EventChoice({
  events,
  setEvents,
}: {
  events: EventName[];
  setEvents: (update: (current: EventName[]) => EventName[]) => void;
}) {
  return (
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
  );
}

export function TargetForm({ act }: { act: Notifications['act'] }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<Kind>('ntfy');
  const [values, setValues] = useState<Record<string, string>>({});
  const [events, setEvents] = useState<EventName[]>(EVENTS);

  const create = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      await must(api.POST('/notifications/targets', { body: newTarget(name, kind, values, events) }));
      setName('');
      setValues({});
    }, `Target ${name} added.`);
  };

  return (
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
      {FIELDS[kind].map((field) => (
        <KindFieldInput
          key={field.key}
          field={field}
          value={values[field.key] ?? ''}
          onValue={(value) => setValues({ ...values, [field.key]: value })}
        />
      ))}
      <EventChoice events={events} setEvents={setEvents} />
      <div>
        <button type="submit" class="primary" disabled={events.length === 0}>
          Add target
        </button>
      </div>
    </form>
  );
}
