// Unit tests of the comparison view's pure helpers (run by tests/plugin/test_js_helpers.py with node --test).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {
  arrow, badgeText, breakdownDeltas, differenceText, headline, divergingLayout, formatPoints, formatSignedMs, formatSignedPct,
  measuredText, signedMsIn, speedChangeText,
  formatSignedUs, intervalText, kernelChanges, noiseStatement, pointsDifferenceText, ratioText,
} from '../../tb_gpu_advisor/static/comparison_format.js';
import {defaultBaselineHost} from '../../tb_gpu_advisor/static/compare_picker.js';

const MINUS = '\u2212';

function difference(overrides = {}) {
  return {baseline: 7.26, candidate: 1.38, delta: -5.88, delta_pct: -80.97, ci_low: -5.94, ci_high: -5.82,
    ci_low_pct: -81.81, ci_high_pct: -80.13, significant: true, ...overrides};
}

test('signed values carry an explicit sign, zero none', () => {
  assert.equal(formatSignedPct(-80.97), `${MINUS}81%`);
  assert.equal(formatSignedPct(12.34), '+12.3%');
  assert.equal(formatSignedPct(0.01), '0%');
  assert.equal(formatSignedMs(-5.88), `${MINUS}5.88\u00a0ms`);
  assert.equal(formatSignedMs(0.25), '+250\u00a0µs');
  assert.equal(formatSignedUs(-1500), `${MINUS}1.5\u00a0ms`);
  assert.equal(formatPoints(63.42), '+63.4 pts');
  assert.equal(formatPoints(-0.04), '0 pts');
  assert.equal(formatSignedPct(null), '\u2014');
  assert.equal(arrow(14.95, 78.37, (v) => `${v}%`), '14.95% \u2192 78.37%');
});

test('a difference reads as its change and interval, or says the noise is unknown', () => {
  assert.equal(intervalText(difference()), `${MINUS}81.8% to ${MINUS}80.1%`);
  assert.equal(differenceText(difference()), `${MINUS}81% (95% CI ${MINUS}81.8% to ${MINUS}80.1%)`);
  const single = difference({ci_low: null, ci_high: null, ci_low_pct: null, ci_high_pct: null, significant: false});
  assert.equal(intervalText(single), null);
  assert.equal(differenceText(single), `${MINUS}81% (noise unknown)`);
  assert.equal(differenceText(null), 'not available');
});

test('a difference of percentages reads in points', () => {
  assert.equal(pointsDifferenceText({delta: 63.41, ci_low: 63.24, ci_high: 63.57}), '+63.4 pts (95% CI +63.2 to +63.6 pts)');
  assert.equal(pointsDifferenceText({delta: -2, ci_low: null, ci_high: null}), `${MINUS}2 pts (noise unknown)`);
  assert.equal(pointsDifferenceText(null), 'not available');
});

test('the speedup ratio is worded by the change', () => {
  assert.equal(ratioText({change: 'faster', speedup: 5.2555}), '5.26× faster');
  assert.equal(ratioText({change: 'slower', speedup: 0.8}), '1.25× slower');
  assert.equal(ratioText({change: 'within_noise', speedup: 1.001}), null);
  assert.equal(ratioText({change: 'unknown', speedup: null}), null);
});

test('the noise statement follows the change and the interval', () => {
  const faster = {change: 'faster', step_time_ms: {mean: difference()}};
  assert.equal(noiseStatement(faster),
    `Beyond noise: the 95% confidence interval of the mean step-time change (${MINUS}81.8% to ${MINUS}80.1%) excludes zero.`);
  const noise = {change: 'within_noise', step_time_ms: {mean: difference({delta_pct: 0.4, ci_low_pct: -1.2,
    ci_high_pct: 2.0, significant: false})}};
  assert.equal(noiseStatement(noise),
    `Within noise: the 95% confidence interval of the mean step-time change (${MINUS}1.2% to +2%) includes zero.`);
  const tiny = {change: 'within_noise', step_time_ms: {mean: difference({delta_pct: 0.6, ci_low_pct: 0.2,
    ci_high_pct: 1.0, significant: true})}};
  assert.equal(noiseStatement(tiny), 'Within noise: the mean step time moved +0.6%, less than 1% of the baseline.');
  const single = {change: 'faster', step_time_ms: {mean: difference({ci_low_pct: null, ci_high_pct: null})}};
  assert.match(noiseStatement(single), /^Noise unknown: a side has a single step/);
  assert.equal(noiseStatement({change: 'unknown', step_time_ms: {mean: null}}),
    'Step times cannot be compared: a side has no step markers.');
  const zero = {change: 'unknown', step_time_ms: {mean: null, baseline: {count: 20}, candidate: {count: 20}}};
  assert.match(noiseStatement(zero), /a side's steps last 0 ms as reported/);
});

test('with different work per step, the badge and the noise sentence judge the time per example, as the verdict', () => {
  // Per step the candidate is 1.6x slower, but it does 2x the examples: per example it is 1.25x faster.
  const comparison = {change: 'slower', speedup: 0.625,
    step_time_ms: {mean: difference({baseline: 10, candidate: 16, delta_pct: 60, ci_low_pct: 55, ci_high_pct: 65})},
    per_example: {work_ratio: 2, change: 'faster', speedup: 1.25,
      time_ms: difference({baseline: 10, candidate: 8, delta_pct: -20, ci_low_pct: -23, ci_high_pct: -17})}};
  assert.equal(headline(comparison).basis, 'per_example');
  assert.equal(badgeText(comparison), '1.25× faster per example');
  assert.doesNotMatch(badgeText(comparison), /slower/);
  assert.equal(noiseStatement(comparison),
    `Beyond noise: the 95% confidence interval of the mean time-per-example change (${MINUS}23% to ${MINUS}17%) excludes zero.`);
  const same = {change: 'faster', speedup: 5.2555, step_time_ms: {mean: difference()}, per_example: null};
  assert.equal(headline(same).basis, 'per_step');
  assert.equal(badgeText(same), '5.26× faster per step');
  assert.equal(badgeText({...same, change: 'within_noise'}), 'Within noise (per step)');
  assert.equal(badgeText({change: 'unknown', speedup: null}), 'Not comparable');
  assert.equal(badgeText({...comparison, per_example: {...comparison.per_example, change: 'within_noise'}}),
    'Within noise (per example)');
});

function breakdownRow(category, basePct, candPct, perStep) {
  return {category, label: category, baseline_pct: basePct, candidate_pct: candPct,
    delta_pct_points: candPct - basePct, per_step_ms: perStep};
}

test('breakdown deltas keep used categories, per step in ms, else in points', () => {
  const rows = [
    breakdownRow('compute_16bit', 0, 0, {baseline: 0, candidate: 0, delta: 0, ci_low: 0, ci_high: 0}),
    breakdownRow('compute_32bit', 15, 78, {baseline: 1.09, candidate: 1.08, delta: -0.01, ci_low: -0.02, ci_high: 0.01}),
    breakdownRow('input_wait', 83, 11, {baseline: 6.03, candidate: 0.15, delta: -5.88, ci_low: -5.9, ci_high: -5.8}),
  ];
  const perStep = breakdownDeltas(rows, {input_wait: 'Input wait'});
  assert.equal(perStep.unit, 'ms');
  assert.deepEqual(perStep.rows.map((r) => [r.key, r.label, r.delta, r.low, r.high]),
    [['compute_32bit', 'compute_32bit', -0.01, -0.02, 0.01], ['input_wait', 'Input wait', -5.88, -5.9, -5.8]]);
  const noSteps = breakdownDeltas(rows.map((row) => ({...row, per_step_ms: null})));
  assert.equal(noSteps.unit, 'points');
  assert.deepEqual(noSteps.rows.map((r) => [r.key, r.delta, r.low]), [['compute_32bit', 63, null], ['input_wait', -72, null]]);
  assert.deepEqual(breakdownDeltas(undefined), {unit: 'points', rows: []});
});

test('the diverging layout puts zero in the middle and covers every interval', () => {
  const layout = divergingLayout([{delta: -5.88, low: -5.94, high: -5.82}, {delta: 1.2, low: 0.5, high: 1.9}], 100, 400);
  assert.equal(layout.extent, 10);
  assert.equal(layout.zero, 300);
  assert.deepEqual(layout.ticks.map((t) => [t.value, t.x]), [[-10, 100], [-5, 200], [0, 300], [5, 400], [10, 500]]);
  const [fell, grew] = layout.bars;
  assert.ok(Math.abs(fell.x - (300 - 117.6)) < 1e-9 && Math.abs(fell.width - 117.6) < 1e-9);
  assert.ok(Math.abs(fell.ci[0] - (300 - 118.8)) < 1e-9 && fell.ci[0] < fell.ci[1]);
  assert.ok(grew.x === 300 && Math.abs(grew.width - 24) < 1e-9 && Math.abs(grew.ci[1] - 338) < 1e-9);
  const flat = divergingLayout([{delta: 0, low: null, high: null}], 0, 100);
  assert.equal(flat.extent, 1);
  assert.deepEqual([flat.bars[0].width, flat.bars[0].ci], [0, null]);
});

test('kernel changes merge the kinds, largest absolute change first', () => {
  const kernels = {
    new: [{name: 'custom', delta_us: 5}],
    fused: [{name: 'fused_1', delta_us: 160}, {name: 'fused_0', delta_us: 160}],
    gone: [{name: 'elementwise', delta_us: -600}],
    faster: [],
    slower: [{name: 'gemm', delta_us: 20}],
  };
  assert.deepEqual(kernelChanges(kernels).map((r) => [r.kind, r.name]),
    [['gone', 'elementwise'], ['fused', 'fused_0'], ['fused', 'fused_1'], ['slower', 'gemm'], ['new', 'custom']]);
  assert.deepEqual(kernelChanges(kernels, 'fused').map((r) => r.name), ['fused_0', 'fused_1']);
  assert.deepEqual(kernelChanges(kernels, 'slower').map((r) => r.name), ['gemm']);
  assert.deepEqual(kernelChanges({}, 'all'), []);
});

test('the baseline host defaults to the same name, else the first', () => {
  assert.equal(defaultBaselineHost(['worker0', 'worker1'], 'worker1'), 'worker1');
  assert.equal(defaultBaselineHost(['localhost'], 'worker1'), 'localhost');
});

test('measured speedups say their direction and interval', () => {
  assert.equal(speedChangeText(2.1666), '2.17\u00d7 faster');
  assert.equal(speedChangeText(0.29), '3.45\u00d7 slower');
  assert.equal(speedChangeText(1.001), 'same speed');
  assert.equal(measuredText({value: 2, low: 1.9, high: 2.1}), '2.00\u00d7 faster (95% CI 1.90\u00d7 to 2.10\u00d7)');
  assert.equal(measuredText({value: 2, low: null, high: null}), '2.00\u00d7 faster (noise unknown)');
  assert.equal(measuredText(null), '\u2014');
});

test('the per-example tile names what measured the work per step', async () => {
  const {perExampleBasis} = await import('../../tb_gpu_advisor/static/views/comparison.js');
  assert.equal(perExampleBasis({work_ratio: 2, examples_per_step: {baseline: 32, candidate: 64, scope: 'global'}}),
    'examples per step 32 \u2192 64, from the input tensors');
  assert.equal(perExampleBasis({work_ratio: 2, examples_per_step: {baseline: 8, candidate: 16, scope: 'per_device'}}),
    'examples per step per device 8 \u2192 16, from the input tensors');
  assert.equal(perExampleBasis({work_ratio: 2, examples_per_step: null}), 'the candidate does 2.00\u00d7 the work per step');
});

test('a category at 0% on both sides is not a row of the breakdown change', () => {
  const rows = [
    breakdownRow('launch', 0.3, 0.4, {baseline: 0.05, candidate: 0.25, delta: 0.2, ci_low: 0.1, ci_high: 0.3}),
    breakdownRow('h2d', 29.7, 75.3, {baseline: 4.85, candidate: 37.53, delta: 32.68, ci_low: 32, ci_high: 33}),
    breakdownRow('d2d', 1.2, 0.2, {baseline: 0.2, candidate: 0.1, delta: -0.0019, ci_low: -0.01, ci_high: 0.01}),
  ];
  assert.deepEqual(breakdownDeltas(rows).rows.map((r) => r.key), ['h2d', 'd2d']);
});

test('every number of the breakdown change reads in the unit of its axis', () => {
  const format = signedMsIn(50);
  assert.deepEqual([32.7, -0.025, -0.000551, 0, -0.0000881].map(format),
    ['+32.7\u00a0ms', `${MINUS}0.025\u00a0ms`, `${MINUS}0.001\u00a0ms`, '0\u00a0ms', '\u00b10\u00a0ms']);
  assert.equal(signedMsIn(0.5)(-0.025), `${MINUS}25\u00a0µs`);
  assert.equal(format(null), '\u2014');
});

test('the per-example tile shows the per-step change and what measured the work, so its figure can be followed', async () => {
  const {perExampleHint} = await import('../../tb_gpu_advisor/static/views/comparison.js');
  // torch/transfer_pageable -> transfer_pinned: 3.05x per step, 1.21x the kernel launches per step, 3.69x per example
  const comparison = {speedup: 3.053, per_example: {work_ratio: 1.2105, speedup: 3.69, source: 'kernel_launches_per_step',
    examples_per_step: null}};
  assert.equal(perExampleHint(comparison), 'per step 3.05\u00d7 faster; the candidate does 1.21\u00d7 the work per ' +
    'step (by its kernel launches per step)');
});

test('the per-step busy change gives its own levels and says it is not the title\u2019s figure (issue 31 C1)', async () => {
  const {stepBusyText} = await import('../../tb_gpu_advisor/static/views/comparison.js');
  const text = stepBusyText({baseline: 99.9, candidate: 99.9, delta: 0, ci_low: 0, ci_high: 0});
  assert.match(text, /^GPU busy in a step \(any GPU\), mean over the steps: 99\.9% \u2192 99\.9%, /);
  assert.match(text, /another measure than the title\u2019s/);
});
