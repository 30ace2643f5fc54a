/**
 * The toolbar's "Compare with" control: a baseline run (any run but the one shown), its host when it has
 * several, and a Clear button. `onChange()` fires when the user picks or clears a baseline.
 */

import {h, replace} from './dom.js';

const NONE = '';

/** The host of `hosts` to compare with `host`: the same name, else the first. */
export function defaultBaselineHost(hosts, host) {
  return hosts.includes(host) ? host : hosts[0];
}

export function comparePicker(onChange) {
  const state = {runs: [], run: null, host: null, baseline: null};
  const runSelect = h('select', {'aria-label': 'Compare with (baseline run)', 'data-testid': 'baseline-select'});
  const hostSelect = h('select', {'aria-label': 'Baseline host', 'data-testid': 'baseline-host-select'});
  const hostLabel = h('label', {hidden: true}, 'Host ', hostSelect);
  const clear = h('button', {type: 'button', 'data-testid': 'clear-comparison', title: 'Back to the single-run view'},
    'Clear');
  const element = h('span', {class: 'compare-picker', role: 'group', 'aria-label': 'Compare with a baseline run'},
    h('label', {}, 'Compare with ', runSelect), hostLabel, clear);

  function fill() {
    const others = state.runs.filter((r) => r.run !== state.run);
    replace(runSelect, h('option', {value: NONE}, others.length ? '— none —' : '— no other run —'),
      others.map((r) => h('option', {value: r.run}, r.run)));
    runSelect.value = state.baseline?.run ?? NONE;
    runSelect.title = state.baseline?.run ?? 'Pick an earlier run to compare this one with';
    runSelect.disabled = others.length === 0;
    const hosts = state.runs.find((r) => r.run === state.baseline?.run)?.hosts || [];
    replace(hostSelect, hosts.map((host) => h('option', {value: host}, host)));
    hostSelect.value = state.baseline?.host ?? '';
    hostLabel.hidden = hosts.length < 2;
    clear.disabled = !state.baseline;
  }

  function choose(run, host) {
    const entry = state.runs.find((r) => r.run === run && r.run !== state.run);
    state.baseline = entry ? {run: entry.run, host: entry.hosts.includes(host) ? host : defaultBaselineHost(entry.hosts, state.host)} : null;
    fill();
  }

  runSelect.addEventListener('change', () => {
    choose(runSelect.value, null);
    onChange();
  });
  hostSelect.addEventListener('change', () => {
    choose(state.baseline?.run, hostSelect.value);
    onChange();
  });
  clear.addEventListener('click', () => {
    choose(null);
    onChange();
    runSelect.focus();
  });

  fill();
  return {
    element,
    /** The runs and the shown run changed: keeps the baseline if it is still another run, else drops it. */
    update(runs, run, host) {
      Object.assign(state, {runs, run, host});
      choose(state.baseline?.run, state.baseline?.host);
    },
    /** Picks a baseline (a link's), as the user would but without calling onChange. */
    set(run, host) {
      choose(run, host);
    },
    /** {run, host} of the baseline, or null for the single-run view. */
    baseline: () => state.baseline,
  };
}
