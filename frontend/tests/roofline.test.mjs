// Unit tests of the roofline card's data selection (run by tests/plugin/test_js_helpers.py with node --test).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {roofCaption, rooflineDevice, rooflineMissing, rooflinePoints} from '../../tb_gpu_advisor/static/views/roofline.js';

test('the roofs are those of the first device with kernels and known peaks', () => {
  const report = {devices: [
    {name: '/device:GPU:0', kernel_count: 0, peak_tflops: 312, peak_gbps: 2039},
    {name: '/device:GPU:1', kernel_count: 5, peak_tflops: null, peak_gbps: 2039},
    {name: '/device:GPU:2', kernel_count: 5, peak_tflops: 312, peak_gbps: 2039}]};
  assert.equal(rooflineDevice(report).name, '/device:GPU:2');
  assert.equal(rooflineDevice({devices: []}), null);
});

test('only rows with a positive intensity and rate are placed, weighted by total time', () => {
  const report = {kernels: [
    {name: 'gemm', arithmetic_intensity: 2048, achieved_tflops: 900, total_us: 1833},
    {name: 'copy', arithmetic_intensity: 0, achieved_tflops: 0, total_us: 27},
    {name: 'nccl', arithmetic_intensity: null, achieved_tflops: null, total_us: 60}]};
  const points = rooflinePoints(report);
  assert.deepEqual(points.map((p) => [p.row.name, p.x, p.y, p.weight]), [['gemm', 2048, 900, 1833]]);
});

test('the caption shows the HBM roof the chart uses and says when the trace figure was corrected', () => {
  const device = {peak_source: 'gfx942: 2048 FLOP/clock per SM (CU) x 304 x 2100 MHz', peak_gbps: 5324.8,
    peak_gbps_source: "the trace's memory_bandwidth 2662.4 GB/s corrected x2: ROCm reports half the HBM peak"};
  assert.equal(roofCaption(device), 'roofs are upper bounds at boost clock (gfx942: 2048 FLOP/clock per SM (CU) x ' +
    "304 x 2100 MHz; HBM 5324.8 GB/s: the trace's memory_bandwidth 2662.4 GB/s corrected x2: ROCm reports half " +
    'the HBM peak)');
});

test('without a roofline the card says why and what capture gives one', () => {
  const device = {name: '/device:GPU:0', model_name: 'NVIDIA A100-SXM4-80GB', kernel_count: 5, peak_tflops: 312,
    peak_gbps: 2039};
  const uncosted = {kernels: [{name: 'volta_sgemm', arithmetic_intensity: null, achieved_tflops: null, total_us: 9}]};
  const tf = rooflineMissing({devices: [device], ...uncosted, summary: {framework: 'tensorflow'}});
  assert.match(tf, /^No roofline: no kernel of this profile has known FLOPs and bytes/);
  assert.match(tf, /jit_compile=True/);
  const torch = rooflineMissing({devices: [device], ...uncosted, summary: {framework: 'pytorch'}});
  assert.match(torch, /record_shapes=True, with_flops=True/);
  assert.match(rooflineMissing({devices: [{...device, peak_tflops: null}], ...uncosted}),
    /does not know the peak FLOP\/s and memory bandwidth of NVIDIA A100-SXM4-80GB/);
  assert.match(rooflineMissing({devices: [], kernels: []}), /^No GPU kernel ran/);
  assert.equal(rooflineMissing({devices: [device],
    kernels: [{name: 'gemm', arithmetic_intensity: 2048, achieved_tflops: 900, total_us: 1}]}), null);
});

test('a JAX or XLA-on run without costs is told which capture carries them, never to use JAX or XLA', () => {
  // Review issue 31 D7/D11: "It appears on profiles of XLA-compiled programs: JAX, or TensorFlow with XLA on" on
  // runs whose header says jax and whose Configuration says "XLA on".
  const device = {name: '/device:GPU:0', model_name: 'NVIDIA H100', kernel_count: 5, peak_tflops: 989, peak_gbps: 3350};
  const uncosted = {kernels: [{name: 'loop_add_fusion', arithmetic_intensity: null, achieved_tflops: null, total_us: 9}]};
  const jax = rooflineMissing({devices: [device], ...uncosted, summary: {framework: 'jax'}});
  const tfXla = rooflineMissing({devices: [device], ...uncosted, summary: {framework: 'tensorflow'},
    configuration: {xla: true}});
  for (const text of [jax, tfXla]) {
    assert.doesNotMatch(text, /It appears on profiles of XLA-compiled programs/);
    assert.doesNotMatch(text, /jit_compile=True/);
    assert.match(text, /\.xplane\.pb/);
  }
  assert.match(jax, /jax\.profiler\.trace/);
  assert.match(tfXla, /XLA is on in this run/);
  assert.match(tfXla, /tf\.profiler\.experimental\.start/);
});
