// Unit tests of the findings' evidence formatting (run by tests/plugin/test_js_helpers.py with node --test).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {evidenceRows, formatMetric} from '../../tb_gpu_advisor/static/evidence.js';

test('metrics take the unit of their key', () => {
  assert.equal(formatMetric('input_wait_pct', 71.28), '71.28%');
  assert.equal(formatMetric('input_wait_ms', 160.01), '160 ms');
  assert.equal(formatMetric('pageable_bytes', 335544320), formatMetric('bytes', 335544320));
  assert.equal(formatMetric('active_gpus', 4), '4');
});

test('an input finding reads as measurements, threshold and pointers', () => {
  const rows = evidenceRows({
    metrics: {input_wait_pct: 71.28, input_wait_ms_per_step: 160.01},
    threshold: {metric: 'input_wait_pct', value: 71.28, high: 20, medium: 5, crossed: 'high'},
    pointers: {
      time_ranges_ms: [[1.035, 161.045]],
      steps: [{step: 'train 100', time_ms: 224.47, overlap_ms: 160.01}],
      kernels: ['void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<float>, long>(int)'],
    },
  });
  assert.deepEqual(rows.map((r) => r.label), ['Measured', 'Threshold', 'Time ranges', 'Steps', 'Kernels']);
  assert.deepEqual(rows[0].items.map((i) => i.text), ['Input wait: 71.28%', 'Input wait per step: 160 ms']);
  assert.equal(rows[1].items[0].text, 'Input wait 71.28% (high at 20, medium at 5, crossed high)');
  assert.equal(rows[2].items[0].text, '1.03 ms – 161 ms');
  assert.equal(rows[3].items[0].text, 'train 100 (224.5 ms step, 160 ms affected)');
  assert.equal(rows[4].items[0].title, 'void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<float>, long>(int)');
});

test('long pointer lists are cut with a count, and odd input gives no rows', () => {
  const rows = evidenceRows({pointers: {devices: Array.from({length: 10}, (_, i) => `/device:GPU:${i}`)}});
  assert.equal(rows[0].items.length, 9);
  assert.equal(rows[0].items[8].text, '… 2 more');
  assert.deepEqual(evidenceRows(null), []);
  assert.deepEqual(evidenceRows('text'), []);
});

test('a unit inside the key still gives the unit', () => {
  const [row] = evidenceRows({metrics: {step_time_ms_mean: 224.47, nccl_ms: 769.5}});
  assert.deepEqual(row.items.map((i) => i.text), ['Step time mean: 224.5 ms', 'Nccl: 769.5 ms']);
});
