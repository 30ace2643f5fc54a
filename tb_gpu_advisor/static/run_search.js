/**
 * Type-to-search for long run lists: a search box whose suggestions are the runs containing what is typed;
 * picking one (or Enter on a single match) selects it.
 */

import {h, replace} from './dom.js';

const SHOWN_FROM = 9;  // runs; shorter lists are easy to scan in the picker itself
let lists = 0;

/** The runs whose id contains `text` (case-insensitive), in list order. */
export function matchingRuns(runs, text) {
  const needle = String(text || '').trim().toLowerCase();
  return needle ? runs.filter((r) => r.run.toLowerCase().includes(needle)) : runs.slice();
}

export function runSearch(onPick) {
  lists += 1;
  const datalist = h('datalist', {id: `gpu-advisor-runs-${lists}`});
  const input = h('input', {type: 'search', class: 'run-search', placeholder: 'Find…', title: 'Type part of a run name', list: datalist.id,
    'aria-label': 'Find a run by name', 'data-testid': 'run-search', hidden: true});
  let runs = [];
  const pick = (exactOnly) => {
    const exact = runs.find((r) => r.run === input.value);
    const matches = matchingRuns(runs, input.value);
    const chosen = exact || (!exactOnly && matches.length === 1 ? matches[0] : null);
    if (!chosen) return;
    input.value = '';
    onPick(chosen.run);
  };
  input.addEventListener('input', () => pick(true));
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') pick(false);
  });
  return {
    element: h('span', {class: 'run-search-wrap'}, input, datalist),
    update(next) {
      runs = next;
      replace(datalist, runs.map((r) => h('option', {value: r.run})));
      input.hidden = runs.length < SHOWN_FROM;
    },
  };
}
