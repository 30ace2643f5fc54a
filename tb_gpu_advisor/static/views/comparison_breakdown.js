/**
 * The comparison's per-category change as a diverging bar chart (SVG): less time left of zero (green), more
 * right (red), the legend naming those two colors, the only ones its bars use.
 */

import {h, s, tooltip} from '../dom.js';
import {textWidth} from '../axis.js';
import {arrow, breakdownDeltas, divergingLayout, formatPoints, formatSignedMs, signedMsIn} from '../comparison_format.js';
import {fixed, BREAKDOWN_LABELS, formatMs, formatPct} from '../format.js';
import {emptyState, section} from './common.js';

const MIN_W = 600;
const MIN_PLOT_W = 300;
const ROW = 26;
const LABEL_PX = 12;  // .row-label's font size
const LABEL_GAP_PX = 12;  // the gaps around each label
const M = {left: 120, right: 150, top: 22, bottom: 40};

function rowTooltip(row, unit) {
  const change = unit === 'ms' ? formatSignedMs(row.delta) : formatPoints(row.delta);
  const values = unit === 'ms' ? arrow(row.baseline, row.candidate, formatMs) : arrow(row.baseline, row.candidate, formatPct);
  const interval = Number.isFinite(row.low) ? `, 95% CI ${formatSignedMs(row.low)} to ${formatSignedMs(row.high)}` : '';
  return `${row.label}: ${values} per step (${change}${interval}); share of the time ${arrow(row.baselinePct, row.candidatePct, formatPct)}`;
}

function chart(rows, unit) {
  const left = Math.max(M.left, Math.ceil(Math.max(...rows.map((row) => textWidth(row.label, LABEL_PX))) + LABEL_GAP_PX));
  const W = Math.max(MIN_W, left + MIN_PLOT_W + M.right);
  const plotW = W - left - M.right;
  const height = M.top + rows.length * ROW + M.bottom;
  const axisY = M.top + rows.length * ROW;
  const layout = divergingLayout(rows, left, plotW);
  // One unit for every number of the chart, the axis end's: "−0.03 ms" beside "+32.7 ms", never "−25 µs".
  const format = unit === 'ms' ? signedMsIn(layout.extent) : formatPoints;
  const grid = layout.ticks.map((tick) => s('g', {class: 'tick'},
    s('line', {x1: tick.x, x2: tick.x, y1: M.top, y2: axisY}),
    s('text', {x: tick.x, y: axisY + 14, 'text-anchor': 'middle'}, tick.value === 0 ? '0' : format(tick.value))));
  const bars = rows.map((row, i) => {
    const bar = layout.bars[i];
    const y = M.top + i * ROW;
    const mid = y + ROW / 2;
    const grew = row.delta > 0;
    return s('g', {class: ['delta-row', grew ? 'grew' : 'fell'], 'data-category': row.key},
      s('text', {class: 'row-label', x: left - 8, y: mid + 4, 'text-anchor': 'end'}, row.label),
      s('rect', {class: 'delta-bar', x: bar.x, y: y + 5, width: Math.max(bar.width, 0.5), height: ROW - 10},
        tooltip(rowTooltip(row, unit))),
      bar.ci ? s('g', {class: 'ci'},
        s('line', {x1: bar.ci[0], x2: bar.ci[1], y1: mid, y2: mid}),
        s('line', {x1: bar.ci[0], x2: bar.ci[0], y1: mid - 4, y2: mid + 4}),
        s('line', {x1: bar.ci[1], x2: bar.ci[1], y1: mid - 4, y2: mid + 4})) : null,
      s('text', {class: 'row-value', x: W - M.right + 8, y: mid + 4}, format(row.delta)),
      s('text', {class: 'row-share', x: W - 4, y: mid + 4, 'text-anchor': 'end'},
        arrow(row.baselinePct, row.candidatePct, (v) => formatPct(v, 0))));
  });
  return s('svg', {class: 'chart diverging', viewBox: `0 0 ${W} ${height}`, role: 'img',
    'aria-label': `Change of the time per step by category, candidate minus baseline: ${rows.map((row) =>
      `${row.label} ${format(row.delta)}`).join(', ')}`},
  grid,
  s('line', {class: 'zero', x1: layout.zero, x2: layout.zero, y1: M.top - 4, y2: axisY}),
  bars,
  s('text', {class: 'axis-title', x: left, y: height - 4}, '\u2190 less time'),
  s('text', {class: 'axis-title', x: left + plotW, y: height - 4, 'text-anchor': 'end'}, 'more time \u2192'),
  // The share column's header above it, apart from the axis and its titles below.
  s('text', {class: ['axis-title', 'share-title'], x: W - 4, y: M.top - 8, 'text-anchor': 'end'}, 'share of time'));
}

/** The legend of the chart's two bar colors (comparison.css: .fell, .grew). */
function directionLegend() {
  return h('ul', {class: 'legend', 'data-testid': 'compare-breakdown-legend'},
    [['fell', 'less time in the candidate'], ['grew', 'more time in the candidate']].map(([kind, label]) =>
      h('li', {'data-kind': kind}, h('span', {class: ['swatch', `delta-${kind}`]}), label)));
}

/** The breakdown-change card of a HostComparison. */
export function breakdownDeltaView(comparison) {
  const {unit, rows} = breakdownDeltas(comparison.breakdown, BREAKDOWN_LABELS);
  const ratio = comparison.per_example?.work_ratio;
  // Per step, whatever the verdict's quantity: with different work per step the subtitle says so.
  const work = Number.isFinite(ratio) ? `; per step, not per example (the candidate does ${fixed(ratio, 2)}× ` +
    'the work per step)' : '';
  const subtitle = unit === 'ms' ? `candidate − baseline, mean time per step, with 95% CI${work}` :
    'candidate − baseline, share of the time (no steps on a side)';
  return section('Where the time went', {id: 'compare-breakdown', subtitle},
    rows.length ? [chart(rows, unit), directionLegend()] : emptyState('Neither profile has a time breakdown.'));
}
