/**
 * Kernels matched by name between baseline and candidate: new, gone, faster, slower, with a kind filter.
 */

import {h, replace} from '../dom.js';
import {formatSignedPct, kernelChanges, signed} from '../comparison_format.js';
import {formatCount, shortKernelName, tableUs} from '../format.js';
import {emptyState, section} from './common.js';

const KINDS = [
  {key: 'all', label: 'All'},
  {key: 'new', label: 'New'},
  {key: 'fused', label: 'Fused'},
  {key: 'gone', label: 'Gone'},
  {key: 'faster', label: 'Faster'},
  {key: 'slower', label: 'Slower'},
];
const SHOWN = 15;

function row(entry, us) {
  return h('tr', {'data-kind': entry.kind},
    h('td', {}, h('span', {class: ['badge', `change-${entry.kind}`],
      title: entry.kind === 'fused' ? 'a new fused kernel that replaces kernels gone' :
        entry.basis === 'per_launch' ? 'launched more or less often per step: compared per launch' : null},
    entry.kind === 'fused' ? 'fused' : entry.basis === 'per_launch' ? `${entry.kind} per launch` : entry.kind)),
    h('td', {class: 'kernel-name', title: entry.name}, h('div', {class: 'name'}, shortKernelName(entry.name))),
    h('td', {class: 'num'}, us(entry.baseline_us)),
    h('td', {class: 'num'}, us(entry.candidate_us)),
    h('td', {class: 'num'}, signed(entry.delta_us, us)),
    h('td', {class: 'num'}, formatSignedPct(entry.delta_pct)),
    h('td', {class: 'num'}, `${formatCount(entry.baseline_occurrences)} \u2192 ${formatCount(entry.candidate_occurrences)}`));
}

/** The kernel-change card of a HostComparison. */
export function kernelChangesView(comparison) {
  const kernels = comparison.kernels || {};
  const counts = kernels.counts || {};
  const basis = kernels.basis === 'per_step' ? 'per step' : 'in the whole profile';
  const state = {kind: 'all', all: false};
  const body = h('div', {class: 'table-wrap'});
  const buttons = KINDS.map(({key, label}) => {
    const count = key === 'all' ? ['new', 'fused', 'gone', 'faster', 'slower'].reduce((sum, k) => sum + (counts[k] || 0), 0) : counts[key] || 0;
    return h('button', {type: 'button', class: 'kind-filter', 'data-kind': key, 'aria-pressed': String(key === 'all'),
      onclick: () => {
        state.kind = key;
        state.all = false;
        for (const button of buttons) button.setAttribute('aria-pressed', String(button.dataset.kind === key));
        draw();
      }}, `${label} ${formatCount(count)}`);
  });

  function draw() {
    const rows = kernelChanges(kernels, state.kind);
    if (!rows.length) {
      replace(body, emptyState(state.kind === 'all' ?
        `No kernel appeared, disappeared or changed its time by 5% or more (${formatCount(counts.unchanged)} unchanged).` :
        `No ${state.kind} kernels.`));
      return;
    }
    const shown = state.all ? rows : rows.slice(0, SHOWN);
    const us = tableUs(shown.flatMap((entry) => [entry.baseline_us, entry.candidate_us, entry.delta_us]));
    const more = rows.length - shown.length;
    replace(body,
      h('table', {'data-testid': 'kernel-changes'},
        h('thead', {}, h('tr', {},
          h('th', {}, 'Change'), h('th', {}, 'Kernel'), h('th', {class: 'num'}, 'Baseline'),
          h('th', {class: 'num'}, 'Candidate'), h('th', {class: 'num'}, 'Δ time'), h('th', {class: 'num'}, 'Δ %'),
          h('th', {class: 'num'}, 'Launches'))),
        h('tbody', {}, shown.map((entry) => row(entry, us)))),
      more > 0 ? h('div', {class: 'pager'}, h('button', {type: 'button', onclick: () => {
        state.all = true;
        draw();
      }}, `Show ${more} more`)) : null);
  }

  draw();
  return section('Kernels matched by name', {id: 'compare-kernels', wide: true,
    subtitle: `time ${basis}; ${formatCount(counts.unchanged)} unchanged (within 5%)`},
  h('div', {class: 'kind-filters', role: 'group', 'aria-label': 'Show kernels that are'}, buttons), body);
}
