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
