/** Wire shapes of the service's own endpoints (`/ping`). */

import { Type } from 'typebox';

export const Pong = Type.Object(
  { message: Type.String({ description: 'The pong response.' }) },
  { $id: 'Pong', description: 'The response from the `/ping` endpoint.' },
);
