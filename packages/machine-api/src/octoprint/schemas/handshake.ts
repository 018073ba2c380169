/**
 * OctoPrint wire shapes: what a slicer reads to find and check the printer: version, server, settings, user,
 * and the error body. Part of ./index.ts.
 */

import { type Static, Type } from 'typebox';
import { NullableString } from './nullable.js';

export const OctoPrintError = Type.Object(
  { error: Type.String({ description: 'What went wrong, in words.' }) },
  {
    $id: 'OctoPrintError',
    description:
      "OctoPrint's error body, answered by every route under an OctoPrint base (a missing or unknown key is 403 there, as in OctoPrint).",
  },
);
export type OctoPrintErrorBody = Static<typeof OctoPrintError>;

export const OctoPrintVersion = Type.Object(
  {
    api: Type.String({ description: 'API version; PrusaSlicer and OrcaSlicer require the field.' }),
    server: Type.String({ description: 'Server version; Cura shows it.' }),
    text: Type.String({ description: 'Starts with "OctoPrint", which PrusaSlicer checks.' }),
  },
  { $id: 'OctoPrintVersion', description: '`GET api/version`.' },
);

export const OctoPrintServer = Type.Object(
  { server: Type.String(), safemode: Type.Unsafe<string | null>({ type: 'string', nullable: true }) },
  { $id: 'OctoPrintServer', description: '`GET api/server`.' },
);

export const OctoPrintSettings = Type.Object(
  {
    api: Type.Object({ allowCrossOrigin: Type.Boolean() }),
    feature: Type.Object({
      sdSupport: Type.Boolean({ description: 'Cura offers "store on SD" when true.' }),
    }),
    webcam: Type.Object({
      webcamEnabled: Type.Boolean({ description: 'True when the machine has a camera.' }),
      timelapseEnabled: Type.Boolean(),
      streamUrl: Type.String({
        description:
          'Absolute MJPEG URL carrying the camera token (opened without the API key); empty without a camera.',
      }),
      snapshotUrl: Type.String({ description: 'Absolute JPEG URL, with the same token.' }),
      streamRatio: Type.String(),
      streamTimeout: Type.Number(),
      snapshotTimeout: Type.Number(),
      snapshotSslValidation: Type.Boolean(),
      flipH: Type.Boolean(),
      flipV: Type.Boolean(),
      rotate90: Type.Boolean(),
      bitrate: Type.String(),
      cacheBuster: Type.Boolean(),
    }),
    plugins: Type.Object(
      {
        discovery: Type.Object({
          upnpUuid: Type.String({
            format: 'uuid',
            description:
              'Stable per machine and install (the same after restarts); Home Assistant makes it the device id.',
          }),
          publicHost: NullableString,
          publicPort: Type.Unsafe<number | null>({ type: 'integer', nullable: true }),
          httpUsername: NullableString,
          httpPassword: NullableString,
        }),
      },
      {
        description:
          'Only `discovery`: Cura then uploads plain G-code (not .ufp) and does not wait for an analysis.',
      },
    ),
  },
  {
    $id: 'OctoPrintSettings',
    description:
      '`GET api/settings`; Cura tests the key with it, Home Assistant reads the device id and camera.',
  },
);

export const OctoPrintUser = Type.Object(
  {
    name: Type.String({ description: 'The key name; Cura shows it.' }),
    active: Type.Boolean(),
    admin: Type.Boolean(),
    user: Type.Boolean(),
    groups: Type.Array(Type.String()),
    permissions: Type.Array(Type.String()),
    session: Type.Optional(
      Type.String({
        description: '`POST api/login`: the session for the push channel (`{"auth": "name:session"}`).',
      }),
    ),
  },
  { $id: 'OctoPrintUser', description: '`POST api/login` (passive) and `GET api/currentuser`.' },
);
