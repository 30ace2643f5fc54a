/**
 * Pure helpers of the comparison view (no DOM): signed changes, intervals, the noise sentence, the rows and
 * geometry of the diverging breakdown chart, the kernel change rows.
 */

import {niceMax} from './charts.js';
import {fixed, durationUnit, formatMs, formatMsIn, formatPct, formatUs} from './format.js';

const DASH = '\u2014';
const MINUS = '\u2212';

/** The HostComparison's `change` as a badge: {text, tone} (tone: good, bad, neutral). */
export const CHANGE_LABELS = {
  faster: {text: 'Faster', tone: 'good'},
  slower: {text: 'Slower', tone: 'bad'},
  within_noise: {text: 'Within noise', tone: 'neutral'},
  unknown: {text: 'Not comparable', tone: 'neutral'},
};

function finite(value) {
  return typeof value === 'number' && Number.isFinite(value);
}

/** `format(|value|)` with an explicit sign: "+1.2 ms", "−80.9%"; zero has no sign. */
export function signed(value, format) {
  if (!finite(value)) return DASH;
  const text = format(Math.abs(value));
  if (text === format(0)) return text;
  return `${value < 0 ? MINUS : '+'}${text}`;
}

export function formatSignedPct(pct, digits = 1) {
  return signed(pct, (v) => formatPct(v, digits));
}

export function formatSignedMs(ms) {
  return signed(ms, formatMs);
}

export function formatSignedUs(us) {
  return signed(us, formatUs);
}

/** Percentage points: 63.42 -> "+63.4 pts". */
export function formatPoints(points) {
  return signed(points, (v) => `${formatPct(v).slice(0, -1)} pts`);
}

/** "−81.8% to −80.1%" (the interval as % of the baseline), or null without one. */
export function intervalText(difference) {
  if (!difference || !finite(difference.ci_low_pct) || !finite(difference.ci_high_pct)) return null;
  return `${formatSignedPct(difference.ci_low_pct)} to ${formatSignedPct(difference.ci_high_pct)}`;
}

/** A Difference in one line: "−81% (95% CI −81.8% to −80.1%)", "noise unknown" without an interval. */
export function differenceText(difference) {
  if (!difference) return 'not available';
  const change = formatSignedPct(difference.delta_pct);
  const interval = intervalText(difference);
  return `${change} (${interval ? `95% CI ${interval}` : 'noise unknown'})`;
}

/** A Difference of a percentage in points: "+63.4 pts (95% CI +63.2 to +63.6 pts)". */
export function pointsDifferenceText(difference) {
  if (!difference) return 'not available';
  const interval = finite(difference.ci_low) && finite(difference.ci_high) ?
    `95% CI ${formatPoints(difference.ci_low).replace(/ pts$/, '')} to ${formatPoints(difference.ci_high)}` :
    'noise unknown';
  return `${formatPoints(difference.delta)} (${interval})`;
}

/**
 * The one quantity a comparison is judged on, the one its verdict leads with: the time per example when the two
 * sides do different work per step (`per_example`), else the step time. {basis, label, change, speedup, mean}:
 * basis 'per_example' or 'per_step', label the words the badge adds ("per example", "per step"), mean its
 * Difference (means).
 */
export function headline(comparison) {
  const perExample = comparison?.per_example;
  if (perExample) {
    return {basis: 'per_example', label: 'per example', change: perExample.change || 'unknown',
      speedup: perExample.speedup, mean: perExample.time_ms || null, quantity: 'mean time per example'};
  }
  return {basis: 'per_step', label: 'per step', change: comparison?.change || 'unknown',
    speedup: comparison?.speedup, mean: comparison?.step_time_ms?.mean || null, quantity: 'mean step time'};
}

/** The badge of the comparison: its headline change and which quantity it is, "5.26× faster per step". */
export function badgeText(comparison) {
  const line = headline(comparison);
  const ratio = ratioText(line);
  if (ratio) return `${ratio} ${line.label}`;
  const label = (CHANGE_LABELS[line.change] || CHANGE_LABELS.unknown).text;
  return line.change === 'unknown' ? label : `${label} (${line.label})`;
}

/** "5.26× faster", "1.25× slower", or null when not faster or slower. */
export function ratioText(comparison) {
  const speedup = comparison?.speedup;
  if (!finite(speedup) || speedup <= 0) return null;
  if (comparison.change === 'faster') return `${fixed(speedup, 2)}\u00d7 faster`;
  if (comparison.change === 'slower') return `${fixed(1 / speedup, 2)}\u00d7 slower`;
  return null;
}

/** A measured ratio (baseline / candidate) in words: "2.17× faster", "3.45× slower", "same speed". */
export function speedChangeText(ratio) {
  if (!finite(ratio) || ratio <= 0) return DASH;
  if (Math.round(ratio * 100) === 100) return 'same speed';
  return ratio > 1 ? `${fixed(ratio, 2)}\u00d7 faster` : `${fixed(1 / ratio, 2)}\u00d7 slower`;
}

/** The measured speedup of a prediction check with its interval: "2.17× faster (95% CI 1.98× to 2.40×)". */
export function measuredText(measured) {
  if (!measured) return DASH;
  const text = speedChangeText(measured.value);
  if (!finite(measured.low) || !finite(measured.high)) return `${text} (noise unknown)`;
  return `${text} (95% CI ${fixed(measured.low, 2)}\u00d7 to ${fixed(measured.high, 2)}\u00d7)`;
}

/** Whether the headline change (step time, or time per example) stands out of the noise, as a sentence. */
export function noiseStatement(comparison) {
  const line = headline(comparison);
  const mean = line.mean;
  const quantity = line.basis === 'per_example' ? 'time per example' : 'step time';
  const changeOf = line.basis === 'per_example' ? 'time-per-example change' : 'step-time change';
  if (line.change === 'unknown' || !mean) {
    if (line.basis === 'per_example') return 'Times per example cannot be compared.';
    const times = comparison?.step_time_ms ?? {};
    const stepped = times.baseline?.count > 0 && times.candidate?.count > 0;
    // Steps that all round to 0 ms have no ratio (comparison/verdict.py ZERO_STEPS).
    return stepped ? 'Step times cannot be compared: a side\'s steps last 0 ms as reported (shorter than the ' +
        'report\'s precision).' : 'Step times cannot be compared: a side has no step markers.';
  }
  const interval = intervalText(mean);
  const change = formatSignedPct(mean.delta_pct);
  if (!interval) {
    return `Noise unknown: a side has a single step, so only the point estimate (${change}) decides.`;
  }
  if (line.change === 'within_noise') {
    return mean.significant ?
      `Within noise: the mean ${quantity} moved ${change}, less than 1% of the baseline.` :
      `Within noise: the 95% confidence interval of the mean ${changeOf} (${interval}) includes zero.`;
  }
  return `Beyond noise: the 95% confidence interval of the mean ${changeOf} (${interval}) excludes zero.`;
}

/**
 * The rows of the diverging breakdown chart: categories whose share reads above 0% on either side (a row
 * "0% → 0%" says nothing), with the change of their mean time per step (ms) and its interval, or, when a side
 * has no steps, the change of their share (points).
 */
export function breakdownDeltas(breakdown, labels = {}) {
  const rows = Array.isArray(breakdown) ? breakdown : [];
  const perStep = rows.length > 0 && rows.every((row) => row.per_step_ms);
  const shown = (pct) => finite(pct) && formatPct(pct, 0) !== formatPct(0, 0);
  const used = rows.filter((row) => shown(row.baseline_pct) || shown(row.candidate_pct));
  return {
    unit: perStep ? 'ms' : 'points',
    rows: used.map((row) => ({
      key: row.category,
      label: labels[row.category] || row.label || row.category,
      delta: perStep ? row.per_step_ms.delta : row.delta_pct_points,
      low: perStep ? row.per_step_ms.ci_low : null,
      high: perStep ? row.per_step_ms.ci_high : null,
      baseline: perStep ? row.per_step_ms.baseline : row.baseline_pct,
      candidate: perStep ? row.per_step_ms.candidate : row.candidate_pct,
      baselinePct: row.baseline_pct,
      candidatePct: row.candidate_pct,
    })),
  };
}

/**
 * A signed formatter of ms for every number of one chart, in the unit of `extentMs` (its axis end): "−0.03 ms"
 * beside "+32.7 ms", never "−25 µs"; a change that rounds to zero in that unit reads "±0" with the unit.
 */
export function signedMsIn(extentMs) {
  const unit = durationUnit([extentMs]);
  const zero = formatMsIn(0, unit);
  return (ms) => {
    if (!finite(ms)) return DASH;
    const text = formatMsIn(Math.abs(ms), unit);
    if (text === zero || text === formatMsIn(-0, unit)) return ms === 0 ? zero : `\u00b1${zero}`;
    return `${ms < 0 ? MINUS : '+'}${text}`;
  };
}

/**
 * Geometry of a diverging bar chart over [x0, x0 + width]: zero in the middle, a symmetric round extent
 * covering every value and interval end. Each bar: {x, width} (x is its left edge), ci: [x1, x2] or null.
 */
export function divergingLayout(rows, x0, width) {
  const ends = rows.flatMap((row) => [row.delta, row.low, row.high]).filter(finite).map(Math.abs);
  const extent = niceMax(Math.max(0, ...ends));
  const zero = x0 + width / 2;
  const scale = width / 2 / extent;
  const at = (value) => zero + value * scale;
  const bars = rows.map((row) => {
    const delta = finite(row.delta) ? row.delta : 0;
    const end = at(delta);
    const ci = finite(row.low) && finite(row.high) ? [at(row.low), at(row.high)] : null;
    return {x: Math.min(zero, end), width: Math.abs(end - zero), end, ci};
  });
  const ticks = [-1, -0.5, 0, 0.5, 1].map((f) => ({value: Number((f * extent).toPrecision(12)), x: at(f * extent)}));
  return {extent, zero, ticks, bars};
}

const KINDS = ['new', 'fused', 'gone', 'faster', 'slower'];

/** The kernel changes of one kind (or all) as rows {kind, ...entry}, largest absolute change first. */
export function kernelChanges(kernels, kind = 'all') {
  const kinds = kind === 'all' ? KINDS : [kind];
  const rows = kinds.flatMap((k) => (Array.isArray(kernels?.[k]) ? kernels[k] : []).map((entry) => ({kind: k, ...entry})));
  return rows.sort((a, b) => Math.abs(b.delta_us) - Math.abs(a.delta_us) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** "baseline → candidate" of two values formatted alike. */
export function arrow(baseline, candidate, format) {
  return `${format(baseline)} \u2192 ${format(candidate)}`;
}
