/**
 * The verdict card: bottleneck, verdict sentence, headline numbers, the whole-window breakdown, notes.
 */

import {h, s, tooltip} from '../dom.js';
import {VOCABULARY} from '../vocabulary.js';
import {BOTTLENECK_LABELS, BREAKDOWN_LABELS, bindUnits, formatCount, formatMs, formatPct, formatSpeedup} from '../format.js';
import {legend, section, tile} from './common.js';

const COMPUTE = new Set(['compute_16bit', 'compute_32bit', 'compute_unknown']);

function largestLoss(breakdown) {
  let best = null;
  for (const [key, pct] of Object.entries(breakdown || {})) {
    if (COMPUTE.has(key) || !(pct > 0)) continue;
    if (!best || pct > best.pct) best = {key, pct};
  }
  return best;
}

/**
 * The bottleneck badge {text, className, title}: "No bottleneck" is green only when no finding estimates a gain;
 * beside a combined estimate ("up to 1.68× faster") it is neutral and says why both hold, so the badge never
 * reads "all is well" next to a speedup.
 */
export function bottleneckBadge(summary) {
  const bottleneck = typeof summary?.bottleneck === 'string' ? summary.bottleneck : null;
  if (!bottleneck) return null;
  const known = bottleneck in BOTTLENECK_LABELS;
  const text = BOTTLENECK_LABELS[bottleneck] || bottleneck;
  const gain = formatSpeedup(summary.combined_estimate?.estimated_speedup, summary.combined_estimate?.speedup_kind);
  if (bottleneck === 'none' && gain) {
    return {text, className: 'bottleneck-none-gains',
      title: 'No single cause is measured to cost a large share of the step, yet the findings estimate a gain ' +
        `when their fixes work together (${gain}): worth trying, not a bottleneck.`};
  }
  return {text, className: `bottleneck-${known ? bottleneck : 'other'}`, title: null};
}

/** A clause as a sentence: its first word capitalized, unless that word is code ("tf.data map runs ..."). */
export function sentenceStart(text) {
  const first = text.split(' ', 1)[0];
  return /^[a-z]+[,:;]?$/.test(first) ? text.charAt(0).toUpperCase() + text.slice(1) : text;
}

function headline(summary) {
  const badge = bottleneckBadge(summary);
  const label = badge ? badge.text : null;
  const said = [summary.verdict, summary.bottleneck_reason].find((text) => typeof text === 'string' && text) || null;
  // The badge names the bottleneck: the sentence does not say it again ("Input-bound: Input-bound: ...").
  const verdict = said && label && said.toLowerCase().startsWith(`${label.toLowerCase()}: `) ?
    sentenceStart(said.slice(label.length + 2)) : said;
  const parts = [];
  if (badge) {
    parts.push(h('span', {class: ['badge', 'bottleneck', badge.className], 'data-testid': 'bottleneck',
      title: badge.title}, badge.text));
  }
  const caution = verdictCaution(summary);
  if (caution) {
    parts.push(h('span', {class: ['badge', 'verdict-caution', `confidence-${summary.confidence.level}`],
      'data-testid': 'verdict-caution', title: caution.title}, caution.text));
  }
  if (verdict) {
    parts.push(h('span', {class: 'verdict-text'}, bindUnits(verdict)));
  } else {
    const loss = largestLoss(summary.breakdown_pct);
    const compute = [...COMPUTE].reduce((total, key) => total + (summary.breakdown_pct?.[key] || 0), 0);
    parts.push(h('span', {class: 'verdict-text'}, loss ?
      `GPUs computed ${formatPct(compute)} of the time; the largest loss is ${BREAKDOWN_LABELS[loss.key] || loss.key} (${formatPct(loss.pct)}).` :
      'No time breakdown is available for this profile.'));
  }
  return h('div', {class: 'verdict', 'data-testid': 'verdict', 'data-confidence': summary.confidence?.level || null},
    parts);
}

/**
 * What the verdict itself says about a weak result: {text, title} for a low or medium confidence ("tentative:
 * low confidence", "likely: medium confidence", the reasons on hover), so it never looks as sure as a strong
 * one; null for a high one (the confidence line below says so).
 */
export function verdictCaution(summary) {
  const level = summary?.confidence?.level;
  if (level !== 'low' && level !== 'medium') return null;
  const reasons = (summary.confidence.reasons || []).filter((r) => typeof r === 'string');
  return {text: `${level === 'low' ? 'tentative' : 'likely'}: ${level} confidence`,
    title: [`confidence: ${level}`, ...reasons].join('\n')};
}

const CONFIDENCE_LEVELS = new Set(['high', 'medium', 'low']);

/** How far the trace supports the verdict (summary.confidence), with each reason; null for older reports. */
export function confidenceView(summary) {
  const confidence = summary?.confidence;
  if (!confidence || typeof confidence.level !== 'string') return null;
  const level = CONFIDENCE_LEVELS.has(confidence.level) ? confidence.level : 'other';
  const reasons = Array.isArray(confidence.reasons) ? confidence.reasons.filter((r) => typeof r === 'string') : [];
  const framework = typeof summary.framework === 'string' ? summary.framework : null;
  return h('div', {class: ['confidence', `confidence-${level}`], 'data-testid': 'confidence'},
    h('span', {class: ['badge', 'confidence-level', `confidence-${level}`]}, `confidence: ${confidence.level}`),
    framework ? h('span', {class: 'framework', 'data-testid': 'framework'}, `framework: ${framework}`) : null,
    reasons.length ? h('ul', {class: 'confidence-reasons'}, reasons.map((reason) => h('li', {}, reason))) : null);
}

/** The categories the bar and its legend show: those whose share reads above 0% (a legend never lists "0%"). */
export function shownCategories(breakdown) {
  return Object.keys(BREAKDOWN_LABELS).filter((key) => breakdown?.[key] > 0 && formatPct(breakdown[key]) !== '0%');
}

function breakdownBar(breakdown, gpus, computing = []) {
  const keys = shownCategories(breakdown);
  if (!keys.length) return null;
  const defined = VOCABULARY.breakdownDefinition;
  let x = 0;
  const rects = keys.map((key) => {
    const width = breakdown[key];
    const rect = s('rect', {class: `cat-${key}`, x, y: 0, width, height: 10},
      tooltip(`${BREAKDOWN_LABELS[key]}: ${formatPct(width)}`));
    x += width;
    return rect;
  });
  return h('div', {class: 'breakdown-overall', title: defined},
    s('svg', {class: 'breakdown-bar', viewBox: `0 0 ${Math.max(x, 100)} 10`, preserveAspectRatio: 'none',
      role: 'img', 'aria-label': 'Share of the analysis window by category'}, rects),
    legend(keys.map((key) => ({key, label: `${BREAKDOWN_LABELS[key]} ${formatPct(breakdown[key])}`}))),
    // Over several GPUs the bar's compute share and the busy tiles are two figures: the bar says which it is.
    gpus > 1 ? h('p', {class: 'hint', 'data-testid': 'breakdown-definition', title: defined},
      computing.length === 1
        ? `Time by category: compute is ${computing[0]}'s; the other GPUs ran no kernel in the profiled steps (the ` +
          'busy figures above are means over the GPUs).'
        : 'Time by category, any GPU: an instant counts as compute when any GPU computes (the busy figures above ' +
          'are means over the GPUs).') : null);
}

/** [value, hint] of the step-time tile: the mean as the value (never cut at 1280 px), spread and count below. */
export function stepTime(stats) {
  if (!stats || !stats.count) return ['—', 'no step markers'];
  const spread = Number.isFinite(stats.stdev) && stats.count > 1 ? `± ${formatMs(stats.stdev)} over ` : '';
  return [formatMs(stats.mean), `${spread}${formatCount(stats.count)} step${stats.count === 1 ? '' : 's'}`];
}

// Copies or memsets that add less than this many points to the busy share are not shown apart (report/busy.py).
const COPY_SPLIT_MIN_POINTS = 1.0;

/**
 * The headline GPU busy figures [{label, value, hint}] (the same as report/busy.py): "GPU compute busy" leads
 * when copies add to the busy share or several GPUs run collectives, with busy including them beside it.
 */
export function busyFigures(summary) {
  const busy = summary.gpu_busy_pct;
  const compute = summary.gpu_compute_busy_pct;
  const kernel = summary.gpu_kernel_busy_pct;
  const copies = Number.isFinite(kernel) && Number.isFinite(compute) && compute - kernel >= COPY_SPLIT_MIN_POINTS;
  const multi = summary.active_gpu_count > 1 && Number.isFinite(compute) && Number.isFinite(busy) && busy > compute;
  const defined = VOCABULARY.busyDefinitions;
  if (!copies && !multi) {
    return [{label: 'GPU busy', value: busy, hint: 'mean over active GPUs', title: defined.gpu_busy}];
  }
  const figures = [{label: 'GPU compute busy', value: copies ? kernel : compute,
    hint: copies ? 'mean over active GPUs, copies and collectives excluded' :
      'mean over active GPUs, collectives excluded', title: defined.gpu_compute_busy}];
  const collectives = multi || (copies && Number.isFinite(busy) && busy - compute >= COPY_SPLIT_MIN_POINTS);
  // One tile is "GPU busy", the figure the verdict quotes (everything counted); the others say what they leave out.
  if (copies && collectives) {
    figures.push({label: 'GPU busy without collectives', value: compute, hint: 'kernels and copies',
      title: defined.gpu_busy_no_collectives});
  } else if (copies) {
    figures.push({label: 'GPU busy', value: compute, hint: 'with copies', title: defined.gpu_busy});
  }
  if (collectives) {
    figures.push({label: 'GPU busy', value: busy, hint: copies ? 'with copies and collectives' : 'with collectives',
      title: defined.gpu_busy});
  }
  return figures;
}

function busyTiles(summary) {
  return busyFigures(summary).map(({label, value, hint, title}) => tile(label, formatPct(value), hint, title));
}

/** What the analyzed window is: "window (host steps, timed on the device)"; "whole profile, no steps". */
export function analyzedHint(summary) {
  const source = typeof summary?.step_source === 'string' && summary.step_source !== 'none' ? summary.step_source : null;
  if (!source) return 'whole profile, no steps';
  const device = summary.step_timing === 'device' && source !== 'device' ? ', timed on the device' : '';
  return `window (${source} steps${device})`;
}

/** The verdict card of a HostReport. */
export function summaryView(report) {
  const summary = report.summary || {};
  const [stepValue, stepHint] = stepTime(summary.step_time_ms);
  const notes = (report.notes || []).map((note) => h('li', {}, note));
  return section('Verdict', {id: 'summary', subtitle: `${report.host} · ${report.trace_format || ''} format`},
    headline(summary),
    confidenceView(summary),
    h('div', {class: 'tiles'},
      ...busyTiles(summary),
      tile(BREAKDOWN_LABELS.input_wait, formatPct(summary.input_wait_pct), 'host waits for data, GPUs idle'),
      summary.batch_prep_pct > 0 ?
        tile('Host batch prep', formatPct(summary.batch_prep_pct), 'step thread prepares the batch, GPU idle') : null,
      tile('Step time', stepValue, stepHint),
      tile('GPUs', `${formatCount(summary.active_gpu_count)} / ${formatCount(summary.gpu_count)}`, 'active / in profile'),
      tile('Analyzed', formatMs(summary.analysis_window_ms), analyzedHint(summary))),
    breakdownBar(summary.breakdown_pct, summary.active_gpu_count, summary.breakdown_gpus || []),
    notes.length ? h('ul', {class: 'notes', 'data-testid': 'notes'}, notes) : null);
}
