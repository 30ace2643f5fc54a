// Unit tests of the findings' evidence formatting (run by tests/plugin/test_js_helpers.py with node --test).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {evidenceRows, formatMetric} from '../../tb_gpu_advisor/static/evidence.js';

test('metrics take the unit of their key', () => {
  assert.equal(formatMetric('input_wait_pct', 71.28), '71.28%');
  assert.equal(formatMetric('input_wait_ms', 160.01), '160\u00a0ms');
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
  assert.deepEqual(rows[0].items.map((i) => i.text), ['Input wait: 71.28%', 'Input wait per step: 160\u00a0ms']);
  assert.equal(rows[1].items[0].text, 'Input wait 71.28% (high at 20%, medium at 5%, crossed high)');
  assert.equal(rows[2].items[0].text, '1.03\u00a0ms – 161\u00a0ms');
  assert.equal(rows[3].items[0].text, 'train 100 (224.5\u00a0ms step, 160\u00a0ms affected)');
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
  assert.deepEqual(row.items.map((i) => i.text), ['Step time mean: 224.5\u00a0ms', 'NCCL: 769.5\u00a0ms']);
});

test('labels are unique and say what each figure is: a share, a total, a rate', () => {
  const evidence = {metrics: {input_wait_pct: 71.99, input_wait_ms: 825.384, input_wait_ms_per_step: 165.077,
    gpu_busy_pct: 22.6, tf_data_stages_ms: 3.5}};
  const [row] = evidenceRows(evidence, {steps: 5});
  assert.deepEqual(row.items.map((i) => i.text), ['Input wait share: 71.99%', 'Input wait over 5 steps: 825.4\u00a0ms',
    'Input wait per step: 165.1\u00a0ms', 'GPU busy: 22.6%', 'tf.data stages over 5 steps: 3.5\u00a0ms']);
  const labels = row.items.map((i) => i.text.split(':')[0]);
  assert.equal(new Set(labels).size, labels.length);
  assert.equal(evidenceRows(evidence)[0].items[1].text, 'Input wait total: 825.4\u00a0ms');
});

test('thresholds carry the unit of their metric', () => {
  const [row] = evidenceRows({threshold: {metric: 'gpu_busy_pct', value: 22.6, direction: 'below', level: 50.0,
    kernel_mean_us_below: 20.0}});
  assert.equal(row.items[0].text, 'GPU busy 22.6% (below 50%, kernel mean below 20\u00a0µs)');
});
