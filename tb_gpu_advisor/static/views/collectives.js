/**
 * The collectives card: each collective's calls, time, sizes and group, as the text report's Collectives table,
 * and the bus bandwidth of its large calls against the GPUs' link, or why the trace gives none.
 */

import {h, replace} from '../dom.js';
import {formatBytes, formatCount, formatGbps, formatMs, formatPct, formatUs, tableUs} from '../format.js';
import {VOCABULARY} from '../vocabulary.js';
import {section} from './common.js';

const NOT_IN_TRACE = VOCABULARY.notInTrace;
const GAPS = VOCABULARY.collectiveBandwidthGaps;
const capitalized = (label) => label.charAt(0).toUpperCase() + label.slice(1);
// The text report's columns (vocabulary.COLLECTIVE_HEADERS); `sort` gives the value a click sorts by.
const COLUMNS = [
  {sort: (row) => row.source},
  {sort: (row) => row.collective},
  {numeric: true, sort: (row) => row.calls},
  {numeric: true, sort: (row) => row.calls_per_step},
  {numeric: true, sort: (row) => row.time_us},
  {numeric: true, sort: (row) => row.in_bytes},
  {},
  {numeric: true},
  {},
  {},
].map((column, i) => ({...column, label: capitalized(VOCABULARY.collectiveHeaders[i])}));
export const COLLECTIVE_COLUMNS = COLUMNS.map((column) => column.label);
export const BANDWIDTH_COLUMNS = ['Collective', 'Calls of 8 MiB or more', 'Algbw (median)', 'Busbw (median)',
  'Best busbw', 'Of the link'];

/** A cell: `missing` cells say the trace does not record the value. */
function cell(text, missing = false, title = null) {
  return {text: missing ? NOT_IN_TRACE : text, missing, title};
}

/**
 * The rows of a report's `collectives[]` in the report's order (where recorded, then most time first):
 * [{row, cells: [{text, missing, title}]}], one cell per COLLECTIVE_COLUMNS.
 */
export function collectiveRows(report) {
  const rows = Array.isArray(report?.collectives) ? report.collectives : [];
  const us = tableUs(rows.map((row) => row.time_us));
  return rows.map((row) => {
    const sizeSource = row.size_source ? String(row.size_source).split(', ')
      .map((source) => VOCABULARY.collectiveSizeSources[source] || source).join(', ') : null;
    return {row, cells: [
      cell(row.source, false, VOCABULARY.collectiveSources[row.source] || null),
      cell(row.collective),
      cell(formatCount(row.calls)),
      cell(String(row.calls_per_step), row.calls_per_step === null || row.calls_per_step === undefined),
      cell(us(row.time_us)),
      cell(formatBytes(row.in_bytes), row.in_bytes === null || row.in_bytes === undefined),
      cell((row.dtypes || []).join(', '), !row.dtypes?.length),
      cell((row.group_sizes || []).join(', '), !row.group_sizes?.length),
      cell(sizeSource, !sizeSource),
      cell(issuedBy(row), !issuedBy(row)),
    ]};
  });
}

/** The op that issued a row's calls (the most frequent), "kernel name" where only the kernel's name told the
 * kind, null where nothing did (report.sections.issued_by_text). */
function issuedBy(row) {
  if (row.issued_by?.length) return row.issued_by[0];
  return (row.named_from || []).includes('kernel_name') ? 'kernel name' : null;
}

/** Why a `collective_bandwidth.collectives[]` row has no bus bandwidth (vocabulary.collective_bandwidth_gap), or
 * null; `groupSizes`: the kind's kernel row's `group_sizes`. */
export function bandwidthGap(row, groupSizes = []) {
  if (row.busbw_gbps !== null && row.busbw_gbps !== undefined) return null;
  if (!row.sized_calls) return GAPS.no_sizes;
  if (!row.large_calls) return GAPS.no_large_calls;
  if (row.group_size === null || row.group_size === undefined) {
    return groupSizes.length > 1 ? GAPS.mixed_groups : GAPS.no_group;
  }
  return GAPS.no_bus_factor;
}

/**
 * Per collective kind of the GPU's calls: [{collective, cells: [{text, span?, missing?}]}] under BANDWIDTH_COLUMNS
 * (a reason spans the columns it leaves empty), and `link`: the line naming the link, when a kind is measured.
 */
export function bandwidthRows(report) {
  const bandwidth = report?.collective_bandwidth;
  const kinds = Array.isArray(bandwidth?.collectives) ? bandwidth.collectives : [];
  const groups = new Map((report.collectives || []).filter((row) => row.source === 'kernel')
    .map((row) => [row.collective, row.group_sizes || []]));
  const rows = kinds.map((row) => {
    const gap = bandwidthGap(row, groups.get(row.collective));
    // No sizes: how many calls reach 8 MiB is unknown, a dash, never 0 beside "sizes not in the trace".
    const head = [{text: row.collective}, row.sized_calls ? {text: formatCount(row.large_calls)} :
      {text: '\u2014', missing: true}];
    if (!gap) {
      const ratio = row.best_busbw_link_ratio;
      return {collective: row.collective, cells: [...head, {text: formatGbps(row.algbw_gbps)},
        {text: formatGbps(row.busbw_gbps)}, {text: formatGbps(row.best_busbw_gbps)},
        {text: ratio === null || ratio === undefined ? '\u2014' : formatPct(100 * ratio)}]};
    }
    const algbw = row.algbw_gbps === null || row.algbw_gbps === undefined ? [] : [{text: formatGbps(row.algbw_gbps)}];
    return {collective: row.collective, cells: [...head, ...algbw, {text: gap, span: 4 - algbw.length, missing: true}]};
  });
  const link = bandwidth?.link;
  const measured = rows.some((row) => !row.cells.some((c) => c.missing));
  return {rows, link: measured && link ?
    `Link: ${formatGbps(link.gbps)} ${link.kind === 'nvlink' ? 'NVLink' : 'PCIe'} per GPU (${link.basis}).` : null};
}

function cellNode(entry, numeric) {
  return h('td', {class: [numeric && 'num', entry.missing && 'muted'], title: entry.title || null,
    colspan: entry.span || null}, entry.text);
}

function collectivesTable(report) {
  const rows = collectiveRows(report);
  const state = {sort: null, order: 'desc'};
  const head = h('thead');
  const body = h('tbody');

  function sortBy(index) {
    if (state.sort === index) state.order = state.order === 'desc' ? 'asc' : 'desc';
    else Object.assign(state, {sort: index, order: COLUMNS[index].numeric ? 'desc' : 'asc'});
    render();
  }

  function sorted() {
    if (state.sort === null) return rows;
    const key = COLUMNS[state.sort].sort;
    const sign = state.order === 'desc' ? -1 : 1;
    // rows without the value (bytes not recorded) go last either way
    return [...rows].sort((a, b) => {
      const [x, y] = [key(a.row), key(b.row)];
      const [xMissing, yMissing] = [x === null || x === undefined, y === null || y === undefined];
      if (xMissing || yMissing) return xMissing === yMissing ? 0 : (xMissing ? 1 : -1);
      return sign * (typeof x === 'string' ? x.localeCompare(y) : x - y);
    });
  }

  function render() {
    replace(head, h('tr', {}, COLUMNS.map((column, index) => {
      const cls = column.numeric ? 'num' : null;
      if (!column.sort) return h('th', {scope: 'col', class: cls}, column.label);
      const active = state.sort === index;
      const arrow = active ? (state.order === 'desc' ? ' ▼' : ' ▲') : '';
      return h('th', {scope: 'col', class: cls,
        'aria-sort': active ? (state.order === 'desc' ? 'descending' : 'ascending') : 'none'},
      h('button', {type: 'button', class: 'sort', 'data-sort': String(index), onclick: () => sortBy(index)},
        column.label + arrow));
    })));
    replace(body, sorted().map(({row, cells}) => h('tr', {'data-source': row.source, 'data-collective': row.collective},
      cells.map((entry, i) => cellNode(entry, COLUMNS[i].numeric)))));
  }

  render();
  return h('div', {class: 'table-wrap'}, h('table', {class: 'collectives', 'data-testid': 'collectives'},
    h('caption', {}, 'Calls by where they were recorded and collective, most time first'), head, body));
}

function bandwidthTable(report) {
  const {rows, link} = bandwidthRows(report);
  if (!rows.length) return null;
  return h('div', {class: 'collective-bandwidth', 'data-testid': 'collective-bandwidth'},
    h('div', {class: 'table-wrap'}, h('table', {class: 'collectives'},
      h('caption', {}, 'Bandwidth of the GPU\'s calls (NCCL-tests definitions: busbw compares with the link)'),
      h('thead', {}, h('tr', {}, BANDWIDTH_COLUMNS.map((label, i) =>
        h('th', {scope: 'col', class: i ? 'num' : null}, label)))),
      h('tbody', {}, rows.map(({collective, cells}) => h('tr', {'data-collective': collective},
        cells.map((entry, i) => cellNode(entry, i > 0))))))),
    link ? h('p', {class: 'hint', 'data-testid': 'collective-link'}, link) : null);
}

/**
 * How the table's time (each call's whole duration) relates to the verdict card's Collectives share (the exposed
 * part: inside the analyzed steps with no compute or step-thread work over it), so the two numbers reconcile;
 * null when there is no share to relate to or the two agree within 1% of the total. GPU calls are counted from
 * their kernels where both the kernels and the host ops recorded them (the same calls twice).
 */
export function exposedNote(report) {
  const rows = Array.isArray(report?.collectives) ? report.collectives : [];
  const source = rows.some((row) => row.source === 'kernel') ? 'kernel' : 'host';
  const totalMs = rows.filter((row) => row.source === source).reduce((sum, row) => sum + (row.time_us || 0), 0) / 1000;
  const pct = report?.summary?.breakdown_pct?.collectives;
  const windowMs = report?.summary?.analysis_window_ms;
  if (!(totalMs > 0) || !Number.isFinite(pct) || !(windowMs > 0)) return null;
  const exposedMs = pct * windowMs / 100;
  if (Math.abs(totalMs - exposedMs) < 0.01 * totalMs) return null;
  return `Time is each call's whole duration: ${formatMs(totalMs)} in all (${source === 'kernel' ? 'kernels' :
    'host ops'}). The verdict card's Collectives ${formatPct(pct)} of the ${formatMs(windowMs)} analyzed is ` +
    `${formatMs(exposedMs)}: the exposed part, inside the analyzed steps with no compute or step-thread work ` +
    'over it.';
}

/** The collectives card of a HostReport, or null when the host has no collective call. */
export function collectivesView(report) {
  if (!Array.isArray(report?.collectives) || !report.collectives.length) return null;
  return section(VOCABULARY.breakdown.collectives, {id: 'collectives', wide: true,
    subtitle: 'communication calls, and their bandwidth against the link'},
  h('div', {class: 'collectives-body'},
    h('div', {class: 'collectives-calls'}, collectivesTable(report),
      exposedNote(report) ? h('p', {class: 'hint', 'data-testid': 'collectives-exposed'}, exposedNote(report)) : null),
    bandwidthTable(report)));
}
