// Unit tests of the Ranks card's words (run by tests/plugin/test_js_helpers.py with node --test).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {pathWords, whatIfWords} from '../../tb_gpu_advisor/static/views/ranks.js';

const NB = '\u00a0';

test('a critical path reads as the CLI writes it: consecutive segments of one kind and rank merged', () => {
  const segments = [
    {kind: 'work', rank: 2, start_ms: 0, end_ms: 30, collective: null},
    {kind: 'collective', rank: null, start_ms: 30, end_ms: 31, collective: 'allreduce'},
    {kind: 'collective', rank: null, start_ms: 31, end_ms: 33, collective: 'allreduce'},
    {kind: 'tail', rank: 0, start_ms: 33, end_ms: 35, collective: null},
  ];
  assert.equal(pathWords(segments),
    `rank 2 work 30${NB}ms \u2192 allreduce transfer \u00d72 3${NB}ms \u2192 rank 0 tail 2${NB}ms`);
  assert.equal(pathWords([]), 'no segment');
});

test('a what-if with no step time says why, never "0 ms" or "null\u00d7"', () => {
  const none = whatIfWords({name: 'collectives_overlapped', rank: null, ranks: [], step_ms: null,
    baseline_ms: 9.6, speedup: null, kind: 'model', assumes: 'one collective per step'});
  assert.equal(none.estimated, false);
  assert.match(none.text, /^not estimated; one collective per step\.$/);
  const zero = whatIfWords({name: 'collectives_overlapped', rank: null, ranks: [], step_ms: 0,
    baseline_ms: 0, speedup: null, kind: 'model', assumes: 'x'});
  assert.equal(zero.estimated, false);
  assert.doesNotMatch(zero.lead + zero.text, /null|0\u00a0ms/);
  const some = whatIfWords({name: 'rank_at_median', rank: 2, ranks: [2], step_ms: 14.7, baseline_ms: 40.4,
    speedup: 2.748, kind: 'model', assumes: 'y'});
  assert.equal(some.estimated, true);
  assert.match(some.text, /per step instead of .*2\.748/);
});

test('ranks with nothing to join get an empty state that says why, no verdict (review issue 31 P1)', async () => {
  const {nothingToJoin} = await import('../../tb_gpu_advisor/static/views/ranks.js');
  const ranks = [{rank: 0, mean: {}}, {rank: 1, mean: {}}];
  const unjoined = nothingToJoin({rank_count: 2, step_count: 0, ranks, collectives: [], notes: []});
  assert.match(unjoined, /share no step number/);
  assert.match(unjoined, /no collective is matched/);
  assert.match(unjoined, /nothing to join/);
  assert.doesNotMatch(unjoined, /holds the others back/);
  assert.match(nothingToJoin({rank_count: 1, step_count: 3, ranks: [ranks[0]], collectives: []}), /Only one rank/);
  assert.equal(nothingToJoin({rank_count: 2, step_count: 3, ranks, collectives: []}), null);
});

test('the why line gives the whole compute excess and names its part (review issue 31 K1)', async () => {
  const {whyWords} = await import('../../tb_gpu_advisor/static/views/ranks.js');
  const text = whyWords({cause: 'more_compute', cause_text: 'more compute', cause_ms_per_step: 27.4,
    excess_ms_per_step: {compute: 31.4}});
  assert.equal(text, `Why: more compute: 31.4${NB}ms more compute per step than the median rank, 27.4${NB}ms of ` +
    'it in ops it runs more often.');
  assert.match(whyWords({cause: 'input', cause_text: 'more input', cause_ms_per_step: 5, excess_ms_per_step:
    {input: 5}}), /5\u00a0ms more per step/);
});
