/** Nullable scalars written as OpenAPI 3.0 does (`nullable: true`), shared by the OctoPrint shapes. */

import { Type } from 'typebox';

export const NullableString = Type.Unsafe<string | null>({ type: 'string', nullable: true });
export const NullableNumber = Type.Unsafe<number | null>({ type: 'number', nullable: true });
export const NullableInteger = Type.Unsafe<number | null>({ type: 'integer', nullable: true });
