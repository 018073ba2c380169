/** Sending a print file to the printer's SD card over implicit FTPS (port 990, passive mode), as Bambu Studio does. */

import type { FTPError } from 'basic-ftp';
import { LazyModule } from '../../lazy-module.js';
import { MachineError } from '../machine.js';

/** The FTP client library, loaded with the first upload to a Bambu printer. */
const ftpLibrary = new LazyModule(() => import('basic-ftp'));

export interface UploadRequest {
  host: string;
  port: number;
  accessCode: string;
  localPath: string;
  remoteName: string;
  timeoutMs: number;
  signal: AbortSignal;
}

/** Uploads `localPath` to the FTP root as `remoteName`; rejects with `MachineError` saying what went wrong. */
export async function uploadPrintFile(request: UploadRequest): Promise<void> {
  request.signal.throwIfAborted();
  const { Client, FTPError } = await ftpLibrary.get();
  request.signal.throwIfAborted();
  const client = new Client(request.timeoutMs);
  const abort = () => client.close();
  request.signal.addEventListener('abort', abort, { once: true });
  try {
    await client.access({
      host: request.host,
      port: request.port,
      user: 'bblp',
      password: request.accessCode,
      secure: 'implicit',
      // Same reason as MQTT: the printer's certificate cannot be verified by name, but TLS is always on.
      secureOptions: { rejectUnauthorized: false },
    });
    await client.uploadFrom(request.localPath, request.remoteName);
  } catch (error) {
    request.signal.throwIfAborted();
    throw new MachineError(
      'MachineRejected',
      `uploading the print file to the printer failed: ${describe(error, FTPError)}`,
    );
  } finally {
    request.signal.removeEventListener('abort', abort);
    client.close();
  }
}

function describe(error: unknown, ftpError: typeof FTPError): string {
  if (error instanceof ftpError && error.code === 530) {
    return 'the printer refused the FTPS login (check access_code)';
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * A file name safe on the printer's FAT-formatted SD card and in its `ftp://` URL: letters, digits, `-`,
 * `_` and `.` only, at most 80 characters, never empty and never hidden.
 */
export function remoteFileName(jobName: string, jobId: string): string {
  const base = jobName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // accents split off by NFKD: "Café" → "Cafe"
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+|[._]+$/g, '')
    .replace(/\.gcode\.3mf$|\.3mf$|\.gcode$/i, '')
    .slice(0, 80);
  return `${base || jobId}.gcode.3mf`;
}
