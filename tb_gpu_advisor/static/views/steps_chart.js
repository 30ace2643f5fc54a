/**
 * Per-step time breakdown as a stacked bar chart (SVG): one bar per step, one segment per category.
 */

import {h, s, tooltip} from '../dom.js';
import {msTickLabels, textWidth} from '../axis.js';
import {barSlots, sampleEvenly, stackSegments, ticks} from '../charts.js';
import {BREAKDOWN_LABELS, formatMs} from '../format.js';
import {emptyState, legend, section} from './common.js';

const CATEGORIES = Object.keys(BREAKDOWN_LABELS);
const MAX_BARS = 60;
const W = 560;
const H = 220;
const MARGIN = {right: 8, top: 10, bottom: 36};
const Y_TITLE_PX = 16;  // room left of the tick labels for the rotated axis title

function stepLabel(step, index) {
  if (Number.isInteger(step.step_num)) return String(step.step_num);
  return step.name || String(index);
}

function chart(steps) {
  const totals = steps.map((step) => CATEGORIES.reduce((sum, key) => sum + (step.breakdown_ms?.[key] || 0), 0));
  const axis = ticks(Math.max(...totals));
  const labels = msTickLabels(axis);
  const M = {...MARGIN, left: Math.ceil(Math.max(...labels.map((label) => textWidth(label))) + 12 + Y_TITLE_PX)};
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const scale = plotH / axis[axis.length - 1];
  const slots = barSlots(steps.length, plotW);
  const labelEvery = Math.ceil(steps.length / 15);
  const grid = axis.map((value, i) => {
    const y = M.top + plotH - value * scale;
    return s('g', {class: 'tick'},
      s('line', {x1: M.left, x2: W - M.right, y1: y, y2: y}),
      s('text', {class: 'y-label', x: M.left - 6, y: y + 4, 'text-anchor': 'end'}, labels[i]));
  });
  const bars = steps.map((step, i) => {
    const x = M.left + slots[i].x;
    const label = stepLabel(step, i);
    const segments = stackSegments(step.breakdown_ms || {}, CATEGORIES, scale).map((seg) =>
      s('rect', {class: `cat-${seg.key}`, x, width: slots[i].width, y: M.top + plotH - seg.y1,
        height: Math.max(seg.y1 - seg.y0, 0.5)},
      tooltip(`Step ${label} · ${BREAKDOWN_LABELS[seg.key]}: ${formatMs(seg.value)} of ${formatMs(step.time_ms)}`)));
    const text = i % labelEvery === 0 ?
      s('text', {class: 'x-label', x: x + slots[i].width / 2, y: H - M.bottom + 16, 'text-anchor': 'middle'}, label) : null;
    return s('g', {class: 'step-bar'}, segments, text);
  });
  return s('svg', {class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'Step time breakdown'},
    grid, bars,
    s('text', {class: 'axis-title x-title', x: M.left + plotW / 2, y: H - 5, 'text-anchor': 'middle'}, 'step'),
    s('text', {class: 'axis-title y-title', x: 12, y: M.top + plotH / 2, 'text-anchor': 'middle',
      transform: `rotate(-90 12 ${M.top + plotH / 2})`}, 'time per step'));
}

/** The per-step breakdown card. */
export function stepsView(report) {
  const all = Array.isArray(report.steps) ? report.steps : [];
  const steps = sampleEvenly(all, MAX_BARS);
  const used = CATEGORIES.filter((key) => all.some((step) => step.breakdown_ms?.[key] > 0));
  const subtitle = all.length > steps.length ? `${steps.length} of ${all.length} steps, evenly sampled` :
    `${all.length} step${all.length === 1 ? '' : 's'}`;
  return section('Step time breakdown', {id: 'steps', subtitle},
    all.length ? [chart(steps), legend(used.map((key) => ({key, label: BREAKDOWN_LABELS[key]})))] :
      emptyState('No steps were found in this profile, so there is no per-step breakdown.'));
}
