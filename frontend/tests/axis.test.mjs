// Unit tests of axis labels and margins, and of the first-run rule (run by tests/plugin/test_js_helpers.py).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {countTickLabels, msTickLabels, rotatedExtent, textWidth} from '../../tb_gpu_advisor/static/axis.js';
import {firstSelection, newestRun, runTimestamp} from '../../tb_gpu_advisor/static/run_choice.js';
import {matchingRuns} from '../../tb_gpu_advisor/static/run_search.js';

test('one unit per axis, that of the largest tick', () => {
  assert.deepEqual(msTickLabels([0, 2, 4, 6]), ['0 ms', '2 ms', '4 ms', '6 ms']);
  assert.deepEqual(msTickLabels([0, 250, 500, 750, 1000, 1250]), ['0 s', '0.25 s', '0.50 s', '0.75 s', '1.00 s', '1.25 s']);
  assert.deepEqual(msTickLabels([0, 0.25, 0.5]), ['0 µs', '250 µs', '500 µs']);
  assert.deepEqual(msTickLabels([0, 2.5, 5, 7.5]), ['0 ms', '2.5 ms', '5.0 ms', '7.5 ms']);
});

test('large counts are compact, never cut', () => {
  assert.deepEqual(countTickLabels([0, 25000, 50000, 125000]), ['0', '25k', '50k', '125k']);
  assert.deepEqual(countTickLabels([0, 100, 200]), ['0', '100', '200']);
  assert.deepEqual(countTickLabels([0, 5e6, 1e7]), ['0', '5M', '10M']);
  assert.deepEqual(countTickLabels([0, 500000, 1000000, 1500000]), ['0', '0.5M', '1.0M', '1.5M']);
});

test('margins grow with the text', () => {
  assert.ok(textWidth('125k') < textWidth('500µs–1ms'));
  const extent = rotatedExtent('500µs–1ms', -35);
  assert.ok(extent.down > 30 && extent.left > 40);
});

test('the first run is the newest by directory timestamp, whatever the list order', () => {
  const runs = [{run: 'b_fixed/2026_01_15_09_30_00', hosts: ['h']}, {run: 'a/2026_01_15_10_00_00', hosts: ['h', 'g']},
    {run: 'c/2025_12_31_23_59_59', hosts: ['h']}];
  assert.equal(runTimestamp(runs[1].run), '20260115100000');
  assert.equal(newestRun(runs).run, 'a/2026_01_15_10_00_00');
  assert.equal(newestRun(runs.slice().reverse()).run, 'a/2026_01_15_10_00_00');
  assert.deepEqual(firstSelection(runs, null), {run: 'a/2026_01_15_10_00_00', host: 'h'});
  assert.deepEqual(firstSelection(runs, {run: 'c/2025_12_31_23_59_59', host: 'x'}), {run: 'c/2025_12_31_23_59_59', host: 'h'});
  assert.deepEqual(firstSelection(runs, {run: 'gone/2026_01_01_00_00_00', host: 'h'}).run, 'a/2026_01_15_10_00_00');
  const tied = [{run: 'z/2026_01_01_00_00_00', hosts: ['h']}, {run: 'a/2026_01_01_00_00_00', hosts: ['h']}];
  assert.equal(newestRun(tied).run, 'z/2026_01_01_00_00_00');  // a tie keeps the server's order
  assert.equal(firstSelection([], null), null);
});

test('run search matches substrings, case-insensitively', () => {
  const runs = [{run: 'input_bound/2026'}, {run: 'Input_bound_fixed/2026'}, {run: 'healthy/2026'}];
  assert.deepEqual(matchingRuns(runs, 'INPUT').map((r) => r.run), ['input_bound/2026', 'Input_bound_fixed/2026']);
  assert.equal(matchingRuns(runs, '').length, 3);
});

test('long kernel names lose namespaces from the left, never the function', async () => {
  const {shortKernelName} = await import('../../tb_gpu_advisor/static/format.js');
  assert.equal(shortKernelName('void at::native::(anonymous namespace)::softmax_warp_forward<float, 10>(float*, int)', 40),
    '\u2026::softmax_warp_forward<\u2026>');
  assert.equal(shortKernelName('void tensorflow::functor::ApplyAdamKernel<float>(int)', 80), 'tensorflow::functor::ApplyAdamKernel<\u2026>');
});
