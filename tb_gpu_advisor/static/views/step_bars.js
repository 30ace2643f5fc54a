/**
 * A stacked bar per step (SVG) with a labelled time axis: the geometry shared by the charts of time per step.
 */

import {s, tooltip} from '../dom.js';
import {msTickLabels, textWidth} from '../axis.js';
import {barSlots, stackSegments, ticks} from '../charts.js';
import {formatMs} from '../format.js';

const W = 560;
const H = 200;
const MARGIN = {right: 8, top: 10, bottom: 36};
const Y_TITLE_PX = 16;  // room left of the tick labels for the rotated axis title

/** The short label of a step name: its trailing number ("ProfilerStep#12" -> "12", "train 101" -> "101"). */
export function stepNumberLabel(name, index) {
  const text = typeof name === 'string' ? name : Number.isFinite(name) ? String(name) : '';
  let start = text.length;
  while (start > 0 && text.charCodeAt(start - 1) >= 48 && text.charCodeAt(start - 1) <= 57) start -= 1;
  if (start < text.length) return text.slice(start);
  return text || String(index);
}

/**
 * The chart: `bars` [{label, title, values: {key: ms}}], `keys` in stacking order, `className(key)` and
 * `label(key)` for segments; `yTitle` and `xTitle` name the axes, `ariaLabel` the chart.
 */
export function stepBarChart(bars, keys, {className, label, yTitle, xTitle = 'step', ariaLabel}) {
  const totals = bars.map((bar) => keys.reduce((sum, key) => sum + (bar.values[key] > 0 ? bar.values[key] : 0), 0));
  const axis = ticks(Math.max(...totals, 0));
  const labels = msTickLabels(axis);
  const left = Math.ceil(Math.max(...labels.map((text) => textWidth(text))) + 10 + Y_TITLE_PX);
  const plotW = W - left - MARGIN.right;
  const plotH = H - MARGIN.top - MARGIN.bottom;
  const scale = plotH / axis[axis.length - 1];
  const slots = barSlots(bars.length, plotW);
  const labelEvery = Math.ceil(bars.length / 15);
  const grid = axis.map((value, i) => {
    const y = MARGIN.top + plotH - value * scale;
    return s('g', {class: 'tick'},
      s('line', {x1: left, x2: W - MARGIN.right, y1: y, y2: y}),
      s('text', {class: 'y-label', x: left - 6, y: y + 4, 'text-anchor': 'end'}, labels[i]));
  });
  const drawn = bars.map((bar, i) => {
    const x = left + slots[i].x;
    const segments = stackSegments(bar.values, keys, scale).map((seg) =>
      s('rect', {class: className(seg.key), x, width: slots[i].width, y: MARGIN.top + plotH - seg.y1,
        height: Math.max(seg.y1 - seg.y0, 0.5)},
      tooltip(`${bar.title} · ${label(seg.key)}: ${formatMs(seg.value)}`)));
    const text = i % labelEvery === 0 ? s('text', {class: 'x-label', x: x + slots[i].width / 2,
      y: H - MARGIN.bottom + 16, 'text-anchor': 'middle'}, bar.label) : null;
    return s('g', {class: 'step-bar'}, segments, text);
  });
  const middle = MARGIN.top + plotH / 2;
  return s('svg', {class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': ariaLabel},
    grid, drawn,
    s('text', {class: 'axis-title x-title', x: left + plotW / 2, y: H - 5, 'text-anchor': 'middle'}, xTitle),
    s('text', {class: 'axis-title y-title', x: 12, y: middle, 'text-anchor': 'middle',
      transform: `rotate(-90 12 ${middle})`}, yTitle));
}
