// Unit tests of the Ranks card's words (run by tests/plugin/test_js_helpers.py with node --test).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {pathWords} from '../../tb_gpu_advisor/static/views/ranks.js';

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
