/** Wire shapes of the cameras: `camera` on a machine, and the JPEG answers. */

import { type Static, Type } from 'typebox';

export const CameraInfo = Type.Object(
  {
    available: Type.Boolean({
      description:
        'Whether pictures can be had now: false when the camera cannot be used (`reason` says why: ffmpeg missing, no webcam listed) or its last attempt failed.',
    }),
    kind: Type.Unsafe<'http' | 'moonraker' | 'bambu-jpeg' | 'bambu-rtsps'>({
      type: 'string',
      enum: ['http', 'moonraker', 'bambu-jpeg', 'bambu-rtsps'],
      description:
        "`http`: a configured snapshot/MJPEG URL; `moonraker`: the printer's webcam registry; `bambu-jpeg`: a P1/A1 printer's TLS JPEG stream; `bambu-rtsps`: an X1/H2/P2S printer's RTSPS stream through ffmpeg.",
    }),
    width: Type.Unsafe<number | null>({
      type: 'integer',
      nullable: true,
      description: 'Width of the last frame in pixels; null before the first frame.',
    }),
    height: Type.Unsafe<number | null>({
      type: 'integer',
      nullable: true,
      description: 'Height of the last frame in pixels; null before the first frame.',
    }),
    last_frame_at: Type.Unsafe<string | null>({
      type: 'string',
      format: 'date-time',
      nullable: true,
      description: 'When the last frame arrived; null before the first frame.',
    }),
    reason: Type.Unsafe<string | null>({
      type: 'string',
      nullable: true,
      description: 'Why the camera is not available (never contains credentials); null when it is.',
    }),
    flip_horizontal: Type.Boolean({
      description: 'Show the picture mirrored left to right (Moonraker webcam setting).',
    }),
    flip_vertical: Type.Boolean({ description: 'Show the picture upside down (Moonraker webcam setting).' }),
    rotation: Type.Integer({ description: 'Clockwise degrees to rotate the picture by: 0, 90, 180 or 270.' }),
  },
  {
    $id: 'CameraInfo',
    description:
      "A machine's camera: `GET /machines/{id}/snapshot` for a JPEG, `GET /machines/{id}/stream` for MJPEG.",
  },
);
export type CameraInfo = Static<typeof CameraInfo>;

/** A JPEG picture as a response body. */
export const JpegResponse = {
  description: 'a JPEG image',
  content: { 'image/jpeg': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) } },
};
