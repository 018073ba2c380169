/** The error body every route of the service answers with (the seed's `Error`). */

import { type Static, Type } from 'typebox';

export const ErrorSchema = Type.Object(
  {
    request_id: Type.String(),
    error_code: Type.Optional(Type.String()),
    message: Type.String(),
  },
  { $id: 'Error', description: 'Error information from a response.' },
);
export type ErrorBody = Static<typeof ErrorSchema>;
