/**
 * Why each GPU idles (report `idle_attribution`): per GPU a bar of its idle share split by cause, and per step
 * a chart of the idle milliseconds by cause (one GPU at a time, picked beside it), with the numbers in a table
 * below. Causes and labels are the report's (IDLE_CAUSE_LABELS of vocabulary.py).
 */

import {h, replace, s, tooltip} from '../dom.js';
import {sampleEvenly} from '../charts.js';
import {deviceName, formatMs, formatPct, tableMs} from '../format.js';
import {VOCABULARY} from '../vocabulary.js';
import {emptyState, legend, section} from './common.js';
import {stepBarChart, stepNumberLabel} from './step_bars.js';

const STEPS_LISTED = 12;
const MAX_BARS = 60;

function label(cause) {
  return VOCABULARY.idleCause?.[cause] || cause;
}

/** Per GPU {device, idlePct, windowMs, causes: [{key, label, pct, ms}] largest first, steps}; [] without data. */
export function idleRows(report) {
  const idle = report?.idle_attribution;
  if (!idle || !Array.isArray(idle.gpus) || !Array.isArray(idle.causes)) return [];
  return idle.gpus.filter((gpu) => gpu && typeof gpu.device === 'string').map((gpu) => ({
    device: gpu.device,
    name: deviceName(gpu.device, report.trace_format),
    idlePct: Number.isFinite(gpu.idle_pct) ? gpu.idle_pct : null,
    windowMs: gpu.window_ms,
    causes: idle.causes.map((key) => ({key, label: label(key), pct: gpu.cause_pct?.[key], ms: gpu.cause_ms?.[key]}))
      .filter((cause) => cause.pct > 0).sort((a, b) => b.pct - a.pct),
    steps: Array.isArray(gpu.steps) ? gpu.steps : [],
  }));
}

/** The causes that any step of a GPU has, in the report's order. */
export function stepCauses(causes, steps) {
  return causes.filter((key) => steps.some((step) => step?.cause_ms?.[key] > 0));
}

/** True when a share reads as zero once formatted ("0%"). */
function zeroPct(pct) {
  return !(pct > 0) || /^0(\.0+)?%$/.test(formatPct(pct));
}

/**
 * The legend of the idle causes: each cause whose share of the analyzed time reads above 0% on some GPU, with
 * its share on the GPU where it is largest ("up to" when several GPUs differ); a cause reading 0% is left out
 * unless the per-step chart draws it (`drawn`: its keys), where it reads "<0.1%": every color drawn is named.
 */
export function causeLegend(rows, causes, drawn = []) {
  const items = [];
  for (const key of causes) {
    const shares = rows.map((row) => row.causes.find((cause) => cause.key === key)?.pct).filter((pct) => pct > 0);
    const top = shares.length ? Math.max(...shares) : 0;
    if (zeroPct(top)) {
      if (drawn.includes(key)) items.push({key: `idle-${key}`, label: `${label(key)} <${formatPct(0.1)}`});
      continue;
    }
    const many = rows.length > 1 && shares.some((pct) => formatPct(pct) !== formatPct(top));
    items.push({key: `idle-${key}`, label: `${label(key)} ${many ? 'up to ' : ''}${formatPct(top)}`});
  }
  return items;
}

/** The bars of one GPU's per-step chart: [{label, title, values}] (evenly sampled past MAX_BARS steps). */
export function stepBars(row) {
  return sampleEvenly(row.steps.filter((step) => step && typeof step === 'object'), MAX_BARS).map((step, i) => ({
    label: stepNumberLabel(step.step, i),
    title: `${row.name} step ${stepNumberLabel(step.step, i)}, idle ${formatMs(step.idle_ms)}`,
    values: step.cause_ms || {},
  }));
}

function stepChart(rows, causes) {
  const withSteps = rows.filter((row) => row.steps.length && stepCauses(causes, row.steps).length);
  if (!withSteps.length) return emptyState('No steps were found, so there is no idle time per step.');
  const slot = h('div', {class: 'idle-step-chart', 'data-testid': 'idle-step-chart'});
  const draw = (row) => replace(slot, stepBarChart(stepBars(row), stepCauses(causes, row.steps), {
    className: (key) => `cat-idle-${key}`, label, yTitle: 'idle time', xTitle: 'step',
    ariaLabel: `${row.device} idle time per step, by cause`}));
  const busiest = withSteps.reduce((best, row) => ((row.idlePct ?? 0) > (best.idlePct ?? 0) ? row : best));
  const picker = withSteps.length > 1 ? h('select', {'aria-label': 'GPU of the per-step chart',
    onchange: (event) => draw(withSteps[Number(event.target.value)])},
  withSteps.map((row, i) => h('option', {value: String(i), selected: row === busiest},
    `${row.name}${row === busiest ? ' (most idle)' : ''}`))) : null;
  draw(busiest);
  return h('div', {class: 'idle-per-step'},
    h('div', {class: 'idle-per-step-head'},
      h('h3', {}, `Idle time per step${picker ? '' : `, ${busiest.name}`}`), picker),
    slot);
}

function causeBar(row) {
  let at = 0;
  const parts = row.causes.map((cause) => {
    const rect = s('rect', {class: `cat-idle-${cause.key}`, x: at, y: 0, width: cause.pct, height: 8},
      tooltip(`${cause.label}: ${formatPct(cause.pct)} (${formatMs(cause.ms)})`));
    at += cause.pct;
    return rect;
  });
  const text = `${row.device} idle ${formatPct(row.idlePct)}: ` +
    row.causes.map((cause) => `${cause.label} ${formatPct(cause.pct)}`).join(', ');
  return s('svg', {class: 'meter', viewBox: '0 0 100 8', preserveAspectRatio: 'none', role: 'img', 'aria-label': text},
    s('rect', {class: 'meter-track', x: 0, y: 0, width: 100, height: 8}), parts);
}

function stepTable(row, causes) {
  const keys = stepCauses(causes, row.steps);
  if (!keys.length || !row.steps.length) return null;
  const steps = row.steps.slice(0, STEPS_LISTED);
  const ms = tableMs(steps.flatMap((step) => [step.idle_ms, ...keys.map((key) => step.cause_ms?.[key])]));
  return h('details', {class: 'idle-steps'},
    h('summary', {}, `Per step (${row.steps.length > STEPS_LISTED ? `first ${STEPS_LISTED} of ` : ''}` +
      `${row.steps.length}), idle time by cause`),
    h('div', {class: 'table-wrap'}, h('table', {class: 'idle-steps', 'data-testid': 'idle-steps'},
      h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Step'), h('th', {scope: 'col', class: 'num'}, VOCABULARY.breakdown.idle),
        keys.map((key) => h('th', {scope: 'col', class: 'num'}, label(key))))),
      h('tbody', {}, steps.map((step) => h('tr', {},
        h('th', {scope: 'row'}, String(step.step)),
        h('td', {class: 'num'}, ms(step.idle_ms)),
        keys.map((key) => h('td', {class: 'num'}, ms(step.cause_ms?.[key])))))))));
}

/** The idle-attribution card of a HostReport. */
export function idleView(report) {
  const rows = idleRows(report);
  const causes = report?.idle_attribution?.causes || [];
  if (!rows.length) {
    return section('Why the GPU idles', {id: 'idle', subtitle: 'each idle gap by what ended it'},
      emptyState('No GPU activity, so no idle time to attribute.'));
  }
  const items = causeLegend(rows, causes, rows.flatMap((row) => stepCauses(causes, row.steps)));
  return section('Why the GPU idles', {id: 'idle', subtitle: 'each idle gap by the work that ended it and its host call'},
    h('div', {class: 'gpu-rows'}, h('span', {'aria-hidden': 'true'}), h('div', {class: 'gpu-axis', 'aria-hidden': 'true'},
      h('span', {}, '0%'), h('span', {}, 'share of the analyzed time'), h('span', {}, '100%')), h('span', {'aria-hidden': 'true'}),
    rows.map((row) => h('div', {class: 'gpu-row idle-row', 'data-device': row.device},
      h('div', {class: 'gpu-label', title: row.device}, row.name),
      causeBar(row),
      h('div', {class: 'gpu-value'}, `${formatPct(row.idlePct)} idle`),
      h('div', {class: 'gpu-hint'}, row.causes.length ? row.causes.filter((cause) => !zeroPct(cause.pct)).slice(0, 3)
        .map((cause) => `${cause.label} ${formatPct(cause.pct)}`).join(' · ') || 'idle under 0.1% of the time' :
        'never idle'),
      stepTable(row, causes)))),
    items.length ? legend(items) : null,
    stepChart(rows, causes));
}
