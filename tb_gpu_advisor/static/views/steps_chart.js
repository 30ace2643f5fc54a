/**
 * Per-step time breakdown as a stacked bar chart (SVG, step_bars.js): one bar per step, one segment per category.
 */

import {sampleEvenly} from '../charts.js';
import {BREAKDOWN_LABELS, formatMs} from '../format.js';
import {emptyState, legend, section} from './common.js';
import {stepBarChart} from './step_bars.js';
import {shownCategories} from './summary.js';

const CATEGORIES = Object.keys(BREAKDOWN_LABELS);
const MAX_BARS = 60;

function stepLabel(step, index) {
  if (Number.isInteger(step.step_num)) return String(step.step_num);
  return step.name || String(index);
}

/** The bars of the chart: [{label, title, values}], the step's total time in its title. */
export function breakdownBars(steps) {
  return steps.map((step, i) => {
    const label = stepLabel(step, i);
    return {label, title: `Step ${label}, ${formatMs(step.time_ms)}`, values: step.breakdown_ms || {}};
  });
}

/** Each category's share (%) of the steps' summed time: the legend lists those that read above 0%, as the
 * verdict's bar does, not every category with a sliver somewhere. */
export function stepShares(steps) {
  const sums = Object.fromEntries(CATEGORIES.map((key) => [key, 0]));
  for (const step of steps) {
    for (const key of CATEGORIES) sums[key] += step?.breakdown_ms?.[key] > 0 ? step.breakdown_ms[key] : 0;
  }
  const total = Object.values(sums).reduce((a, b) => a + b, 0);
  return Object.fromEntries(CATEGORIES.map((key) => [key, total > 0 ? (100 * sums[key]) / total : 0]));
}

/** The per-step breakdown card. */
export function stepsView(report) {
  const all = Array.isArray(report.steps) ? report.steps : [];
  const steps = sampleEvenly(all, MAX_BARS);
  const used = shownCategories(stepShares(all));
  const subtitle = all.length > steps.length ? `${steps.length} of ${all.length} steps, evenly sampled` :
    `${all.length} step${all.length === 1 ? '' : 's'}`;
  const chart = () => stepBarChart(breakdownBars(steps), CATEGORIES, {className: (key) => `cat-${key}`,
    label: (key) => BREAKDOWN_LABELS[key], yTitle: 'time per step', xTitle: 'step', ariaLabel: 'Step time breakdown'});
  return section('Step time breakdown', {id: 'steps', subtitle},
    all.length ? [chart(), legend(used.map((key) => ({key, label: BREAKDOWN_LABELS[key]})))] :
      emptyState('No steps were found in this profile, so there is no per-step breakdown.'));
}
