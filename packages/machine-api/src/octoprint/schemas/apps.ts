/**
 * OctoPrint wire shapes: what Home Assistant and the phone apps call: application keys, the connection,
 * system commands. Part of ./index.ts.
 */

import { Type } from 'typebox';

export const AppKeyRequestBody = Type.Object(
  {
    app: Type.String({ maxLength: 100, description: 'The application asking; its key is named after it.' }),
    user: Type.Optional(
      Type.String({ maxLength: 100, description: 'The user the app asks for; shown to the administrator.' }),
    ),
  },
  { $id: 'AppKeyRequestBody', description: '`POST plugin/appkeys/request`, as OctoPrint apps send it.' },
);

export const AppKeyRequestCreated = Type.Object(
  { app_token: Type.String({ description: 'The polling token, also the last segment of `Location`.' }) },
  { $id: 'AppKeyRequestCreated', description: 'A key request recorded; poll `Location` for the decision.' },
);

export const AppKeyDecision = Type.Object(
  {
    api_key: Type.Optional(Type.String({ description: 'The key, once approved (200); handed out once.' })),
    message: Type.Optional(Type.String({ description: '"Awaiting decision" while pending (202).' })),
  },
  { $id: 'AppKeyDecision', description: '`GET plugin/appkeys/request/{token}`.' },
);

export const OctoPrintConnection = Type.Object(
  {
    current: Type.Object({
      state: Type.String({
        description: "As `api/printer`'s `state.text`; `Closed` while the machine is offline.",
      }),
      port: Type.Unsafe<string | null>({ type: 'string', nullable: true, description: 'The machine id.' }),
      baudrate: Type.Unsafe<number | null>({ type: 'integer', nullable: true }),
      printerProfile: Type.String(),
    }),
    options: Type.Object({
      ports: Type.Array(Type.String()),
      baudrates: Type.Array(Type.Integer()),
      printerProfiles: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
      portPreference: Type.Unsafe<string | null>({ type: 'string', nullable: true }),
      baudratePreference: Type.Unsafe<number | null>({ type: 'integer', nullable: true }),
      printerProfilePreference: Type.String(),
      autoconnect: Type.Boolean(),
    }),
  },
  { $id: 'OctoPrintConnection', description: '`GET api/connection`.' },
);

export const OctoPrintConnectionCommand = Type.Object(
  { command: Type.Union([Type.Literal('connect'), Type.Literal('disconnect'), Type.Literal('fake_ack')]) },
  { $id: 'OctoPrintConnectionCommand', description: '`POST api/connection` (other fields are ignored).' },
);

export const OctoPrintSystemCommands = Type.Object(
  { core: Type.Array(Type.Unknown()), custom: Type.Array(Type.Unknown()) },
  { $id: 'OctoPrintSystemCommands', description: '`GET api/system/commands`: none.' },
);
