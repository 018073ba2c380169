/** Bodiless answers, declared so the API document lists their status codes as Gitea's does. */
import { Type } from 'typebox';

/** 204 without a body (Gitea's `#/responses/empty`). */
export const NoContentSchema = Type.Null({ description: 'APIEmpty is an empty response' });
