/**
 * Why each GPU idles (report `idle_attribution`): per GPU a bar of its idle share split by cause, and per step
 * the idle milliseconds by cause. Causes and labels are the report's (IDLE_CAUSE_LABELS of vocabulary.py).
 */

import {h, s, tooltip} from '../dom.js';
import {formatMs, formatPct} from '../format.js';
import {VOCABULARY} from '../vocabulary.js';
import {emptyState, legend, section} from './common.js';

const STEPS_LISTED = 12;

function label(cause) {
  return VOCABULARY.idleCause?.[cause] || cause;
}

/** Per GPU {device, idlePct, windowMs, causes: [{key, label, pct, ms}] largest first, steps}; [] without data. */
export function idleRows(report) {
  const idle = report?.idle_attribution;
  if (!idle || !Array.isArray(idle.gpus) || !Array.isArray(idle.causes)) return [];
  return idle.gpus.filter((gpu) => gpu && typeof gpu.device === 'string').map((gpu) => ({
    device: gpu.device,
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
  return h('details', {class: 'idle-steps'},
    h('summary', {}, `Per step (${row.steps.length > STEPS_LISTED ? `first ${STEPS_LISTED} of ` : ''}` +
      `${row.steps.length}), idle time by cause`),
    h('div', {class: 'table-wrap'}, h('table', {class: 'idle-steps', 'data-testid': 'idle-steps'},
      h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Step'), h('th', {scope: 'col', class: 'num'}, 'Idle'),
        keys.map((key) => h('th', {scope: 'col', class: 'num'}, label(key))))),
      h('tbody', {}, steps.map((step) => h('tr', {},
        h('th', {scope: 'row'}, String(step.step)),
        h('td', {class: 'num'}, formatMs(step.idle_ms)),
        keys.map((key) => h('td', {class: 'num'}, formatMs(step.cause_ms?.[key])))))))));
}

/** The idle-attribution card of a HostReport. */
export function idleView(report) {
  const rows = idleRows(report);
  const causes = report?.idle_attribution?.causes || [];
  if (!rows.length) {
    return section('Why the GPU idles', {id: 'idle', subtitle: 'each idle gap by what ended it'},
      emptyState('No GPU activity, so no idle time to attribute.'));
  }
  const seen = causes.filter((key) => rows.some((row) => row.causes.some((cause) => cause.key === key)));
  return section('Why the GPU idles', {id: 'idle', subtitle: 'each idle gap by the work that ended it and its host call'},
    h('div', {class: 'gpu-rows'}, rows.map((row) => h('div', {class: 'gpu-row idle-row', 'data-device': row.device},
      h('div', {class: 'gpu-label', title: row.device}, row.device.replace('/device:', '')),
      causeBar(row),
      h('div', {class: 'gpu-value'}, `${formatPct(row.idlePct)} idle`),
      h('div', {class: 'gpu-hint'}, row.causes.length ?
        row.causes.slice(0, 3).map((cause) => `${cause.label} ${formatPct(cause.pct)}`).join(' · ') : 'never idle'),
      stepTable(row, causes)))),
    seen.length ? legend(seen.map((key) => ({key: `idle-${key}`, label: label(key)}))) : null);
}
