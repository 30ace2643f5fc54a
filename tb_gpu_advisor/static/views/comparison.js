/**
 * The comparison of two runs (a /compare answer): verdict and step times, breakdown change, GPU busy change,
 * findings resolved and new, kernels matched by name.
 */

import {h} from '../dom.js';
import {CHANGE_LABELS, arrow, badgeText, differenceText, formatPoints, headline, measuredText, noiseStatement,
  speedChangeText, pointsDifferenceText} from '../comparison_format.js';
import {fixed, formatCount, formatMs, formatPct, formatSpeedup} from '../format.js';
import {emptyState, meter, section, tile} from './common.js';
import {VOCABULARY} from '../vocabulary.js';
import {configurationChangesView} from './configuration.js';
import {breakdownDeltaView} from './comparison_breakdown.js';
import {kernelChangesView} from './comparison_kernels.js';

function stepTile(label, difference, perExample) {
  if (!difference) return tile(label, '\u2014', 'a side has no steps');
  // With different work per step, the change of the step time is not the comparison's quantity: show the times,
  // not a second (contradicting) change.
  return tile(label, arrow(difference.baseline, difference.candidate, formatMs),
    perExample ? 'not comparable: different work per step' : differenceText(difference));
}

function summaryCard(answer, comparison) {
  const line = headline(comparison);
  const change = CHANGE_LABELS[line.change] || CHANGE_LABELS.unknown;
  const perExample = line.basis === 'per_example';
  const stepTimes = comparison.step_time_ms || {};
  const busy = comparison.gpu_busy_pct || {};
  const counts = [stepTimes.baseline?.count, stepTimes.candidate?.count];
  const notes = [...(comparison.notes || [])];
  return section('Comparison', {id: 'compare-summary',
    subtitle: `baseline ${answer.baseline_run} · ${answer.baseline_host}  →  candidate ${answer.run} · ${answer.host}`},
  h('div', {class: 'verdict', 'data-testid': 'compare-verdict'},
    h('span', {class: ['badge', 'change', `tone-${change.tone}`], 'data-basis': line.basis,
      title: `The change of the ${line.quantity}, the quantity the verdict is judged on`}, badgeText(comparison)),
    h('span', {class: 'verdict-text'}, answer.verdict || comparison.verdict || '')),
  h('div', {class: 'tiles'},
    stepTile('Mean step time', stepTimes.mean, perExample),
    stepTile('Median step time', stepTimes.median, perExample),
    tile('GPU busy', arrow(busy.baseline, busy.candidate, formatPct),
      Number.isFinite(busy.delta_points) ? `${formatPoints(busy.delta_points)}` : 'no GPU activity on a side',
      VOCABULARY.busyDefinitions.gpu_busy),
    tile('Steps', `${formatCount(counts[0])} \u2192 ${formatCount(counts[1])}`, 'samples on each side'),
    perExample ? perExampleTile(comparison) :
      tile('Change per step', speedChangeText(comparison.speedup), 'baseline mean / candidate mean')),
  h('p', {class: ['noise', `tone-${change.tone}`], 'data-testid': 'noise-statement'}, noiseStatement(comparison)),
  notes.length ? h('ul', {class: 'notes'}, notes.map((note) => h('li', {}, note))) : null);
}

/** What measured the work per step: the examples from the input tensors, or the kernel launches. */
export function perExampleBasis(perExample) {
  const examples = perExample.examples_per_step;
  if (examples) {
    const scope = examples.scope === 'global' ? '' : ` ${VOCABULARY.batchScope[examples.scope] || examples.scope}`;
    return `examples per step${scope} ${examples.baseline} ${VOCABULARY.arrow} ${examples.candidate}, from the input tensors`;
  }
  const launches = perExample.source === 'kernel_launches_per_step' ? ' (by its kernel launches per step)' : '';
  return `the candidate does ${fixed(perExample.work_ratio, 2)}${VOCABULARY.times} the work per step${launches}`;
}

/**
 * Where the per-example change comes from, in the tile's hint: the per-step change, divided by the work ratio
 * and what measured it ("per step 3.05× faster ÷ 1.21× the work ..."), the measure's definition on hover.
 */
export function perExampleHint(comparison) {
  const perExample = comparison.per_example;
  const perStep = speedChangeText(comparison.speedup);
  return `per step ${perStep}; ${perExampleBasis(perExample)}`;
}

function perExampleTile(comparison) {
  const perExample = comparison.per_example;
  const source = VOCABULARY.workSource[perExample.source];
  const shown = tile('Change per example', speedChangeText(perExample.speedup), perExampleHint(comparison),
    source ? `Work per step measured by ${source}. Time per example = step time / work per step.` : null);
  shown.setAttribute('data-testid', 'per-example-tile');
  return shown;
}

function deviceLabel(name) {
  return String(name || '').replace('/device:', '');
}

const STEP_BUSY = VOCABULARY.busyDefinitions.step_busy;

/**
 * The per-step busy change under the card's title: its own name and levels, so its change never reads as a second
 * figure for the title's (review issue 31 C1: "+1 pts" in the title, "0 pts" below it).
 */
export function stepBusyText(perStep) {
  const levels = Number.isFinite(perStep.baseline) && Number.isFinite(perStep.candidate) ?
    `${formatPct(perStep.baseline)} → ${formatPct(perStep.candidate)}, ` : '';
  return `${STEP_BUSY.split(':')[0]}, mean over the steps: ${levels}${pointsDifferenceText(perStep)}; another ` +
    'measure than the title\u2019s (busy over the window, mean over active GPUs).';
}

function busyCard(comparison) {
  const busy = comparison.gpu_busy_pct || {};
  const devices = comparison.devices || [];
  if (!Number.isFinite(busy.baseline) && !Number.isFinite(busy.candidate)) {
    return section('GPU busy', {id: 'compare-gpus'}, emptyState('No GPU activity in either profile.'));
  }
  const bar = (label, pct) => h('div', {class: 'gpu-row'},
    h('div', {class: 'gpu-label'}, label),
    meter(Number.isFinite(pct) ? pct : 0, 'busy', `${label} busy ${formatPct(pct)}`),
    h('div', {class: 'gpu-value'}, formatPct(pct)));
  const rows = devices.length > 1 ? devices.map((device) => h('tr', {},
    h('td', {title: device.name}, deviceLabel(device.name)),
    h('td', {class: 'num'}, formatPct(device.baseline_busy_pct)),
    h('td', {class: 'num'}, formatPct(device.candidate_busy_pct)),
    h('td', {class: 'num'}, formatPoints(device.delta_points)))) : [];
  return section('GPU busy', {id: 'compare-gpus',
    subtitle: Number.isFinite(busy.delta_points) ? `${formatPoints(busy.delta_points)}, mean over active GPUs` : null},
  h('div', {class: 'gpu-rows', title: VOCABULARY.busyDefinitions.gpu_busy},
    bar('Baseline', busy.baseline), bar('Candidate', busy.candidate)),
  // The noise of the change comes from the steps, whose busy share is another figure (any GPU): named apart.
  busy.per_step ? h('p', {class: 'hint', 'data-testid': 'step-busy-change', title: STEP_BUSY},
    stepBusyText(busy.per_step)) : null,
  rows.length ? h('div', {class: 'table-wrap'}, h('table', {},
    h('thead', {}, h('tr', {}, h('th', {}, 'GPU'), h('th', {class: 'num'}, 'Baseline'),
      h('th', {class: 'num'}, 'Candidate'), h('th', {class: 'num'}, 'Change'))),
    h('tbody', {}, rows))) : null);
}

const SEVERITIES = ['high', 'medium', 'low'];

function severityBadge(item) {
  const severity = SEVERITIES.includes(item.severity) ? item.severity : 'low';
  const moved = item.baseline_severity && item.baseline_severity !== item.severity;
  return h('span', {class: ['badge', `severity-${severity}`], title: moved ? 'severity in the baseline → now' : null},
    moved ? `${item.baseline_severity} \u2192 ${severity}` : severity);
}

function findingList(title, kind, items) {
  if (!items.length) return null;
  return [h('h3', {}, `${title} (${items.length})`),
    h('ul', {class: ['finding-changes', kind], 'data-testid': `findings-${kind}`}, items.map((item) => h('li', {},
      h('span', {class: ['badge', `change-${kind}`]}, kind === 'persisting' ? 'still there' :
        kind === 'resolved' && item.cause_still_present ? VOCABULARY.findingChange.no_longer_costs : kind),
      severityBadge(item),
      h('span', {class: 'finding-title'}, item.title || item.id),
      item.id ? h('span', {class: 'finding-id'}, item.id) : null)))];
}

function findingsCard(comparison) {
  const findings = comparison.findings || {};
  const resolved = findings.resolved || [];
  const added = findings.new || [];
  const persisting = findings.persisting || [];
  const none = !findings.baseline_count && !findings.candidate_count;
  return section('Findings', {id: 'compare-findings',
    subtitle: `${formatCount(findings.baseline_count)} \u2192 ${formatCount(findings.candidate_count)}`},
  none ? emptyState('No findings on either side.') :
    [findingList('Resolved', 'resolved', resolved), findingList('New', 'new', added),
      findingList('Still there', 'persisting', persisting)]);
}

const WITHIN = {true: 'yes', false: 'no'};
const MISSED = new Set(['not_within', 'bound_exceeded']);

/** The check of a prediction in the report's own words (score_text); reports before `score` say yes/no. */
function scoreText(row) {
  if (row.score_text) return row.score_text;
  return WITHIN[row.within_tolerance] || '\u2014';
}

function missed(row) {
  return row.score ? MISSED.has(row.score) : row.within_tolerance === false;
}

function predictionRow(row) {
  const status = row.candidate_estimate == null ? row.status :
    `${row.status} (now ${formatSpeedup(row.candidate_estimate, row.candidate_kind) || 'no gain estimated'})`;
  return h('tr', {'data-status': row.status},
    h('td', {}, h('span', {class: 'finding-title'}, row.title || row.id), ' ',
      h('span', {class: 'finding-id'}, row.id)),
    h('td', {}, status),
    h('td', {class: 'num'}, formatSpeedup(row.predicted, row.predicted_kind) || '\u2014'),
    h('td', {class: 'num'}, Number.isFinite(row.ratio) ? fixed(row.ratio, 2) : '\u2014'),
    h('td', {class: missed(row) ? 'tone-bad' : null}, scoreText(row)));
}

function combinedLine(combined) {
  if (!combined) return null;
  const ratio = Number.isFinite(combined.ratio) ? ` (ratio ${fixed(combined.ratio, 2)})` : '';
  const model = combined.score === 'within' || combined.score === 'not_within';
  const within = combined.score_text ? combined.score_text + (model ? ' of the measured speedup' : '') :
    combined.within_tolerance === true ? `${VOCABULARY.predictionScore.within} of the measured speedup` :
      combined.within_tolerance === false ? `${VOCABULARY.predictionScore.not_within} of the measured speedup` :
        'not checked';
  const ids = combined.finding_ids || [];
  const missed = ids.filter((id) => !(combined.addressed_ids || []).includes(id));
  const others = combined.other_ids || [];
  const tail = (missed.length ? `; the candidate did not resolve or reduce ${missed.join(', ')}` : '') +
    (others.length ? `; ${others.length} other finding${others.length === 1 ? '' : 's'} also resolved or ` +
      'reduced, not checked alone' : '');
  return h('p', {'data-testid': 'combined-check'},
    `Combined estimate of the verdict's finding${ids.length === 1 ? '' : 's'} (${ids.join(', ')}): ` +
    `${formatSpeedup(combined.predicted, combined.predicted_kind) || '\u2014'}, ${within}${ratio}${tail}.`);
}

/** Each resolved or reduced finding's predicted speedup beside the measured one. */
function predictionsCard(comparison) {
  const predictions = comparison.predictions || {};
  const rows = predictions.findings || [];
  if (!rows.length) return null;
  const measured = predictions.measured;
  const basis = measured?.basis === 'per_example' ? 'mean time per example' : 'mean step time';
  return section('Prediction checked', {id: 'compare-predictions',
    subtitle: `measured ${measuredText(measured)}, ${basis}, baseline / candidate`},
  h('p', {class: 'hint'}, 'Each finding the candidate resolved or reduced, with the speedup the baseline ' +
    'predicted for its fix; ratio = predicted / measured. The measured change is every change made at once, so ' +
    'only the verdict\'s finding(s), which the combined estimate names, are checked against it; the others went ' +
    'with them and are not checked alone. An estimate (about) is checked within 25% of the measured speedup; a ' +
    'bound (up to) is an upper limit: it held (within noise where the measured 95% CI includes it), or the fix ' +
    'beat it (the CI above it) and the estimate was too low.'),
  combinedLine(predictions.combined),
  h('div', {class: 'table-wrap'}, h('table', {'data-testid': 'prediction-checks'},
    h('thead', {}, h('tr', {}, h('th', {}, 'Finding'), h('th', {}, 'Status'), h('th', {class: 'num'}, 'Predicted'),
      h('th', {class: 'num'}, 'Ratio'), h('th', {}, 'Check'))),
    h('tbody', {}, rows.map(predictionRow)))));
}

/** Every card of a /compare answer (its first matched host). */
export function comparisonView(answer) {
  const comparison = answer.hosts?.[0];
  if (!comparison) {
    return section('Comparison', {id: 'compare-summary'}, emptyState(answer.verdict || 'Nothing to compare.'));
  }
  return [
    summaryCard(answer, comparison),
    configurationChangesView(comparison),
    h('div', {class: 'grid'}, breakdownDeltaView(comparison), busyCard(comparison)),
    findingsCard(comparison),
    predictionsCard(comparison),
    kernelChangesView(comparison),
  ];
}
