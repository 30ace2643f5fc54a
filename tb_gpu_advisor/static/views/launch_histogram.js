/**
 * The kernel launch latency histogram (host launch call to kernel start), SVG bars with counts.
 */

import {h, s, tooltip} from '../dom.js';
import {countTickLabels, rotatedExtent, textWidth} from '../axis.js';
import {barSlots, ticks} from '../charts.js';
import {binLabels, formatCount, formatPct, formatUs} from '../format.js';
import {VOCABULARY} from '../vocabulary.js';
import {emptyState, section} from './common.js';

const W = 560;
const PLOT_H = 146;
const ANGLE = -35;
const Y_TITLE_PX = 16;  // room left of the tick labels for the rotated axis title
const X_TITLE_PX = 16;  // room below the rotated bin labels for the axis title

function chart(edges, counts) {
  const labels = binLabels(edges);
  const axis = ticks(Math.max(...counts), {integer: true});
  const yLabels = countTickLabels(axis);
  const extents = labels.map((label) => rotatedExtent(label, ANGLE));
  const yWidth = Math.max(...yLabels.map((label) => textWidth(label))) + 12 + Y_TITLE_PX;
  const firstSlot = barSlots(counts.length, W - yWidth - 8, 0.15)[0];
  const left = Math.ceil(Math.max(yWidth, extents[0].left - firstSlot.x - firstSlot.width / 2 + 4));
  const M = {left, right: 8, top: 10, bottom: Math.ceil(Math.max(...extents.map((e) => e.down)) + 16 + X_TITLE_PX)};
  const H = M.top + PLOT_H + M.bottom;
  const plotW = W - M.left - M.right;
  const plotH = PLOT_H;
  const scale = plotH / axis[axis.length - 1];
  const slots = barSlots(counts.length, plotW, 0.15);
  const total = counts.reduce((a, b) => a + b, 0);
  return s('svg', {class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'Launch latency histogram'},
    axis.map((value, i) => {
      const y = M.top + plotH - value * scale;
      return s('g', {class: 'tick'}, s('line', {x1: M.left, x2: W - M.right, y1: y, y2: y}),
        s('text', {class: 'y-label', x: M.left - 6, y: y + 4, 'text-anchor': 'end'}, yLabels[i]));
    }),
    counts.map((count, i) => {
      const x = M.left + slots[i].x;
      const height = count * scale;
      return s('g', {},
        s('rect', {class: 'cat-launch', x, width: slots[i].width, y: M.top + plotH - height, height},
          tooltip(`${labels[i]}: ${formatCount(count)} launches (${formatPct(total ? (100 * count) / total : 0)})`)),
        s('text', {class: 'x-label', x: x + slots[i].width / 2, y: H - M.bottom + 12, 'text-anchor': 'end',
          transform: `rotate(${ANGLE} ${x + slots[i].width / 2} ${H - M.bottom + 12})`}, labels[i]));
    }),
    s('text', {class: 'axis-title x-title', x: M.left + plotW / 2, y: H - 4, 'text-anchor': 'middle'},
      'launch latency: host call to kernel start'),
    s('text', {class: 'axis-title y-title', x: 12, y: M.top + plotH / 2, 'text-anchor': 'middle',
      transform: `rotate(-90 12 ${M.top + plotH / 2})`}, 'launches'));
}

const QUEUED_BUSY_PCT = 90;  // a GPU this busy always has work queued: kernels wait behind it, not for the host
const QUEUED_LATENCY_US = 50;  // well above the few µs a launch itself costs

/** Why the latency is long when the launch queue is full (a busy GPU), or null. */
export function queueNote(report) {
  const busy = report.summary?.gpu_busy_pct;
  const p50 = report.launch?.latency_us?.p50;
  if (!(busy >= QUEUED_BUSY_PCT) || !(p50 >= QUEUED_LATENCY_US)) return null;
  return `The GPU is busy ${formatPct(busy)} of the time, so its launch queue is full: the host launches kernels ` +
    `ahead of the GPU and each one waits behind those queued before it. A median latency of ${formatUs(p50)} here is ` +
    'queueing, which keeps the GPU fed; it is not launch overhead.';
}

/** How many kernels the latency counts, in the CLI's words (VOCABULARY.launchPairing). */
function pairing(launch) {
  const calls = Number.isFinite(launch.paired_call_count) ? launch.paired_call_count : 0;
  const graph = calls > 0 && calls < launch.count;
  return VOCABULARY.launchPairing[graph ? 'graph' : 'kernels']
    .replace('{paired}', formatCount(launch.count)).replace('{kernels}', formatCount(launch.kernel_count))
    .replace('{calls}', formatCount(calls)).replace('{s}', calls === 1 ? '' : 's');
}

/** The launch card of a HostReport. */
export function launchView(report) {
  const launch = report.launch || {};
  const histogram = launch.latency_histogram || {};
  const counts = Array.isArray(histogram.counts) ? histogram.counts : [];
  const latency = launch.latency_us || {};
  const facts = h('p', {class: 'facts'},
    `${pairing(launch)} · p50 ${formatUs(latency.p50)} · p95 ${formatUs(latency.p95)} · max ${formatUs(latency.max)}`,
    Number.isFinite(launch.tiny_kernel_pct) ? ` · ${formatPct(launch.tiny_kernel_pct)} of kernels are tiny` : '',
    Number.isFinite(launch.per_step) ? ` · ${formatCount(launch.per_step)} per step` : '');
  return section('Launch latency', {id: 'launch', subtitle: 'host launch call → kernel start'},
    counts.some((c) => c > 0) ? [facts, chart(histogram.edges_us, counts), queueNote(report) ?
      h('p', {class: 'hint', 'data-testid': 'queue-note', title: VOCABULARY.busyDefinitions.gpu_busy},
        queueNote(report)) : null] :
      emptyState('No kernel launch could be paired with its kernel (no host plane or no correlation ids).'));
}
