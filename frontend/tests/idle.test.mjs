// The idle-attribution card's rows (views/idle.js), from the report of the real A100 8-rank trace (one GPU, two
// of its six steps) and a report without a GPU.
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {causeLegend, idleRows, stepBars, stepCauses} from '../../tb_gpu_advisor/static/views/idle.js';
import {stepNumberLabel} from '../../tb_gpu_advisor/static/views/step_bars.js';

const CAUSES = ['device_wait', 'launch', 'copy_call', 'host_wait', 'input', 'host', 'host_untraced', 'unattributed'];
const REPORT = {idle_attribution: {causes: CAUSES, gpus: [{
  device: '/device:GPU:3', ordinal: 3, window_ms: 464.945, idle_ms: 76.3, idle_pct: 16.41, gaps: 5896,
  cause_ms: {device_wait: 7.9, launch: 13.0, copy_call: 1.4, host_wait: 2.3, input: 0.4, host: 51.1,
    host_untraced: 0.2, unattributed: 0.0},
  cause_pct: {device_wait: 1.7, launch: 2.8, copy_call: 0.3, host_wait: 0.5, input: 0.09, host: 11.0,
    host_untraced: 0.05, unattributed: 0.0},
  steps: [{step: 'ProfilerStep#1', idle_ms: 12.1, cause_ms: {launch: 2.0, host: 10.1}},
    {step: 'ProfilerStep#2', idle_ms: 13.0, cause_ms: {launch: 2.1, host: 10.4, input: 0.5}}],
}]}};

test('each GPU lists its causes largest first, without the zero ones, in the vocabulary\'s words', () => {
  const [row] = idleRows(REPORT);
  assert.equal(row.device, '/device:GPU:3');
  assert.equal(row.idlePct, 16.41);
  assert.deepEqual(row.causes.map((cause) => cause.key),
    ['host', 'launch', 'device_wait', 'host_wait', 'copy_call', 'input', 'host_untraced']);
  assert.equal(row.causes[0].label, 'Host busy (framework, Python)');
  assert.equal(row.causes[1].label, 'Waiting for a launch call');
});

test('the step table shows only the causes some step has, in the report\'s order', () => {
  const [row] = idleRows(REPORT);
  assert.deepEqual(stepCauses(CAUSES, row.steps), ['launch', 'input', 'host']);
});

test('a report without GPU activity or with bad data has no rows', () => {
  assert.deepEqual(idleRows({idle_attribution: null}), []);
  assert.deepEqual(idleRows({}), []);
  assert.deepEqual(idleRows({idle_attribution: {causes: CAUSES, gpus: [null, {device: 3}]}}), []);
});

test('the legend lists each cause with its share, never one that reads 0%', () => {
  const rows = idleRows(REPORT);
  const labels = causeLegend(rows, CAUSES).map((item) => item.label);
  // input (0.09%) reads 0.1%, host_untraced (0.05%) reads 0.1% too at one decimal; unattributed (0) is left out
  assert.ok(labels.includes('Host busy (framework, Python) 11%'));
  assert.ok(!labels.some((label) => label.startsWith('No host call found')));
  assert.ok(!labels.some((label) => /\s0(\.0)?%$/.test(label)));
  const second = {...REPORT.idle_attribution.gpus[0], device: '/device:GPU:4', cause_pct: {host: 5.0}};
  const two = idleRows({idle_attribution: {causes: CAUSES, gpus: [REPORT.idle_attribution.gpus[0], second]}});
  assert.ok(causeLegend(two, CAUSES).some((item) => item.label === 'Host busy (framework, Python) up to 11%'));
  const tiny = idleRows({idle_attribution: {causes: CAUSES, gpus: [{device: '/device:GPU:0', cause_pct: {host: 0.001}, cause_ms: {host: 0.01}}]}});
  assert.deepEqual(causeLegend(tiny, CAUSES), []);
});

test('the per-step chart has one bar per step, labelled by the step\'s number', () => {
  const [row] = idleRows(REPORT);
  const bars = stepBars(row);
  assert.deepEqual(bars.map((bar) => bar.label), ['1', '2']);
  assert.equal(bars[1].values.host, 10.4);
  assert.match(bars[0].title, /^GPU:3 step 1, idle 12\.1/);
  assert.equal(stepNumberLabel('train 101', 0), '101');
  assert.equal(stepNumberLabel('warmup', 3), 'warmup');
  assert.equal(stepNumberLabel(null, 3), '3');
  assert.equal(stepNumberLabel(7, 0), '7');
});

test('every cause the per-step chart draws is in the legend, a tiny one as "<0.1%"', () => {
  // demo healthy: ~30 µs of steps' idle by causes whose share of the window rounds to 0%
  const gpu = {device: '/device:GPU:0', cause_pct: {host: 0.12, launch: 0.004}, cause_ms: {host: 0.4, launch: 0.03},
    steps: [{step: 1, idle_ms: 0.1, cause_ms: {host: 0.07, launch: 0.03}}]};
  const rows = idleRows({idle_attribution: {causes: CAUSES, gpus: [gpu]}});
  const drawn = stepCauses(CAUSES, rows[0].steps);
  const labels = causeLegend(rows, CAUSES, drawn).map((item) => item.label);
  assert.deepEqual(labels, ['Waiting for a launch call <0.1%', 'Host busy (framework, Python) 0.1%']);
  assert.deepEqual(causeLegend(rows, CAUSES).map((item) => item.label), ['Host busy (framework, Python) 0.1%']);
});
