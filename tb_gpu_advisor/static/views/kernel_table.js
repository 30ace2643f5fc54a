/**
 * The kernel table: sorted, filtered and paged by the server (/kernels); each kernel's share of all kernel
 * time, its op type, and above it the time by op type (a click filters the table); full names on hover.
 */

import {ApiError, getResult} from '../api.js';
import {h, replace, s, tooltip} from '../dom.js';
import {formatBytes, formatCount, formatPct, formatUs, kernelDetail, matrixUnitLabels, shortKernelName,
  tableUs} from '../format.js';
import {VOCABULARY} from '../vocabulary.js';
import {emptyState, meter, section} from './common.js';

const COLUMNS = [
  {key: 'name', label: 'Kernel', numeric: false},
  {key: 'occurrences', label: 'Count', numeric: true},
  {key: 'total_us', label: 'Total', numeric: true},
  {key: null, label: 'Share', numeric: true, title: 'Share of the time of all kernels'},
  {key: 'avg_us', label: 'Avg', numeric: true},
  {key: 'max_us', label: 'Max', numeric: true},
  {key: 'occupancy_pct', label: 'Occupancy', numeric: true},
  {key: 'registers_per_thread', label: 'Regs', numeric: true},
  {key: 'shared_memory_bytes', label: 'Shared mem', numeric: true},
  {key: null, label: 'Grid × Block', numeric: false},
  {key: 'uses_tensor_cores', label: 'Tensor Cores', numeric: false},
  {key: 'peak_pct', label: 'Of roof', numeric: true},
];
const PAGE_SIZES = [25, 50, 100];
export const OP_TYPE_LABELS = {
  matmul_conv: 'Matmul / conv',
  elementwise: 'Element-wise',
  reduction: 'Reduction',
  collective: 'Collective',
  copy: 'Copy / layout',
  other: 'Other',
};

function tensorCoreBadge(row, [short, words]) {
  if (row.uses_tensor_cores) return h('span', {class: 'badge tc', title: `This kernel runs on ${words}`}, short);
  if (row.tensor_core_eligible) {
    return h('span', {class: 'badge tc-eligible',
      title: `Its op could run on ${words} (e.g. with mixed precision) but this kernel does not`}, 'eligible');
  }
  return h('span', {class: 'muted'}, '—');
}

/**
 * Which occupancy the table shows (the same rule as vocabulary.occupancy_kind): CUPTI's theoretical one when any
 * row records it, else the PyTorch profiler's estimate of achieved occupancy when any row has that.
 */
export function occupancyKind(kernels) {
  const rows = Array.isArray(kernels) ? kernels : [];
  if (rows.some((k) => Number.isFinite(k?.occupancy_pct))) return 'theoretical';
  return rows.some((k) => Number.isFinite(k?.achieved_occupancy_pct)) ? 'achieved' : 'theoretical';
}

/** {key, label, title} of the occupancy column for an occupancyKind. */
export function occupancyColumn(kind) {
  const [label, title] = VOCABULARY.occupancy[kind] || VOCABULARY.occupancy.theoretical;
  return {key: kind === 'achieved' ? 'achieved_occupancy_pct' : 'occupancy_pct', label, title, numeric: true};
}

function occupancyCell(pct, column) {
  if (!Number.isFinite(pct)) return h('span', {class: 'muted', title: 'Not recorded by this profiler version'}, 'n/a');
  const text = `${column.label} ${formatPct(pct)}`;
  return h('span', {class: 'occupancy', title: column.title}, meter(pct, 'occupancy', text), h('span', {}, formatPct(pct, 0)));
}

function roofCell(row) {
  if (!Number.isFinite(row.peak_pct)) {
    return h('span', {class: 'muted', title: 'FLOPs or bytes unknown: no HLO for this kernel, or an op we do not cost'}, 'n/a');
  }
  const shared = row.cost_shared_by === 'op'
    ? "Op average (the op's kernels, none known to be its matrix kernel, share its FLOPs by time): "
    : 'Module average (library kernels of a command buffer share its FLOPs by time): ';
  const detail = (row.cost_shared ? shared : '') +
    `${row.achieved_tflops} TFLOP/s, ${row.achieved_gbps} GB/s (logical), ${row.bound}-bound: ` +
    `${formatPct(row.peak_pct)} of the ${row.bound === 'compute' ? `${row.roof_tflops} TFLOP/s` : 'HBM'} roof`;
  return h('span', {class: 'occupancy', title: detail}, meter(row.peak_pct, 'roof', detail),
    h('span', {}, formatPct(row.peak_pct, 0) + (row.cost_shared ? ' avg' : '')));
}

/** A launch value the trace does not record (null): a dash that says so on hover, never a measured 0. */
function unrecorded() {
  return h('span', {class: 'muted', title: VOCABULARY.notInTrace}, '\u2014');
}

function kernelRow(row, kernelTimeUs, matrixUnits, occupancy, us) {
  const known = (value) => value !== null && value !== undefined;
  const dims = known(row.grid) || known(row.block) ?
    `${(row.grid || ['?']).join('×')} × ${(row.block || ['?']).join('×')}` : unrecorded();
  const share = kernelTimeUs > 0 && Number.isFinite(row.total_us) ? (100 * row.total_us) / kernelTimeUs : null;
  const type = OP_TYPE_LABELS[row.op_type] ? row.op_type : null;
  return h('tr', {'data-op-type': type},
    h('td', {class: 'kernel-name', title: row.name},
      h('div', {class: 'name'}, shortKernelName(row.name)),
      h('div', {class: 'op', title: row.op_name || null},
        type ? h('span', {class: `op-type op-${type}`}, OP_TYPE_LABELS[type]) : null,
        row.op_name || kernelDetail(row.name))),
    h('td', {class: 'num'}, formatCount(row.occurrences)),
    h('td', {class: 'num'}, us(row.total_us)),
    h('td', {class: 'num share'}, share === null ? '—' : formatPct(share, share < 1 ? 2 : 1)),
    h('td', {class: 'num'}, us(row.avg_us)),
    h('td', {class: 'num'}, us(row.max_us)),
    h('td', {class: 'num'}, occupancyCell(row[occupancy.key], occupancy)),
    h('td', {class: 'num'}, known(row.registers_per_thread) ? formatCount(row.registers_per_thread) : unrecorded()),
    h('td', {class: 'num'}, known(row.shared_memory_bytes) ? formatBytes(row.shared_memory_bytes) : unrecorded()),
    h('td', {class: 'dims'}, dims),
    h('td', {}, tensorCoreBadge(row, matrixUnits)),
    h('td', {class: 'num'}, roofCell(row)));
}

/** The time by op type as one stacked bar, each part a button that filters the table to that type. */
function rollupView(rollup, active, onPick) {
  if (!Array.isArray(rollup) || !rollup.length) return null;
  let x = 0;
  const parts = rollup.filter((entry) => entry.share_pct > 0).map((entry) => {
    const rect = s('rect', {class: `op-${entry.op_type}`, x, y: 0, width: entry.share_pct, height: 10},
      tooltip(`${OP_TYPE_LABELS[entry.op_type] || entry.op_type}: ${formatPct(entry.share_pct)} of kernel time, ` +
        `${formatUs(entry.total_us)} in ${formatCount(entry.kernels)} kernels`));
    x += entry.share_pct;
    return rect;
  });
  return h('div', {class: 'op-rollup', 'data-testid': 'op-rollup'},
    s('svg', {class: 'breakdown-bar', viewBox: `0 0 ${Math.max(x, 100)} 10`, preserveAspectRatio: 'none', role: 'img',
      'aria-label': 'Kernel time by op type'}, parts),
    h('div', {class: 'op-types', role: 'group', 'aria-label': 'Show only one op type'},
      rollup.map((entry) => h('button', {type: 'button', class: 'op-filter', 'data-op-type': entry.op_type,
        'aria-pressed': String(active === entry.op_type), title: active === entry.op_type ? 'Show every op type' :
          `Show only ${OP_TYPE_LABELS[entry.op_type] || entry.op_type} kernels`,
        onclick: () => onPick(active === entry.op_type ? '' : entry.op_type)},
      h('span', {class: `swatch op-${entry.op_type}`}),
      `${OP_TYPE_LABELS[entry.op_type] || entry.op_type} ${formatPct(entry.share_pct)}`))));
}

/** The kernel card for one run and host; it fetches its own pages. */
export function kernelTableView(run, host, totalKernels, {filter: initialFilter = '', onFilter, devices,
  kernels} = {}) {
  const matrixUnits = matrixUnitLabels(devices);
  const occupancy = occupancyColumn(occupancyKind(kernels));
  const columns = COLUMNS.map((entry) => (entry.key === 'occupancy_pct' ? occupancy : entry));
  const state = {sort: 'total_us', order: 'desc', filter: initialFilter, op_type: '', offset: 0, limit: PAGE_SIZES[0]};
  const rollup = h('div', {class: 'op-rollup-slot'});
  let controller = null;
  let debounce = null;
  const head = h('thead');
  const body = h('tbody');
  const status = h('span', {class: 'pager-status', 'aria-live': 'polite'});
  const prev = h('button', {type: 'button', onclick: () => move(-1)}, '‹ Prev');
  const next = h('button', {type: 'button', onclick: () => move(1)}, 'Next ›');
  const message = h('div', {class: 'table-message'});
  const filter = h('input', {type: 'search', placeholder: 'Filter by kernel or op name', 'aria-label': 'Filter kernels',
    maxlength: 200, value: initialFilter});
  const size = h('select', {'aria-label': 'Rows per page'},
    PAGE_SIZES.map((n) => h('option', {value: String(n)}, `${n} rows`)));

  filter.addEventListener('input', () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => {
      state.filter = filter.value;
      state.offset = 0;
      onFilter?.(state.filter);
      load();
    }, 250);
  });
  size.addEventListener('change', () => {
    state.limit = Number(size.value);
    state.offset = 0;
    load();
  });

  function move(direction) {
    state.offset = Math.max(0, state.offset + direction * state.limit);
    load();
  }

  function sortBy(key) {
    if (state.sort === key) state.order = state.order === 'desc' ? 'asc' : 'desc';
    else {
      state.sort = key;
      state.order = key === 'name' ? 'asc' : 'desc';
    }
    state.offset = 0;
    load();
  }

  function renderHead() {
    replace(head, h('tr', {}, columns.map((entry) => {
      const column = entry.key === 'uses_tensor_cores' ? {...entry, label: matrixUnits[1]} : entry;
      if (!column.key) return h('th', {scope: 'col', class: column.numeric ? 'num' : null, title: column.title || null}, column.label);
      const active = state.sort === column.key;
      const arrow = active ? (state.order === 'desc' ? ' ▼' : ' ▲') : '';
      return h('th', {scope: 'col', class: column.numeric ? 'num' : null, title: column.title || null,
        'aria-sort': active ? (state.order === 'desc' ? 'descending' : 'ascending') : 'none'},
      h('button', {type: 'button', class: 'sort', 'data-sort': column.key, onclick: () => sortBy(column.key)},
        column.label + arrow));
    })));
  }

  async function load() {
    controller?.abort();
    controller = new AbortController();
    renderHead();
    status.textContent = 'Loading…';
    // The first page is on its way: say so in the table's place, so it never reads as an empty table.
    if (!body.children.length) {
      replace(message, h('p', {class: 'empty', role: 'status', 'data-testid': 'kernels-loading'},
        h('span', {class: 'spinner', 'aria-hidden': 'true'}), 'Loading the kernels\u2026'));
    }
    try {
      const page = await getResult('kernels', {run, host, ...state}, {signal: controller.signal});
      const us = tableUs(page.rows.flatMap((row) => [row.total_us, row.avg_us, row.max_us]));
      replace(body, page.rows.map((row) => kernelRow(row, page.kernel_time_us, matrixUnits, occupancy, us)));
      replace(rollup, rollupView(page.op_types, state.op_type, (type) => {
        state.op_type = type;
        state.offset = 0;
        load();
      }));
      replace(message, page.total === 0 ?
        emptyState(page.total_unfiltered === 0 ? 'No kernels in this profile.' : 'No kernel matches the filter.') : null);
      const typeNote = state.op_type ? `, ${OP_TYPE_LABELS[state.op_type] || state.op_type} only` : '';
      const first = page.total ? page.offset + 1 : 0;
      const last = page.offset + page.rows.length;
      status.textContent = `${formatCount(first)}–${formatCount(last)} of ${formatCount(page.total)}` +
        (page.total !== page.total_unfiltered ? ` (filtered from ${formatCount(page.total_unfiltered)}${typeNote})` : '');
      prev.disabled = page.offset === 0;
      next.disabled = last >= page.total;
    } catch (error) {
      if (error.name === 'AbortError') return;
      replace(body);
      replace(message, h('p', {class: 'error'}, error instanceof ApiError ? error.message : String(error)));
      status.textContent = '';
    }
  }

  load();
  return section('Kernels', {id: 'kernels', subtitle: `${formatCount(totalKernels)} distinct, by total time`, wide: true,
    actions: [filter, size]},
  rollup,
  h('div', {class: 'table-wrap'}, h('table', {class: 'kernels', 'data-testid': 'kernel-table'}, head, body)),
  message,
  h('div', {class: 'pager'}, prev, status, next));
}
