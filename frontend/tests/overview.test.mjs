// Unit tests of the overview's sorting, filtering and change wording (run by tests/plugin/test_js_helpers.py).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {changeText, filterRows, sortRows} from '../../tb_gpu_advisor/static/views/overview.js';

const rows = [
  {run: 'b/2', host: 'h', state: 'done', summary: {bottleneck: 'input', verdict: 'Input-bound: waits',
    step_time_ms: 20, gpu_busy_pct: 40, top_finding: {title: 'No prefetch', estimated_speedup: 2}}},
  {run: 'a/1', host: 'h', state: 'queued', summary: null},
  {run: 'c/3', host: 'h', state: 'done', summary: {bottleneck: 'launch', verdict: 'Launch-bound', step_time_ms: 50,
    gpu_busy_pct: 20, top_finding: null}},
];

test('sorting puts rows without a value last in either order', () => {
  assert.deepEqual(sortRows(rows, 'step_time_ms', 'desc').map((r) => r.run), ['c/3', 'b/2', 'a/1']);
  assert.deepEqual(sortRows(rows, 'step_time_ms', 'asc').map((r) => r.run), ['b/2', 'c/3', 'a/1']);
  assert.deepEqual(sortRows(rows, 'run', 'asc').map((r) => r.run), ['a/1', 'b/2', 'c/3']);
});

test('the filter matches every word in run, verdict or top finding', () => {
  assert.deepEqual(filterRows(rows, 'prefetch').map((r) => r.run), ['b/2']);
  assert.deepEqual(filterRows(rows, 'launch-bound c/').map((r) => r.run), ['c/3']);
  assert.equal(filterRows(rows, '  ').length, 3);
});

test('a change is signed: step time in percent, busy in points', () => {
  assert.equal(changeText({step_time_pct: -12.34, gpu_busy_pct_points: 4}), '\u221212.3% step \u00b7 +4.0 pt busy');
  assert.equal(changeText({step_time_pct: 5, gpu_busy_pct_points: null}), '+5% step');
  assert.equal(changeText(null), '');
});
