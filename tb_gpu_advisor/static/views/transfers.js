/**
 * The transfers table: count, volume, time, achieved bandwidth and the risky kinds per direction.
 */

import {h} from '../dom.js';
import {TRANSFER_LABELS, formatBytes, formatCount, formatGbps, formatPct, tableUs} from '../format.js';
import {emptyState, section} from './common.js';
import {VOCABULARY} from '../vocabulary.js';

const DIRECTIONS = TRANSFER_LABELS;
const HEADERS = [['Direction', null], ['Count', 'copies'], ['Bytes', null], ['Time', 'time the copies ran'],
  ['Bandwidth', 'bytes / time'], ['Pageable', 'copies from or to pageable (not pinned) host memory'],
  ['Synchronous', 'copies the host waited for'], ['Small', 'copies under 64 KiB (latency-bound)']];

/**
 * The empty state: no copy events. Where the time breakdown still shows device-side copy time (ROCm's
 * __amd_rocclr_copyBuffer, fills: copies the runtime ran as kernels), say so rather than "no copies" beside it.
 */
export function noCopiesText(report) {
  const d2d = report?.summary?.breakdown_pct?.d2d;
  if (!(d2d > 0)) return 'No memory copies in this profile.';
  return `No copy events (memcpy) recorded: device-side copies and fills ran as kernels ` +
    `(${VOCABULARY.breakdown.d2d} ${formatPct(d2d)} of the time; "Copy / layout" in the Kernels card).`;
}

/** The transfers card of a HostReport. */
export function transfersView(report) {
  const transfers = report.transfers || {};
  const shown = Object.entries(DIRECTIONS).filter(([key]) => transfers[key]?.count > 0);
  const us = tableUs(shown.map(([key]) => transfers[key].time_us));
  const rows = shown.map(([key, label]) => {
    const t = transfers[key];
    return h('tr', {},
      h('th', {scope: 'row'}, label),
      h('td', {class: 'num'}, formatCount(t.count)),
      h('td', {class: ['num', !t.bytes && 'muted']}, t.bytes ? formatBytes(t.bytes) : VOCABULARY.notInTrace),
      h('td', {class: 'num'}, us(t.time_us)),
      // no bandwidth without the bytes: a dash that says why, never "0 GB/s"
      Number.isFinite(t.gbps) ? h('td', {class: 'num'}, formatGbps(t.gbps)) :
        h('td', {class: 'num muted', title: `${VOCABULARY.notInTrace}: no copy sizes`}, '\u2014'),
      h('td', {class: 'num', title: 'from or to pageable (not pinned) host memory'}, t.pageable_count === null ? 'n/a' : formatCount(t.pageable_count)),
      h('td', {class: 'num'}, formatCount(t.sync_count)),
      h('td', {class: 'num'}, formatCount(t.small_count)));
  });
  return section('Transfers', {id: 'transfers', subtitle: 'memory copies by direction'},
    rows.length ? h('div', {class: 'table-wrap'}, h('table', {class: 'transfers', 'data-testid': 'transfers'},
      h('thead', {}, h('tr', {}, HEADERS.map(([label, title], i) =>
        h('th', {scope: 'col', class: i ? 'num' : null, title}, label)))),
      h('tbody', {}, rows))) : emptyState(noCopiesText(report)));
}
