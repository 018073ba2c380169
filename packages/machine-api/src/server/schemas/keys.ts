/** Wire shapes of the API key endpoints (`/keys`), registered as shared schemas like those of index.ts. */

import { type Static, Type } from 'typebox';
import { KEY_NAME } from '../../access/keys.js';
import { SCOPES } from '../../access/scopes.js';

export const ApiKeyScope = Type.Unsafe<(typeof SCOPES)[number]>({
  $id: 'ApiKeyScope',
  description:
    '`read`: every GET and `/events`; `print`: `/print`, `/queue`, slicer uploads, cancel/requeue own jobs; `control`: pause/resume/stop/clear machines, any job; `clear`: `POST /machines/{id}/clear` only (a bed sensor, an automation); `admin`: keys, and everything else.',
  type: 'string',
  enum: [...SCOPES],
});

const scopeList = Type.Array(Type.Unsafe<(typeof SCOPES)[number]>({ $ref: 'ApiKeyScope' }), {
  minItems: 1,
  maxItems: SCOPES.length,
  uniqueItems: true,
  description: 'What the key may do.',
});

export const ApiKey = Type.Object(
  {
    name: Type.String({ description: 'Name of the key; jobs submitted with it record it as their owner.' }),
    scopes: scopeList,
    created_at: Type.String({ format: 'date-time', description: 'When the key was created.' }),
  },
  { $id: 'ApiKey', description: 'An API key, without its secret (which is shown only once, at creation).' },
);

export const NewApiKey = Type.Object(
  {
    name: Type.String({
      pattern: KEY_NAME.source,
      description: 'Name of the new key (letters, digits, `.`, `_`, `-`).',
    }),
    scopes: scopeList,
  },
  { $id: 'NewApiKey', description: 'The key to create.', additionalProperties: false },
);
export type NewApiKey = Static<typeof NewApiKey>;

export const CreatedApiKey = Type.Object(
  {
    name: Type.String(),
    scopes: scopeList,
    created_at: Type.String({ format: 'date-time' }),
    key: Type.String({
      description: 'The key itself. Shown only in this response; the service keeps only a hash of it.',
    }),
  },
  { $id: 'CreatedApiKey', description: 'A newly created API key, with its secret.' },
);

export const AppKeyRequestInfo = Type.Object(
  {
    id: Type.String({ description: 'Id of the request, for approve and deny.' }),
    app: Type.String({ description: 'The application asking (its key will be named after it).' }),
    user: Type.Unsafe<string | null>({
      type: 'string',
      nullable: true,
      description: 'The user the app said it asks for; a label only.',
    }),
    machine_id: Type.String({ description: 'The OctoPrint base it asked through (`queue` for the queue).' }),
    created_at: Type.String({ format: 'date-time' }),
    expires_at: Type.String({
      format: 'date-time',
      description: 'Undecided by then, the request ends; approved, the app must fetch its key by then.',
    }),
  },
  { $id: 'AppKeyRequest', description: 'An app waiting for an API key (OctoPrint Application Keys flow).' },
);

export const AppKeyApproval = Type.Object(
  {
    scopes: Type.Optional({
      ...scopeList,
      description:
        'What the key may do; default `read` and `control` (what Home Assistant and the apps use).',
    }),
  },
  { $id: 'AppKeyApproval', description: 'The approval of an app key request.', additionalProperties: false },
);

export const AppKeyRequestParams = Type.Object({ id: Type.String({ description: 'The request id.' }) });

export const KeyNameParams = Type.Object({ name: Type.String({ description: 'The key name.' }) });

export const keySchemas = [ApiKeyScope, ApiKey, NewApiKey, CreatedApiKey, AppKeyRequestInfo, AppKeyApproval];
