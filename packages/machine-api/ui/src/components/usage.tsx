/** Filament use, print hours and success over finished jobs, from `GET /stats` (one machine, or the farm). */

import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api/client';

type Totals = Schemas['StatsTotals'];

export function Usage(props: {
  machineId?: string;
  from?: string | null;
  to?: string | null;
  label: string;
}) {
  const { machineId, from, to } = props;
  const [totals, setTotals] = useState<Totals | null>(null);
  const [currency, setCurrency] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    const query = {
      ...(machineId ? { group_by: 'machine' as const } : {}),
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
    };
    must(api.GET('/stats', { params: { query } })).then(
      (stats) => {
        if (!current) return;
        const picked = machineId
          ? stats.groups.find((group) => group.key === machineId)?.totals
          : stats.total;
        setTotals(picked ?? null);
        setCurrency(stats.currency);
        setError(null);
      },
      (e) => current && setError(errorText(e)),
    );
    return () => {
      current = false;
    };
  }, [machineId, from, to]);
  if (error) return <p class="error">{error}</p>;
  if (!totals) return <p>No finished prints.</p>;
  const rate = totals.success_rate === null ? '—' : `${Math.round(totals.success_rate * 100)} %`;
  return (
    <dl class="facts wide" data-usage={props.label}>
      <dt>Prints</dt>
      <dd>
        {totals.prints} ({rate} completed)
      </dd>
      <dt>Print hours</dt>
      <dd>{totals.print_hours.toFixed(1)} h</dd>
      <dt>Filament</dt>
      <dd>
        {totals.grams.toFixed(1)} g · {totals.metres.toFixed(2)} m
      </dd>
      <dt>Cost</dt>
      <dd>{`${totals.cost.toFixed(2)}${currency ? ` ${currency}` : ''}`}</dd>
    </dl>
  );
}
