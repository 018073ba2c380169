/**
 * Query parameters. They arrive as strings and stay strings: handlers read them with Gitea's Form* rules
 * (api/form.ts), so `?limit=abc` means what it means to Gitea (0, the default) and nothing is coerced by
 * the validator. `x-param-type` records the type Gitea's API document gives the parameter; the forge's own
 * document (api/api-document.ts) is generated from it.
 */
import { type TString, Type } from 'typebox';

/** Annotation keyword the validator must know (registered in api/app.ts). */
export const PARAM_TYPE_KEYWORD = 'x-param-type';

export interface QueryType {
  type: 'integer' | 'boolean' | 'string';
  format?: 'int64' | 'date' | 'date-time';
}

function queryParam(type: QueryType, description: string): TString {
  return Type.String({ description, [PARAM_TYPE_KEYWORD]: type });
}

/** An int64 parameter (Gitea's FormInt64: anything but an integer reads as 0). */
export const QueryInt64 = (description: string) =>
  Type.Optional(queryParam({ type: 'integer', format: 'int64' }, description));
/** An int parameter (Gitea's FormInt). */
export const QueryInt = (description: string) => Type.Optional(queryParam({ type: 'integer' }, description));
/** A boolean parameter (Gitea's FormBool: strconv.ParseBool, anything else false). */
export const QueryBool = (description: string) => Type.Optional(queryParam({ type: 'boolean' }, description));
/** A string parameter. */
export const QueryString = (description: string) =>
  Type.Optional(queryParam({ type: 'string' }, description));
/** A `YYYY-MM-DD` date parameter. */
export const QueryDate = (description: string) =>
  Type.Optional(queryParam({ type: 'string', format: 'date' }, description));

/** An ISO 8601 date-time parameter. */
export const QueryDateTime = (description: string) =>
  Type.Optional(queryParam({ type: 'string', format: 'date-time' }, description));

/** `page` and `limit` of every paginated list. */
export const PageQuery = {
  page: QueryInt('page number of results to return (1-based)'),
  limit: QueryInt('page size of results'),
};

/** A numeric path segment (ids): parsed by the handler, documented as Gitea's int64. */
export const PathInt64 = (description: string) =>
  Type.String({ description, [PARAM_TYPE_KEYWORD]: { type: 'integer', format: 'int64' } });

/** A numeric path segment Gitea documents as a plain integer. */
export const PathInt = (description: string) =>
  Type.String({ description, [PARAM_TYPE_KEYWORD]: { type: 'integer' } });

/** Query of lists that take only `page` and `limit`. */
export const PageQuerySchema = Type.Object({ ...PageQuery });
