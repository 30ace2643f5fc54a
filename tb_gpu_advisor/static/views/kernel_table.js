/**
 * The kernel table: sorted, filtered and paged by the server (/kernels); full names on hover.
 */

import {ApiError, getResult} from '../api.js';
import {h, replace} from '../dom.js';
import {formatBytes, formatCount, formatPct, formatUs, kernelDetail, shortKernelName} from '../format.js';
import {emptyState, meter, section} from './common.js';

const COLUMNS = [
  {key: 'name', label: 'Kernel', numeric: false},
  {key: 'occurrences', label: 'Count', numeric: true},
  {key: 'total_us', label: 'Total', numeric: true},
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

function tensorCoreBadge(row) {
  if (row.uses_tensor_cores) return h('span', {class: 'badge tc', title: 'This kernel runs on Tensor Cores'}, 'TC');
  if (row.tensor_core_eligible) {
    return h('span', {class: 'badge tc-eligible', title: 'Its op could run on Tensor Cores (e.g. with mixed precision) but this kernel does not'}, 'eligible');
  }
  return h('span', {class: 'muted'}, '—');
}

function occupancyCell(pct) {
  if (!Number.isFinite(pct)) return h('span', {class: 'muted', title: 'Not recorded by this profiler version'}, 'n/a');
  return h('span', {class: 'occupancy'}, meter(pct, 'occupancy', `occupancy ${formatPct(pct)}`), h('span', {}, formatPct(pct, 0)));
}

function roofCell(row) {
  if (!Number.isFinite(row.peak_pct)) {
    return h('span', {class: 'muted', title: 'FLOPs or bytes unknown: no HLO for this kernel, or an op we do not cost'}, 'n/a');
  }
  const detail = `${row.achieved_tflops} TFLOP/s, ${row.achieved_gbps} GB/s (logical), ${row.bound}-bound: ` +
    `${formatPct(row.peak_pct)} of the ${row.bound === 'compute' ? `${row.roof_tflops} TFLOP/s` : 'HBM'} roof`;
  return h('span', {class: 'occupancy', title: detail}, meter(row.peak_pct, 'roof', detail),
    h('span', {}, formatPct(row.peak_pct, 0)));
}

function kernelRow(row) {
  const dims = `${(row.grid || []).join('×')} × ${(row.block || []).join('×')}`;
  return h('tr', {},
    h('td', {class: 'kernel-name', title: row.name},
      h('div', {class: 'name'}, shortKernelName(row.name)),
      row.op_name ? h('div', {class: 'op', title: row.op_name}, row.op_name) :
        h('div', {class: 'op'}, kernelDetail(row.name))),
    h('td', {class: 'num'}, formatCount(row.occurrences)),
    h('td', {class: 'num'}, formatUs(row.total_us)),
    h('td', {class: 'num'}, formatUs(row.avg_us)),
    h('td', {class: 'num'}, formatUs(row.max_us)),
    h('td', {class: 'num'}, occupancyCell(row.occupancy_pct)),
    h('td', {class: 'num'}, formatCount(row.registers_per_thread)),
    h('td', {class: 'num'}, formatBytes(row.shared_memory_bytes)),
    h('td', {class: 'dims'}, dims),
    h('td', {}, tensorCoreBadge(row)),
    h('td', {class: 'num'}, roofCell(row)));
}

/** The kernel card for one run and host; it fetches its own pages. */
export function kernelTableView(run, host, totalKernels, {filter: initialFilter = '', onFilter} = {}) {
  const state = {sort: 'total_us', order: 'desc', filter: initialFilter, offset: 0, limit: PAGE_SIZES[0]};
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
    replace(head, h('tr', {}, COLUMNS.map((column) => {
      if (!column.key) return h('th', {scope: 'col'}, column.label);
      const active = state.sort === column.key;
      const arrow = active ? (state.order === 'desc' ? ' ▼' : ' ▲') : '';
      return h('th', {scope: 'col', class: column.numeric ? 'num' : null,
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
    try {
      const page = await getResult('kernels', {run, host, ...state}, {signal: controller.signal});
      replace(body, page.rows.map(kernelRow));
      replace(message, page.total === 0 ?
        emptyState(page.total_unfiltered === 0 ? 'No kernels in this profile.' : 'No kernel matches the filter.') : null);
      const first = page.total ? page.offset + 1 : 0;
      const last = page.offset + page.rows.length;
      status.textContent = `${formatCount(first)}–${formatCount(last)} of ${formatCount(page.total)}` +
        (page.total !== page.total_unfiltered ? ` (filtered from ${formatCount(page.total_unfiltered)})` : '');
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
  h('div', {class: 'table-wrap'}, h('table', {class: 'kernels', 'data-testid': 'kernel-table'}, head, body)),
  message,
  h('div', {class: 'pager'}, prev, status, next));
}
