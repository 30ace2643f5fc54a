// Unit tests of the per-step breakdown card's bars and legend (run by tests/plugin/test_js_helpers.py).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {breakdownBars, stepShares} from '../../tb_gpu_advisor/static/views/steps_chart.js';
import {shownCategories} from '../../tb_gpu_advisor/static/views/summary.js';

test('the legend lists the categories that read above 0% of the steps, as the verdict bar does', () => {
  // demo input_bound: input wait and compute fill the steps; a few microseconds of host time are no legend entry.
  const steps = [
    {step_num: 100, time_ms: 250, breakdown_ms: {compute_16bit: 60, input_wait: 189.9, host: 0.002, idle: 0.05}},
    {step_num: 101, time_ms: 222, breakdown_ms: {compute_16bit: 60, compute_32bit: 1.5, input_wait: 160.5}},
  ];
  assert.deepEqual(shownCategories(stepShares(steps)), ['compute_16bit', 'compute_32bit', 'input_wait']);
  assert.deepEqual(shownCategories(stepShares([])), []);
});

test('each bar carries its step and total time in its title', () => {
  const bars = breakdownBars([{step_num: 7, time_ms: 12.5, breakdown_ms: {idle: 1}}, {name: 'train', time_ms: 3}]);
  assert.deepEqual(bars.map((bar) => [bar.label, bar.title]), [['7', 'Step 7, 12.5\u00a0ms'], ['train', 'Step train, 3\u00a0ms']]);
});
