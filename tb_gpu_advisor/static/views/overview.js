/**
 * The team overview: one row per run (verdict, confidence, step time, GPU busy, top finding, change against the
 * previous run of its series), sortable and filterable, filling in as the server analyzes the runs.
 */

import {getJson} from '../api.js';
import {h, replace} from '../dom.js';
import {fixed, BOTTLENECK_LABELS, formatCount, formatPct, formatSpeedup, tableMs} from '../format.js';
import {VOCABULARY} from '../vocabulary.js';
import {emptyState, section} from './common.js';

const POLL_MS = 1000;
const STATE_ORDER = {done: 0, running: 1, queued: 2, error: 3};

/** The signed change of a row against the previous run of its series: "−12.3% step · +4.0 pt busy". */
export function changeText(change) {
  if (!change) return '';
  const parts = [];
  if (Number.isFinite(change.step_time_pct)) {
    parts.push(`${change.step_time_pct > 0 ? '+' : change.step_time_pct < 0 ? '\u2212' : '\u00b1'}` +
      `${formatPct(Math.abs(change.step_time_pct))} step`);
  }
  if (Number.isFinite(change.gpu_busy_pct_points)) {
    const points = change.gpu_busy_pct_points;
    parts.push(`${points > 0 ? '+' : points < 0 ? '\u2212' : '\u00b1'}${fixed(Math.abs(points), 1)} pt busy`);
  }
  return parts.join(' \u00b7 ');
}

/** What a row sorts by in column `key`; rows without a value sort last whichever the order. */
export function sortValue(row, key) {
  const summary = row.summary || {};
  switch (key) {
    case 'run': return row.run;
    case 'verdict': return summary.bottleneck ?? null;
    case 'confidence': return {high: 0, medium: 1, low: 2}[summary.confidence] ?? null;
    case 'step_time_ms': return summary.step_time_ms ?? null;
    case 'gpu_busy_pct': return summary.gpu_busy_pct ?? null;
    case 'top_finding': return summary.top_finding?.estimated_speedup ?? null;
    case 'change': return row.change?.step_time_pct ?? null;
    default: return STATE_ORDER[row.state] ?? null;
  }
}

/** `rows` sorted by column `key` (`order` 'asc' or 'desc'), rows without a value last; stable. */
export function sortRows(rows, key, order) {
  const sign = order === 'desc' ? -1 : 1;
  return rows.map((row, index) => ({row, index, value: sortValue(row, key)}))
    .sort((a, b) => {
      if (a.value === null || b.value === null) return (a.value === null) - (b.value === null) || a.index - b.index;
      if (a.value < b.value) return -sign;
      if (a.value > b.value) return sign;
      return a.index - b.index;
    }).map(({row}) => row);
}

/** Rows whose run, verdict or top finding contains every word of `text` (case-insensitive). */
export function filterRows(rows, text) {
  const words = String(text || '').toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return rows;
  return rows.filter((row) => {
    const summary = row.summary || {};
    const haystack = [row.run, row.host, summary.verdict, BOTTLENECK_LABELS[summary.bottleneck],
      summary.top_finding?.title, summary.top_finding?.id, row.error].filter(Boolean).join(' ').toLowerCase();
    return words.every((word) => haystack.includes(word));
  });
}

const COLUMNS = [
  {key: 'run', label: 'Run'},
  {key: 'verdict', label: 'Verdict'},
  {key: 'confidence', label: 'Confidence'},
  {key: 'step_time_ms', label: 'Step time', numeric: true},
  {key: 'gpu_busy_pct', label: 'GPU busy', numeric: true, title: VOCABULARY.busyDefinitions.gpu_busy},
  {key: 'top_finding', label: 'Top finding'},
  {key: 'change', label: 'Change vs previous', numeric: true,
    title: 'Against the previous capture of the same run directory (its series), by capture time'},
];

function rowCells(row, ms) {
  const summary = row.summary;
  if (!summary) {
    const text = row.state === 'error' ? row.error : row.state === 'running' ?
      `Analyzing\u2026${Number.isFinite(row.progress) ? ` ${Math.round(row.progress * 100)}%` : ''}` : 'Queued';
    return [h('td', {colspan: COLUMNS.length - 1, class: row.state === 'error' ? 'error' : 'hint'}, text)];
  }
  const top = summary.top_finding;
  const speedup = top ? formatSpeedup(top.estimated_speedup, top.speedup_kind) : null;
  return [
    h('td', {title: summary.verdict || ''}, BOTTLENECK_LABELS[summary.bottleneck] || summary.bottleneck || '\u2014'),
    h('td', {}, summary.confidence || '\u2014'),
    h('td', {class: 'num'}, ms(summary.step_time_ms)),
    h('td', {class: 'num'}, formatPct(summary.gpu_busy_pct)),
    h('td', {title: top?.id || ''}, top ? `${top.title}${speedup ? ` (${speedup})` : ''}` : 'none'),
    h('td', {class: 'num', title: row.change ? `against ${row.change.previous_run}` : ''}, changeText(row.change)),
  ];
}

/**
 * The overview card; `onOpen(run, host)` opens a run. Polls the server while runs are being analyzed; stops when
 * `signal` aborts (the user left the overview).
 */
export function overviewView({onOpen, signal}) {
  const state = {sort: 'state', order: 'asc', filter: '', body: null};
  const head = h('thead');
  const body = h('tbody');
  const status = h('span', {class: 'overview-status', 'aria-live': 'polite', 'data-testid': 'overview-status'},
    'Listing the runs\u2026');
  const message = h('div', {class: 'table-message'});
  const filter = h('input', {type: 'search', placeholder: 'Filter by run, verdict or finding',
    'aria-label': 'Filter runs', maxlength: 200});
  filter.addEventListener('input', () => {
    state.filter = filter.value;
    render();
  });

  function sortBy(key) {
    if (state.sort === key) state.order = state.order === 'desc' ? 'asc' : 'desc';
    else {
      state.sort = key;
      state.order = key === 'run' || key === 'confidence' ? 'asc' : 'desc';
    }
    render();
  }

  function render() {
    replace(head, h('tr', {}, COLUMNS.map((column) => {
      const active = state.sort === column.key;
      return h('th', {scope: 'col', class: column.numeric ? 'num' : null,
        'aria-sort': active ? (state.order === 'desc' ? 'descending' : 'ascending') : 'none'},
      h('button', {type: 'button', class: 'sort', 'data-sort': column.key, title: column.title || null,
        onclick: () => sortBy(column.key)},
        column.label + (active ? (state.order === 'desc' ? ' \u25bc' : ' \u25b2') : '')));
    })));
    const all = state.body?.runs || [];
    const rows = sortRows(filterRows(all, state.filter), state.sort, state.order);
    const ms = tableMs(rows.map((row) => row.summary?.step_time_ms));
    replace(body, rows.map((row) => h('tr', {'data-run': row.run, 'data-state': row.state, class: 'overview-row'},
      h('td', {}, h('a', {href: '#', title: `Open ${row.host} of ${row.run}`, onclick: (event) => {
        event.preventDefault();
        onOpen(row.run, row.host);
      }}, row.run), row.hosts > 1 ? h('span', {class: 'hint'}, ` ${row.host} of ${row.hosts} hosts`) : null),
      rowCells(row, ms))));
    replace(message, !state.body || (all.length === 0 && state.body.scanning) ? null :
      all.length === 0 ? emptyState('No runs in this logdir.') :
      rows.length === 0 ? emptyState('No run matches the filter.') : null);
  }

  async function poll() {
    while (!signal.aborted) {
      try {
        const {body: answer} = await getJson('overview', {}, {signal});
        state.body = answer;
        const analyzed = answer.done + answer.errors;
        const scanning = answer.scanning;
        status.textContent = scanning ?
          (scanning.total == null ? 'Listing the runs\u2026' :
            `Scanning the logdir: ${formatCount(scanning.done)} of ${formatCount(scanning.total)} runs read`) :
          answer.pending ?
            `Analyzing in the background: ${formatCount(analyzed)} of ${formatCount(answer.total)} runs done` :
            `${formatCount(answer.total)} runs, all analyzed`;
        render();
        if (!answer.pending && !scanning) return;
      } catch (error) {
        if (error.name === 'AbortError') return;
        status.textContent = `Cannot list the runs: ${error.message}`;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  render();
  poll();
  return section('All runs', {id: 'overview', wide: true, subtitle: status, actions: [filter]},
    h('div', {class: 'table-wrap'}, h('table', {class: 'kernels overview', 'data-testid': 'overview-table'},
      head, body)),
    message);
}
