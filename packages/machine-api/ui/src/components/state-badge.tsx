import type { Machine } from '../api/client';
import { STATE_LABELS, stateName } from '../format';

/** The machine's state as a coloured label; the colour is never the only cue (the word is always there). */
export function StateBadge({ machine }: { machine: Machine }) {
  const state = stateName(machine);
  return <span class={`badge state-${state}`}>{STATE_LABELS[state]}</span>;
}
