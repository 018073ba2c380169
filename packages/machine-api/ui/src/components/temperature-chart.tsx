/**
 * The last hour of nozzle and bed temperatures as a uPlot line chart (loaded with the machine page only,
 * so the overview does not carry the chart library). Colours come from the theme's CSS variables.
 */

import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { TemperatureSample } from '../live/history';

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || 'currentColor';
}

/**
 * Readings arrive only when they change, so each holds until the next: the lines are drawn as steps, and
 * the last reading is carried to the present.
 */
function seriesData(recorded: readonly TemperatureSample[]): uPlot.AlignedData {
  const last = recorded[recorded.length - 1];
  const samples = last && last.at < Date.now() ? [...recorded, { ...last, at: Date.now() }] : recorded;
  return [
    samples.map((s) => s.at / 1000),
    samples.map((s) => s.nozzle),
    samples.map((s) => s.nozzleTarget),
    samples.map((s) => s.bed),
    samples.map((s) => s.bedTarget),
  ];
}

export function TemperatureChart({
  samples,
  label,
}: {
  samples: readonly TemperatureSample[];
  label: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const target = box.current;
    if (!target) return;
    const nozzle = cssVar('--chart-nozzle');
    const bed = cssVar('--chart-bed');
    const text = cssVar('--fg');
    const grid = cssVar('--line');
    const axis = { stroke: text, grid: { stroke: grid }, ticks: { stroke: grid } };
    const steps = uPlot.paths.stepped?.({ align: 1 });
    const chart = new uPlot(
      {
        width: target.clientWidth || 600,
        height: 260,
        scales: { y: { range: (_u, min, max) => [Math.min(0, min ?? 0), Math.max(50, (max ?? 0) + 10)] } },
        axes: [axis, { ...axis, label: '°C' }],
        series: [
          {},
          { label: 'Nozzle', stroke: nozzle, width: 2, paths: steps },
          { label: 'Nozzle target', stroke: nozzle, dash: [6, 4], width: 1, paths: steps },
          { label: 'Bed', stroke: bed, width: 2, paths: steps },
          { label: 'Bed target', stroke: bed, dash: [6, 4], width: 1, paths: steps },
        ],
      },
      seriesData(samples),
      target,
    );
    plot.current = chart;
    const resize = new ResizeObserver(() => chart.setSize({ width: target.clientWidth, height: 260 }));
    resize.observe(target);
    return () => {
      resize.disconnect();
      chart.destroy();
      plot.current = null;
    };
  }, []);

  useEffect(() => {
    plot.current?.setData(seriesData(samples));
  }, [samples]);

  return <div ref={box} class="chart" role="img" aria-label={label} data-samples={samples.length} />;
}
