/**
 * The JSON text of a heatmap (`HeatmapSchema` of structs/user.ts: `[{"timestamp":…,"contributions":…}]`,
 * integers only), written directly: a year of 15-minute buckets is up to 35 000 entries, and building
 * the text in one loop costs a fraction of handing as many objects to a serializer.
 */
export function heatmapJson(buckets: ReadonlyArray<{ timestamp: number; contributions: number }>): string {
  let text = '[';
  for (let i = 0; i < buckets.length; i++) {
    const bucket = buckets[i] as { timestamp: number; contributions: number };
    text += `${i === 0 ? '' : ','}{"timestamp":${bucket.timestamp},"contributions":${bucket.contributions}}`;
  }
  return `${text}]`;
}
