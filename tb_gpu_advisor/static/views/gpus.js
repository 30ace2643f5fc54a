/**
 * Per-GPU busy/idle bars, and the timeline strip of GPU activity vs gaps (filled in when /timeline answers).
 */

import {h, s, tooltip} from '../dom.js';
import {timelineRuns} from '../charts.js';
import {formatMs, formatPct, formatUs} from '../format.js';
import {emptyState, legend, meter, section} from './common.js';

function deviceLabel(device) {
  const short = String(device.name || '').replace('/device:', '');
  const model = [device.model_name, device.arch].filter((part) => typeof part === 'string' && part).join(' ');
  return model ? `${short} · ${model}` : short;
}

function busyRow(device, multi) {
  const active = Number.isFinite(device.busy_pct);
  const split = multi && Number.isFinite(device.compute_busy_pct)
    ? `compute ${formatPct(device.compute_busy_pct)} · collectives only ${formatPct(device.collective_busy_pct)} · `
    : '';
  const hint = `${split}kernels ${formatUs(device.kernel_time_us)} · copies ${formatUs(device.memcpy_time_us)} · ` +
    `largest gap ${formatUs(device.largest_gap_us)}`;
  return h('div', {class: 'gpu-row'},
    h('div', {class: 'gpu-label', title: device.name}, deviceLabel(device)),
    meter(active ? device.busy_pct : 0, 'busy', `${device.name} busy ${formatPct(device.busy_pct)}`),
    h('div', {class: ['gpu-value', !active && 'muted'], title: active ? null : 'no kernels, copies or memsets traced'},
      active ? `${formatPct(device.busy_pct)} busy` : 'no activity'),
    active ? h('div', {class: 'gpu-hint'}, hint) : null);
}

function strip(fractions, className, label, start, end) {
  const bins = fractions.length;
  const rects = timelineRuns(fractions).filter((run) => run.level > 0).map((run) =>
    s('rect', {class: `${className} level-${run.level}`, x: run.start, y: 0, width: run.end - run.start, height: 1}));
  return s('svg', {class: 'strip', viewBox: `0 0 ${Math.max(bins, 1)} 1`, preserveAspectRatio: 'none', role: 'img',
    'aria-label': `${label} from ${formatMs(start)} to ${formatMs(end)}`},
  s('rect', {class: 'strip-track', x: 0, y: 0, width: Math.max(bins, 1), height: 1}), rects,
  tooltip(`${label}: ${formatMs(start)} – ${formatMs(end)} of the profile`));
}

/** The timeline strip from a /timeline answer. */
export function timelineStrip(timeline) {
  if (!timeline || !timeline.bins) return emptyState('No activity to draw on a timeline.');
  const own = timeline.devices.some((d) => d.start_ms !== null && (d.start_ms !== timeline.start_ms || d.end_ms !== timeline.end_ms));
  const rows = timeline.devices.map((device) => h('div', {class: 'strip-row'},
    h('div', {class: 'gpu-label', title: own && device.start_ms !== null ? `own steps: ${formatMs(device.start_ms)} – ${formatMs(device.end_ms)}` : device.name},
      String(device.name).replace('/device:', '')),
    device.busy.length ? strip(device.busy, 'busy', `${device.name} busy`, device.start_ms, device.end_ms) : emptyState('—')));
  rows.push(h('div', {class: 'strip-row'}, h('div', {class: 'gpu-label'}, 'Input wait'),
    strip(timeline.input_wait, 'wait', 'Host waiting for input', timeline.start_ms, timeline.end_ms)));
  const span = timeline.end_ms - timeline.start_ms;
  return h('div', {class: 'timeline', 'data-testid': 'timeline'}, rows,
    h('div', {class: 'strip-axis'},
      h('span', {}, formatMs(timeline.start_ms)),
      h('span', {}, `${formatMs(span)} in ${timeline.bins} bins of ${formatMs(span / timeline.bins)}`),
      h('span', {}, formatMs(timeline.end_ms))),
    own ? h('p', {class: 'hint'}, 'Older TensorFlow trace: each GPU row spans its own step markers.') : null,
    legend([{key: 'busy', label: 'GPU busy (more opaque = busier)'}, {key: 'wait', label: 'Host waiting for input'}]));
}

/** The GPU card; `timelineSlot` is filled by the app when /timeline answers. */
export function gpusView(report, timelineSlot) {
  const devices = Array.isArray(report.devices) ? report.devices : [];
  if (!devices.length) return section('GPUs', {id: 'gpus'}, emptyState('No GPU in this profile.'));
  const multi = devices.filter((device) => Number.isFinite(device.busy_pct)).length > 1;
  return section('GPUs', {id: 'gpus', subtitle: 'busy share of the analysis window'},
    h('div', {class: 'gpu-rows'}, devices.map((device) => busyRow(device, multi))),
    h('h3', {}, 'Activity over time'),
    timelineSlot);
}
