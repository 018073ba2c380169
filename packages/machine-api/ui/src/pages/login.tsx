/** Shown when the service answers 401: asks for an API key and keeps it for this browser tab only. */

import { useState } from 'preact/hooks';
import { restartEvents } from '../live/events';
import { apiKey, rememberKey } from '../session';
import { useTitle } from '../title';

export function Login() {
  useTitle('API key needed');
  const [key, setKey] = useState('');
  const refused = apiKey.value !== null;
  return (
    <section aria-labelledby="login-title" class="narrow">
      <h1 id="login-title">API key needed</h1>
      <p>
        This service asks for an API key. It is kept for this browser tab only and forgotten when you close
        it.
      </p>
      {refused && (
        <p class="error" role="alert">
          The service did not accept the key given. Check it, or ask an administrator for a new one.
        </p>
      )}
      <form
        class="stack"
        onSubmit={(event) => {
          event.preventDefault();
          rememberKey(key.trim());
          restartEvents();
        }}
      >
        <label>
          API key
          <input
            type="password"
            name="api_key"
            autocomplete="off"
            required
            value={key}
            onInput={(event) => setKey((event.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <div>
          <button type="submit" class="primary">
            Use this key
          </button>
        </div>
      </form>
    </section>
  );
}
