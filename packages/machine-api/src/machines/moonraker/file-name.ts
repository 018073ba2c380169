/** Remote file names for uploaded jobs. */

const MAX_STEM = 80;

/**
 * `<job name>-<first 8 characters of the job id>.gcode`, with everything but letters, digits, `.`, `_` and
 * `-` replaced by `_`: no path separators, no leading dot, no quotes (Moonraker passes the name to Klipper's
 * `SDCARD_PRINT_FILE FILENAME="…"`), and unique per job.
 */
export function remoteFileName(jobName: string, jobId: string): string {
  const stem = jobName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/\.(gcode|gco|g)$/i, '')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/_{2,}/g, '_')
    .replace(/^[._-]+|[._-]+$/g, '')
    .slice(0, MAX_STEM);
  const suffix = jobId.replace(/[^A-Za-z0-9]/g, '').slice(0, 8);
  return `${stem || 'job'}${suffix ? `-${suffix}` : ''}.gcode`;
}
