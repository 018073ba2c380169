/** How a queued job's constraints read to a person. */

import type { Job } from '../api/client';

/** "PETG, 0.4 mm nozzle, alpha or bravo" */
export function constraintsText(constraints: Job['constraints']): string {
  if (!constraints) return 'any machine';
  const parts: string[] = [];
  if (constraints.material) parts.push(constraints.material.toUpperCase().replace('_', ' '));
  if (constraints.nozzle_diameter) parts.push(`${constraints.nozzle_diameter} mm nozzle`);
  if (constraints.machine_type) parts.push(constraints.machine_type);
  if (constraints.machine_ids) parts.push(`one of ${constraints.machine_ids.join(', ')}`);
  return parts.join(', ') || 'any machine';
}
