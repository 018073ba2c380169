/**
 * The printer's `print.push_status` reports. X1 printers send the whole status every time; P1 and A1
 * printers send only what changed. Every report is merged into the last known status so both kinds work
 * (the anchor replaced the status with each report and lost everything a delta did not repeat).
 */

export type Report = Record<string, unknown>;

function isPlainObject(value: unknown): value is Report {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Arrays of `{id, …}` objects (AMS units, trays) arrive partially in deltas: merge them element by element. */
function isIdentifiedList(value: unknown): value is Report[] {
  return (
    Array.isArray(value) && value.length > 0 && value.every((item) => isPlainObject(item) && 'id' in item)
  );
}

function mergeIdentifiedLists(base: Report[], delta: Report[]): Report[] {
  const merged = base.map((item) => ({ ...item }));
  for (const change of delta) {
    const index = merged.findIndex((item) => String(item.id) === String(change.id));
    if (index === -1) merged.push(change);
    else merged[index] = mergeReport(merged[index] as Report, change);
  }
  return merged;
}

/** A new status: `base` with every field of `delta` applied (objects recursively, id-keyed lists by id). */
export function mergeReport(base: Report, delta: Report): Report {
  const merged: Report = { ...base };
  for (const [key, value] of Object.entries(delta)) {
    const previous = merged[key];
    if (isPlainObject(previous) && isPlainObject(value)) merged[key] = mergeReport(previous, value);
    else if (Array.isArray(previous) && isIdentifiedList(value)) {
      merged[key] = mergeIdentifiedLists(previous.filter(isPlainObject), value);
    } else merged[key] = value;
  }
  return merged;
}

/** A number from a field printers send either as a JSON number or as a numeric string. */
export function numberField(report: Report, key: string): number | null {
  const value = report[key];
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  return null;
}

export function stringField(report: Report, key: string): string | null {
  const value = report[key];
  return typeof value === 'string' ? value : null;
}

export function objectField(report: Report, key: string): Report | null {
  const value = report[key];
  return isPlainObject(value) ? value : null;
}

export function listField(report: Report, key: string): Report[] {
  const value = report[key];
  return Array.isArray(value) ? value.filter(isPlainObject) : [];
}
