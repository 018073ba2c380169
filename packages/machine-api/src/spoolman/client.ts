/**
 * A small client of Spoolman's REST API (https://donkie.github.io/Spoolman/): read a spool, report use.
 * Every request has a deadline and a bounded answer, and failures are described in words (never the
 * library's message), so callers can tell "Spoolman is down, try later" from "Spoolman said no".
 */

import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';
import { Agent, type Dispatcher, request } from 'undici';
import type { SpoolmanSettings } from '../config/spoolman-keys.js';

/** A spool answer is a few hundred bytes; anything past this is not Spoolman. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Spoolman's connections, apart from the service's other clients. */
const agent = new Agent({ keepAliveTimeout: 10_000, connections: 4 });

const Num = Type.Union([Type.Number(), Type.Null()]);
const Str = Type.Union([Type.String({ maxLength: 1024 }), Type.Null()]);

/** The parts of Spoolman's `Spool` this service uses; every other field is ignored. */
const SpoolAnswer = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  remaining_weight: Type.Optional(Num),
  used_length: Type.Optional(Num),
  price: Type.Optional(Num),
  filament: Type.Object({
    name: Type.Optional(Str),
    material: Type.Optional(Str),
    color_hex: Type.Optional(Str),
    density: Type.Optional(Num),
    diameter: Type.Optional(Num),
    price: Type.Optional(Num),
    weight: Type.Optional(Num),
  }),
});

export interface Spool {
  id: number;
  /** Grams left, or null when Spoolman does not know. */
  remainingG: number | null;
  /** Millimetres used so far, as Spoolman counts them (0 for a new spool). */
  usedLengthMm: number;
  /** Price of the whole spool (the spool's own, else its filament's), or null. */
  price: number | null;
  /** Net filament weight of a full spool in grams, or null. */
  weightG: number | null;
  name: string | null;
  material: string | null;
  /** `RRGGBB` or `RRGGBBAA` without `#`, as Spoolman stores it, or null. */
  colorHex: string | null;
  density: number | null;
  diameter: number | null;
}

/** Spoolman answered, and the answer means the spool does not exist. */
export class SpoolNotFound extends Error {}
/** Spoolman could not be reached or answered with a server error: worth trying again later. */
export class SpoolmanUnavailable extends Error {}
/** Spoolman refused the request (4xx other than 404) or answered something that is not a spool. */
export class SpoolmanRefused extends Error {}

export class SpoolmanClient {
  constructor(private readonly settings: SpoolmanSettings) {}

  /** `GET /api/v1/spool/{id}`. */
  async spool(id: number): Promise<Spool> {
    const answer = await this.send('GET', `/api/v1/spool/${id}`);
    return parseSpool(answer, id);
  }

  /** `PUT /api/v1/spool/{id}/use` with a length in millimetres; Spoolman answers the spool as it now is. */
  async use(id: number, lengthMm: number): Promise<Spool> {
    const answer = await this.send('PUT', `/api/v1/spool/${id}/use`, { use_length: lengthMm });
    return parseSpool(answer, id);
  }

  private async send(
    method: 'GET' | 'PUT',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; text: string }> {
    const signal = AbortSignal.timeout(this.settings.timeoutMs);
    let answer: Dispatcher.ResponseData<unknown>;
    try {
      answer = await request(`${this.settings.url}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
        dispatcher: agent,
      });
    } catch {
      throw new SpoolmanUnavailable(
        signal.aborted ? 'Spoolman did not answer in time' : 'Spoolman cannot be reached',
      );
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of answer.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_ANSWER_BYTES) throw new SpoolmanRefused('Spoolman answered too much');
        chunks.push(chunk as Buffer);
      }
    } catch (error) {
      if (error instanceof SpoolmanRefused) throw error;
      throw new SpoolmanUnavailable('Spoolman closed the answer early');
    } finally {
      answer.body.destroy();
    }
    if (answer.statusCode >= 500) throw new SpoolmanUnavailable(`Spoolman answered ${answer.statusCode}`);
    return { status: answer.statusCode, text: Buffer.concat(chunks).toString('utf8') };
  }
}

/** A spool answer, or the error it means (404: no such spool; anything else but a spool: refused). */
function parseSpool(answer: { status: number; text: string }, id: number): Spool {
  if (answer.status === 404) throw new SpoolNotFound(`Spoolman has no spool ${id}`);
  if (answer.status !== 200) throw new SpoolmanRefused(`Spoolman answered ${answer.status}`);
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    throw new SpoolmanRefused('Spoolman answered something that is not JSON');
  }
  if (!Value.Check(SpoolAnswer, body) || body.id !== id)
    throw new SpoolmanRefused(`Spoolman's answer for spool ${id} is not a spool`);
  return toSpool(body);
}

function toSpool(body: Static<typeof SpoolAnswer>): Spool {
  const f = body.filament;
  const finite = (n: number | null | undefined): number | null =>
    typeof n === 'number' && Number.isFinite(n) ? n : null;
  return {
    id: body.id,
    remainingG: finite(body.remaining_weight),
    usedLengthMm: finite(body.used_length) ?? 0,
    price: finite(body.price) ?? finite(f.price),
    weightG: finite(f.weight),
    name: f.name ?? null,
    material: f.material ?? null,
    colorHex: f.color_hex ?? null,
    density: finite(f.density),
    diameter: finite(f.diameter),
  };
}
