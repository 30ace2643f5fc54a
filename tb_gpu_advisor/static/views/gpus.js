/**
 * Per-GPU busy bars, the straggler and the imbalance finding's per-GPU table, and the activity timeline: per
 * GPU and time bin, compute and collectives-only time as stacked bars over the idle track.
 */

import {h, s, tooltip} from '../dom.js';
import {deviceName, formatMs, formatPct, formatUs, tableMs} from '../format.js';
import {VOCABULARY} from '../vocabulary.js';
import {emptyState, legend, meter, section} from './common.js';

const LABELS = VOCABULARY.breakdown;

const IMBALANCE = 'communication.gpu_imbalance';

function deviceLabel(device, format) {
  const model = [device.model_name, device.arch].filter((part) => typeof part === 'string' && part).join(' ');
  return model ? `${deviceName(device.name, format)} · ${model}` : deviceName(device.name, format);
}

/** {straggler: device name or null, rows: per-GPU rows} of the report's imbalance finding, if it has one. */
export function imbalanceOf(report) {
  const finding = (Array.isArray(report?.findings) ? report.findings : []).find((f) => f && f.id === IMBALANCE);
  const rows = finding?.evidence?.metrics?.per_gpu;
  const devices = finding?.evidence?.pointers?.devices;
  return {
    straggler: Array.isArray(devices) && typeof devices[devices.length - 1] === 'string' ? devices[devices.length - 1] : null,
    rows: Array.isArray(rows) ? rows.filter((row) => row && typeof row.device === 'string') : [],
  };
}

function stragglerBadge() {
  return h('span', {class: 'badge straggler', title: 'The slowest GPU: the others wait for it in their collectives'},
    'straggler');
}

function busyRow(device, multi, straggler, format) {
  const active = Number.isFinite(device.busy_pct);
  const split = multi && Number.isFinite(device.compute_busy_pct);
  const hint = `kernels ${formatUs(device.kernel_time_us)} · copies ${formatUs(device.memcpy_time_us)} · ` +
    `largest gap ${formatUs(device.largest_gap_us)}`;
  const label = split ? `${device.name}: compute ${formatPct(device.compute_busy_pct)}, collectives only ` +
    `${formatPct(device.collective_busy_pct)}, idle ${formatPct(100 - device.busy_pct)}` :
    `${device.name} busy ${formatPct(device.busy_pct)}`;
  const bar = split ? s('svg', {class: 'meter', viewBox: '0 0 100 8', preserveAspectRatio: 'none', role: 'img',
    'aria-label': label},
  s('rect', {class: 'meter-track', x: 0, y: 0, width: 100, height: 8}),
  s('rect', {class: 'cat-busy', x: 0, y: 0, width: device.compute_busy_pct, height: 8}, tooltip(label)),
  s('rect', {class: 'cat-collectives', x: device.compute_busy_pct, y: 0, width: device.collective_busy_pct, height: 8},
    tooltip(label))) : meter(active ? device.busy_pct : 0, 'busy', label);
  const value = !active ? 'no activity' : split ? `${formatPct(device.compute_busy_pct)} compute` :
    `${formatPct(device.busy_pct)} busy`;
  return h('div', {class: ['gpu-row', device.name === straggler && 'is-straggler'], 'data-device': device.name},
    h('div', {class: 'gpu-label', title: device.name}, deviceLabel(device, format), device.name === straggler ? stragglerBadge() : null),
    bar,
    h('div', {class: ['gpu-value', !active && 'muted'], title: active ? label : 'no kernels, copies or memsets traced'}, value),
    active ? h('div', {class: 'gpu-hint'}, split ?
      `collectives only ${formatPct(device.collective_busy_pct)} · ${hint}` : hint) : null);
}

function imbalanceTable({straggler, rows}, format) {
  if (rows.length < 2) return null;
  const ms = tableMs(rows.flatMap((row) => [row.compute_ms, row.nccl_ms]));
  return [h('h3', {}, 'Load per GPU (from the imbalance finding)'),
    h('div', {class: 'table-wrap'}, h('table', {class: 'per-gpu', 'data-testid': 'per-gpu'},
      h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'GPU'), h('th', {scope: 'col', class: 'num'}, 'Compute'),
        h('th', {scope: 'col', class: 'num'}, 'Compute time'), h('th', {scope: 'col', class: 'num'}, 'Collective time'))),
      h('tbody', {}, rows.map((row) => h('tr', {class: row.device === straggler ? 'is-straggler' : null},
        h('th', {scope: 'row', title: row.device}, deviceName(row.device, format), row.device === straggler ? stragglerBadge() : null),
        h('td', {class: 'num'}, formatPct(row.compute_pct)),
        h('td', {class: 'num'}, ms(row.compute_ms)),
        h('td', {class: 'num'}, ms(row.nccl_ms)))))))];
}

/** One row of stacked bars: per bin, `layers` [{className, values}] from the bottom (fractions 0..1). */
function strip(layers, label, start, end) {
  const bins = Math.max(1, ...layers.map((layer) => layer.values.length));
  const bars = [];
  for (const {className, values, below} of layers) {
    values.forEach((value, i) => {
      if (!(value > 0)) return;
      const base = below ? below[i] || 0 : 0;
      bars.push(s('rect', {class: className, x: i, y: 1 - base - value, width: 1, height: value}));
    });
  }
  return s('svg', {class: 'strip', viewBox: `0 0 ${bins} 1`, preserveAspectRatio: 'none', role: 'img',
    'aria-label': `${label} from ${formatMs(start)} to ${formatMs(end)}`},
  s('rect', {class: 'strip-track', x: 0, y: 0, width: bins, height: 1}), bars,
  tooltip(`${label}: ${formatMs(start)} – ${formatMs(end)} of the profile`));
}

function deviceLayers(device) {
  const compute = Array.isArray(device.compute) ? device.compute : device.busy;
  const collective = device.busy.map((busy, i) => Math.max(0, busy - (compute[i] || 0)));
  return {compute, collective, layers: [{className: 'cat-busy', values: compute},
    {className: 'cat-collectives', values: collective, below: compute}]};
}

/** The timeline from a /timeline answer; `straggler` (a device name) is marked. */
export function timelineStrip(timeline, straggler = null, format = null) {
  if (!timeline || !timeline.bins) return emptyState('No activity to draw on a timeline.');
  const own = timeline.devices.some((d) => d.start_ms !== null && (d.start_ms !== timeline.start_ms || d.end_ms !== timeline.end_ms));
  let anyCollective = false;
  const rows = timeline.devices.map((device) => {
    const {collective, layers} = deviceLayers(device);
    anyCollective = anyCollective || collective.some((value) => value > 0.0005);
    return h('div', {class: ['strip-row', device.name === straggler && 'is-straggler'], 'data-device': device.name},
      h('div', {class: 'gpu-label', title: own && device.start_ms !== null ? `own steps: ${formatMs(device.start_ms)} – ${formatMs(device.end_ms)}` : device.name},
        deviceName(device.name, format), device.name === straggler ? stragglerBadge() : null),
      device.busy.length ? strip(layers, `${device.name} activity`, device.start_ms, device.end_ms) : emptyState('—'));
  });
  rows.push(h('div', {class: 'strip-row'}, h('div', {class: 'gpu-label'}, LABELS.input_wait),
    strip([{className: 'cat-wait', values: timeline.input_wait}], LABELS.input_wait, timeline.start_ms, timeline.end_ms)));
  const span = timeline.end_ms - timeline.start_ms;
  const keys = [{key: 'busy', label: anyCollective ? 'Compute and copies' : 'GPU busy'},
    anyCollective ? {key: 'collectives', label: 'Collectives only (incl. waiting for other GPUs)'} : null,
    {key: 'track', label: LABELS.idle}, {key: 'wait', label: LABELS.input_wait}].filter(Boolean);
  return h('div', {class: 'timeline', 'data-testid': 'timeline'}, rows,
    h('div', {class: 'strip-axis'},
      h('span', {}, formatMs(timeline.start_ms)),
      h('span', {}, `${formatMs(span)} in ${timeline.bins} bins of ${formatMs(span / timeline.bins)}; bar height = share of the bin`),
      h('span', {}, formatMs(timeline.end_ms))),
    own ? h('p', {class: 'hint'}, 'Older TensorFlow trace: each GPU row spans its own step markers.') : null,
    legend(keys));
}

/** The GPU card; `timelineSlot` is filled by the app when /timeline answers. */
export function gpusView(report, timelineSlot) {
  const devices = Array.isArray(report.devices) ? report.devices : [];
  if (!devices.length) return section('GPUs', {id: 'gpus'}, emptyState('No GPU in this profile.'));
  const multi = devices.filter((device) => Number.isFinite(device.busy_pct)).length > 1;
  const imbalance = imbalanceOf(report);
  return section('GPUs', {id: 'gpus', subtitle: multi ? 'compute, collectives only and idle share of the analysis window' :
    'busy share of the analysis window'},
  h('div', {class: 'gpu-rows', title: VOCABULARY.busyDefinitions.device_busy}, devices.map((device) => busyRow(device, multi, imbalance.straggler, report.trace_format))),
  imbalanceTable(imbalance, report.trace_format),
  h('h3', {}, 'Activity over time'),
  timelineSlot);
}
