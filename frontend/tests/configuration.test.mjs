// The configuration card's rows (views/configuration.js), from a report's `configuration` section.
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {configurationRows} from '../../tb_gpu_advisor/static/views/configuration.js';

const CONFIG = {
  framework: 'tensorflow', versions: {cuda_runtime_version: '12.2', cudnn_version: '90100'},
  gpu: {model: 'NVIDIA A100-SXM4-80GB', count: 2, active: 1, compute_capability: '8.0', memory_bytes: null},
  xla: false, precision: 'mixed: bf16 + fp32', matmul_dtype_pct: {bf16: 60, fp32: 40}, distribution: null,
  global_batch: null, thread_pools: {tf_Compute: 4}, gpu_thread_mode: 'gpu_private', tf_data_options: ['prefetch'],
  host_cores: null,
};

test('configuration rows say what the trace records and what it does not', () => {
  const rows = Object.fromEntries(configurationRows(CONFIG));
  assert.equal(rows.Versions, 'CUDA runtime 12.2, cuDNN 90100');
  assert.equal(rows.GPUs, '2 x NVIDIA A100-SXM4-80GB, cc 8.0 (1 active)');
  assert.equal(rows.XLA, 'off');
  assert.equal(rows.Precision, 'mixed: bf16 + fp32 (matmul/conv time: bf16 60%, fp32 40%)');
  assert.equal(rows['Global batch'], 'not in the trace');
  assert.equal(rows['Thread pools'], 'TF_GPU_THREAD_MODE=gpu_private; tf_Compute 4 threads');
  assert.equal(rows['tf.data'], 'prefetch');
});

test('one thread is a thread, and no matmul kernel says so', () => {
  const rows = Object.fromEntries(configurationRows({...CONFIG, thread_pools: {python: 1, tf_Compute: 2},
    gpu_thread_mode: null, precision: null, matmul_dtype_pct: {}}));
  assert.equal(rows['Thread pools'], 'python 1 thread, tf_Compute 2 threads');
  assert.equal(rows.Precision, 'no matmul/conv kernel captured');
});

test('PyTorch runs show the compiler, not XLA', () => {
  const rows = Object.fromEntries(configurationRows({...CONFIG, framework: 'pytorch', xla: true, tf_data_options: []}));
  assert.equal(rows.Compiler, 'torch.compile');
  assert.ok(!('XLA' in rows) && !('tf.data' in rows));
});

test('the global batch row says where the batch comes from, per device, or why it is unknown', () => {
  const source = 'tf.data batch stage MapAndBatch, batch size 32, 1 batch per step';
  const known = {...CONFIG, global_batch: 32, examples_per_step: {value: 32, scope: 'global', source, reason: null}};
  assert.equal(Object.fromEntries(configurationRows(known))['Global batch'], `32 (${source})`);
  const perDevice = {...CONFIG, examples_per_step: {value: 8, scope: 'per_device', source: 'input batch',
    reason: '2 GPUs run the step program'}};
  assert.equal(Object.fromEntries(configurationRows(perDevice))['Global batch'],
    'not in the trace; 8 examples per step per device (input batch; 2 GPUs run the step program)');
  const unknown = {...CONFIG, examples_per_step: {value: null, scope: null, source: null, reason: 'no steps'}};
  assert.equal(Object.fromEntries(configurationRows(unknown))['Global batch'], 'not in the trace (no steps)');
});

test('XLA programs compiled for the CPU say so; no compiled program and no GPU kernel is unknown', () => {
  const cpu = {...CONFIG, framework: 'jax', gpu: {count: 0, active: 0}, xla: true};
  assert.equal(Object.fromEntries(configurationRows(cpu)).XLA, 'on (CPU)');
  assert.equal(Object.fromEntries(configurationRows({...CONFIG, xla: true})).XLA, 'on');
  assert.equal(Object.fromEntries(configurationRows({...cpu, xla: null})).XLA, 'unknown (no GPU kernel)');
});

test('TPU planes run XLA on the TPUs; a GPU without a model name goes by its architecture', () => {
  const tpu = {...CONFIG, framework: 'jax', gpu: {count: 0, active: 0}, xla: true, tpu_count: 4};
  const rows = Object.fromEntries(configurationRows(tpu));
  assert.equal(rows.XLA, 'on (TPU)');
  assert.ok(rows.TPUs.startsWith('4 '));
  const amd = {...CONFIG, gpu: {count: 8, active: 1, model: null, arch: 'gfx942', compute_capability: null}};
  assert.ok(Object.fromEntries(configurationRows(amd)).GPUs.startsWith('8 x AMD gfx942 (model not in the trace)'));
});

test('host cores: the metadata count, else what the thread pools say, else not in the trace', () => {
  assert.equal(Object.fromEntries(configurationRows({...CONFIG, host_cores: 32}))['Host cores'], '32');
  const seen = {count: 2, source: 'thread pools', text: 'at least 2 (not recorded; the most threads a core-sized pool shows)'};
  assert.equal(Object.fromEntries(configurationRows({...CONFIG, host_cores_seen: seen}))['Host cores'], seen.text);
  assert.equal(Object.fromEntries(configurationRows(CONFIG))['Host cores'], 'not in the trace');
});
