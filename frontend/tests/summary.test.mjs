// Unit tests of the verdict card's headline busy figures (run by tests/plugin/test_js_helpers.py).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {analyzedHint, bottleneckBadge, busyFigures, sentenceStart, shownCategories, stepTime, verdictCaution} from '../../tb_gpu_advisor/static/views/summary.js';

const pairs = (figures) => figures.map(({value, hint}) => [value, hint]);

test('copies are shown apart from compute, as collectives are', () => {
  // demo jax_float32_images: busy 99.9% of which 22% is the input copy with no kernel beside it.
  const single = {active_gpu_count: 1, gpu_busy_pct: 99.9, gpu_compute_busy_pct: 99.9, gpu_kernel_busy_pct: 77.6};
  assert.equal(busyFigures(single)[0].label, 'GPU compute busy');
  assert.deepEqual(pairs(busyFigures(single)).slice(1), [[99.9, 'with copies']]);
  const both = {active_gpu_count: 1, gpu_busy_pct: 87.5, gpu_compute_busy_pct: 77.7, gpu_kernel_busy_pct: 73.5};
  assert.deepEqual(pairs(busyFigures(both)), [[73.5, 'mean over active GPUs, copies and collectives excluded'],
    [77.7, 'kernels and copies'], [87.5, 'with copies and collectives']]);
  // one tile per name (review: two tiles titled "GPU busy", 87.6% and 96.4%): the verdict's figure is "GPU busy"
  assert.deepEqual(busyFigures(both).map((f) => f.label),
    ['GPU compute busy', 'GPU busy without collectives', 'GPU busy']);
  assert.match(busyFigures(both)[1].title, /not collective kernels/);
});

test('without copies a single GPU keeps one busy figure and several GPUs lead with compute', () => {
  const plain = {active_gpu_count: 1, gpu_busy_pct: 99.8, gpu_compute_busy_pct: 99.8, gpu_kernel_busy_pct: 99.5};
  assert.deepEqual(busyFigures(plain).map((f) => f.label), ['GPU busy']);
  const multi = {active_gpu_count: 4, gpu_busy_pct: 98.9, gpu_compute_busy_pct: 33.9, gpu_kernel_busy_pct: 33.8};
  assert.deepEqual(pairs(busyFigures(multi)), [[33.9, 'mean over active GPUs, collectives excluded'],
    [98.9, 'with collectives']]);
  const noCollectives = {active_gpu_count: 2, gpu_busy_pct: 72.4, gpu_compute_busy_pct: 72.4, gpu_kernel_busy_pct: 72.2};
  assert.deepEqual(busyFigures(noCollectives).map((f) => f.label), ['GPU busy']);
});

test('the breakdown legend lists no category at 0%', () => {
  const shown = shownCategories({compute_32bit: 68.1, input_wait: 0.02, idle: 0, launch: 1.8, host: 0.04});
  assert.deepEqual(shown.sort(), ['compute_32bit', 'launch']);
});

test('a weak verdict carries its confidence on itself', () => {
  const low = verdictCaution({confidence: {level: 'low', reasons: ['a single step: no spread']},
    step_time_ms: {count: 1}});
  assert.equal(low.text, 'tentative: low confidence');  // steps counted on the step tile, cut ones too
  assert.match(low.title, /^confidence: low\na single step/);
  assert.equal(verdictCaution({confidence: {level: 'medium', reasons: []}, step_time_ms: {count: 16}}).text,
    'likely: medium confidence');
  assert.equal(verdictCaution({confidence: {level: 'high', reasons: []}, step_time_ms: {count: 1}}), null);
  assert.equal(verdictCaution({}), null);
});

test('the step-time tile shows the mean; the spread goes below it', () => {
  assert.deepEqual(stepTime({mean: 124.1, stdev: 35.2, count: 6}), ['124.1\u00a0ms', '± 35.2\u00a0ms over 6 steps']);
  assert.deepEqual(stepTime({mean: 10, stdev: null, count: 1}), ['10\u00a0ms', '1 step']);
  assert.deepEqual(stepTime({count: 0}), ['—', 'no step markers']);
});

test('"No bottleneck" beside a combined estimate is not the all-clear badge', () => {
  // kineto v100_2rank_test: no cause costs 10% on its own, the findings together up to 1.68x.
  const gains = bottleneckBadge({bottleneck: 'none', combined_estimate: {estimated_speedup: 1.68, speedup_kind: 'bound'}});
  assert.equal(gains.text, 'No bottleneck');
  assert.equal(gains.className, 'bottleneck-none-gains');
  assert.match(gains.title, /up to 1\.68× faster/);
  const clear = bottleneckBadge({bottleneck: 'none', combined_estimate: null});
  assert.deepEqual([clear.text, clear.className, clear.title], ['No bottleneck', 'bottleneck-none', null]);
  assert.equal(bottleneckBadge({bottleneck: 'input'}).className, 'bottleneck-input');
  assert.equal(bottleneckBadge({bottleneck: 'odd'}).className, 'bottleneck-other');
  assert.equal(bottleneckBadge({}), null);
});

test('the analyzed window says where its steps come from, and a profile without steps says so', () => {
  assert.equal(analyzedHint({step_source: 'host', step_timing: 'device'}), 'window (host steps, timed on the device)');
  assert.equal(analyzedHint({step_source: 'device', step_timing: 'device'}), 'window (device steps)');
  assert.equal(analyzedHint({step_source: 'none'}), 'whole profile, no steps');  // never "window (none steps)"
  assert.equal(analyzedHint({}), 'whole profile, no steps');
});

test('the verdict after its badge starts as a sentence, code keeps its case', () => {
  assert.equal(sentenceStart('the GPU idles 74% of each step'), 'The GPU idles 74% of each step');
  assert.equal(sentenceStart('tf.data map runs one element at a time'), 'tf.data map runs one element at a time');
  assert.equal(sentenceStart('torch.compile is off'), 'torch.compile is off');
  assert.equal(sentenceStart('collectives with no compute'), 'Collectives with no compute');
});
