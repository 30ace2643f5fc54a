/**
 * The kernel launch latency histogram (host launch call to kernel start), SVG bars with counts.
 */

import {h, s, tooltip} from '../dom.js';
import {barSlots, ticks} from '../charts.js';
import {binLabels, formatCount, formatPct, formatUs} from '../format.js';
import {emptyState, section} from './common.js';

const W = 560;
const H = 200;
const M = {left: 44, right: 8, top: 10, bottom: 44};

function chart(edges, counts) {
  const labels = binLabels(edges);
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const axis = ticks(Math.max(...counts), {integer: true});
  const scale = plotH / axis[axis.length - 1];
  const slots = barSlots(counts.length, plotW, 0.15);
  const total = counts.reduce((a, b) => a + b, 0);
  return s('svg', {class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'Launch latency histogram'},
    axis.map((value) => {
      const y = M.top + plotH - value * scale;
      return s('g', {class: 'tick'}, s('line', {x1: M.left, x2: W - M.right, y1: y, y2: y}),
        s('text', {x: M.left - 6, y: y + 4, 'text-anchor': 'end'}, formatCount(value)));
    }),
    counts.map((count, i) => {
      const x = M.left + slots[i].x;
      const height = count * scale;
      return s('g', {},
        s('rect', {class: 'cat-launch', x, width: slots[i].width, y: M.top + plotH - height, height},
          tooltip(`${labels[i]}: ${formatCount(count)} launches (${formatPct(total ? (100 * count) / total : 0)})`)),
        s('text', {class: 'x-label', x: x + slots[i].width / 2, y: H - M.bottom + 12, 'text-anchor': 'end',
          transform: `rotate(-35 ${x + slots[i].width / 2} ${H - M.bottom + 12})`}, labels[i]));
    }));
}

/** The launch card of a HostReport. */
export function launchView(report) {
  const launch = report.launch || {};
  const histogram = launch.latency_histogram || {};
  const counts = Array.isArray(histogram.counts) ? histogram.counts : [];
  const latency = launch.latency_us || {};
  const facts = h('p', {class: 'facts'},
    `${formatCount(launch.count)} launches paired with their kernels · p50 ${formatUs(latency.p50)} · p95 ${formatUs(latency.p95)} · max ${formatUs(latency.max)}`,
    Number.isFinite(launch.tiny_kernel_pct) ? ` · ${formatPct(launch.tiny_kernel_pct)} of kernels are tiny` : '',
    Number.isFinite(launch.per_step) ? ` · ${formatCount(launch.per_step)} per step` : '');
  return section('Launch latency', {id: 'launch', subtitle: 'host launch call → kernel start'},
    counts.some((c) => c > 0) ? [facts, chart(histogram.edges_us, counts)] :
      emptyState('No kernel launch could be paired with its kernel (no host plane or no correlation ids).'));
}
