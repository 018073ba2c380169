/**
 * `GET /machines/{id}/snapshot` (a JPEG at most about a second old), `GET /machines/{id}/stream` (MJPEG,
 * one upstream per camera however many viewers), `GET /jobs/{id}/photo` (the photo of a finished job), and
 * the same camera as OctoPrint clients open it (`/octoprint/{id}/webcam/?action=stream|snapshot`, with the
 * camera token of access/camera-tokens.ts).
 */

import { readFile } from 'node:fs/promises';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { NoCamera } from '../../cameras/camera.js';
import { MJPEG_CONTENT_TYPE, MjpegWriter } from '../../cameras/mjpeg-writer.js';
import { ServiceError } from '../../errors.js';
import { octoPrintErrorResponses } from '../../octoprint/routes/target.js';
import { JpegResponse } from '../schemas/cameras.js';
import { JobIdParams } from '../schemas/jobs.js';
import { MachineIdParams } from '../schemas/machines.js';
import { errorResponses, type RouteOptions } from '../types.js';

/** The job ended without a photo (no camera, or it did not answer). */
class NoPhoto extends ServiceError {
  constructor(jobId: string) {
    super(404, 'NoPhoto', `job "${jobId}" has no photo`);
  }
}

/**
 * The camera routes (snapshot, stream, job photos).
 *
 * Long by design: one registration per route of the area, each a schema and a short handler that calls a service.
 */
export const cameraRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { context }) => {
  const { cameras, photos, jobs } = context;
  const viewers = new Set<MjpegWriter>();
  // Open streams would keep the server from closing.
  app.addHook('preClose', (done) => {
    for (const viewer of viewers) viewer.end(null);
    done();
  });

  app.get(
    '/machines/:id/snapshot',
    {
      schema: {
        operationId: 'get_machine_snapshot',
        summary:
          "A JPEG from the machine's camera, at most about a second old. 404 NoCamera without a camera; 503 when the camera does not answer within its timeout; 502 when it answers wrongly (e.g. bad credentials).",
        tags: ['cameras'],
        params: MachineIdParams,
        response: { 200: JpegResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const jpeg = await cameras.snapshot(request.params.id);
      return reply.type('image/jpeg').header('cache-control', 'no-store').send(jpeg);
    },
  );

  app.get(
    '/machines/:id/stream',
    {
      schema: {
        operationId: 'get_machine_stream',
        summary:
          "The machine's camera as MJPEG (`multipart/x-mixed-replace`), for an `<img>`. One connection to the camera serves every viewer; a viewer that reads slowly skips frames.",
        tags: ['cameras'],
        params: MachineIdParams,
        response: {
          200: {
            description: 'an endless `multipart/x-mixed-replace` stream of JPEG parts',
            content: { 'multipart/x-mixed-replace': { schema: { type: 'string', format: 'binary' } } },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => streamTo(request.params.id, reply),
  );

  /**
   * Answers with the machine's MJPEG stream. Errors known before the stream starts (no such machine, no
   * camera, ffmpeg missing) are answered as errors; a camera failing later ends the stream (its reason
   * shows in `camera.reason`).
   */
  function streamTo(id: string, reply: FastifyReply): void {
    if (cameras.status(context.machines.require(id).id) === null) throw new NoCamera(id);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (typeof value === 'string' || typeof value === 'number') headers[name] = String(value);
    }
    const raw = reply.raw;
    const viewer = new MjpegWriter(raw, () => viewers.delete(viewer));
    const stop = cameras.watch(id, viewer);
    reply.hijack();
    raw.writeHead(200, {
      ...headers,
      'content-type': MJPEG_CONTENT_TYPE,
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    viewers.add(viewer);
    raw.on('close', () => {
      viewers.delete(viewer);
      stop();
    });
  }

  app.get(
    '/octoprint/:target/webcam/',
    {
      schema: {
        operationId: 'octoprint_webcam',
        summary:
          "OctoPrint clients' webcam URL, as mjpg-streamer answers it: `action=stream` (MJPEG) or `action=snapshot` (JPEG). Opened with the machine's camera token in `token` (from `api/settings`; Home Assistant fetches it without its key) or a key with `read`.",
        tags: ['octoprint'],
        params: Type.Object({ target: Type.String({ description: 'The machine id.' }) }),
        querystring: Type.Object({
          action: Type.Optional(
            Type.Union([Type.Literal('stream'), Type.Literal('snapshot')], {
              description: '`stream` (the default) or `snapshot`.',
            }),
          ),
          token: Type.Optional(Type.String({ description: "The machine's camera token." })),
        }),
        response: {
          200: {
            description: 'the stream (`multipart/x-mixed-replace`) or a JPEG',
            content: {
              'multipart/x-mixed-replace': { schema: { type: 'string', format: 'binary' } },
              'image/jpeg': { schema: { type: 'string', format: 'binary' } },
            },
          },
          ...octoPrintErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const id = request.params.target;
      if (request.query.action === 'snapshot') {
        const jpeg = await cameras.snapshot(id);
        return reply
          .type('image/jpeg')
          .header('cache-control', 'no-store')
          .send(jpeg as never);
      }
      return streamTo(id, reply);
    },
  );

  app.delete(
    '/machines/:id/camera-token',
    {
      schema: {
        operationId: 'revoke_camera_token',
        summary:
          "Revoke the machine's camera token: every webcam URL handed out by its OctoPrint `api/settings` stops working; the next `api/settings` gives a new one.",
        tags: ['cameras'],
        params: MachineIdParams,
        response: { 204: { description: 'revoked' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await context.cameraTokens.revoke(context.machines.require(request.params.id).id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/jobs/:id/photo',
    {
      schema: {
        operationId: 'get_job_photo',
        summary:
          'The photo taken when the job ended (completed, failed or cancelled), if its machine has a camera. 404 NoPhoto when there is none.',
        tags: ['cameras'],
        params: JobIdParams,
        response: { 200: JpegResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const job = await jobs.get(request.params.id);
      const photo = await photos.photoFor(job.id);
      const jpeg = photo && (await readFile(photo.path).catch(() => null));
      if (!photo || !jpeg) throw new NoPhoto(job.id);
      return reply
        .type('image/jpeg')
        .header('cache-control', 'private, max-age=3600')
        .header('last-modified', photo.takenAt.toUTCString())
        .send(jpeg);
    },
  );
};
