import type { ServiceContext } from '../services/context.js';

/** Options every API route plugin receives from app.ts. */
export interface ApiRouteOptions {
  ctx: ServiceContext;
}
