// Unit tests of the tab's pure formatting helpers (run by tests/plugin/test_js_helpers.py with node --test).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {
  binLabels, formatBytes, formatCount, formatGbps, formatMs, formatPct, formatSpeedup, formatUs, formatValue,
  humanizeKey, kernelDetail, shortKernelName, BOTTLENECK_LABELS, BREAKDOWN_LABELS, TRANSFER_LABELS, bindUnits,
  counted, matrixUnitLabels,
} from '../../tb_gpu_advisor/static/format.js';
import {VOCABULARY} from '../../tb_gpu_advisor/static/vocabulary.js';

test('durations pick a readable unit', () => {
  assert.equal(formatMs(0), '0\u00a0ms');
  assert.equal(formatMs(0.42), '420\u00a0µs');
  assert.equal(formatMs(0.0042), '4.2\u00a0µs');
  assert.equal(formatMs(2.345), '2.35\u00a0ms');
  assert.equal(formatMs(21.310352), '21.3\u00a0ms');
  assert.equal(formatMs(1234), '1.23\u00a0s');
  assert.equal(formatUs(250), '250\u00a0µs');
  assert.equal(formatUs(7908.309), '7.91\u00a0ms');
  assert.equal(formatMs(null), '\u2014');
  assert.equal(formatMs(NaN), '\u2014');
});

test('percentages, counts, bytes and rates', () => {
  assert.equal(formatPct(72.394), '72.4%');
  assert.equal(formatPct(50, 0), '50%');
  assert.equal(formatPct(undefined), '\u2014');
  assert.equal(formatCount(1330), '1,330');
  assert.equal(formatBytes(0), '0\u00a0B');
  assert.equal(formatBytes(393216), '384\u00a0KiB');
  assert.equal(formatBytes(4 << 20), '4\u00a0MiB');
  assert.equal(formatBytes(81118), '79.2\u00a0KiB');
  assert.equal(formatGbps(0.206), '0.21\u00a0GB/s');
  assert.equal(formatGbps(13.1072), '13.1\u00a0GB/s');
});

test('speedup is the step-time ratio, stated as an upper bound', () => {
  assert.equal(formatSpeedup(1.8), 'up to 1.8\u00d7 faster');
  assert.equal(formatSpeedup(2.456), 'up to 2.46\u00d7 faster');
  assert.equal(formatSpeedup(null), null);
  assert.equal(formatSpeedup(1.32, 'model'), 'about 1.32\u00d7 faster');
  assert.equal(formatSpeedup(3.5, 'bound'), 'up to 3.5\u00d7 faster');
  // the cap (99% of the step recoverable at most) is where the number stops, never its value
  assert.equal(formatSpeedup(100, 'model'), 'over 100\u00d7 faster');
  assert.equal(formatSpeedup(100, 'bound'), 'up to 100\u00d7 faster or more');
});

test('kernel names: templates collapsed, arguments dropped, long names cut', () => {
  assert.equal(shortKernelName('void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<float>, long>(int)'),
    'Eigen::internal::EigenMetaKernel<\u2026>');
  assert.equal(shortKernelName('ampere_sgemm_128x64_tn'), 'ampere_sgemm_128x64_tn');
  // "(anonymous namespace)" is part of the qualified name, not the parameter list.
  assert.equal(shortKernelName('void tensorflow::(anonymous namespace)::GenerateNormalizedProb<float, float, 4>(float const*, float*, int)'),
    'tensorflow::(anonymous namespace)::GenerateNormalizedProb<\u2026>');
  assert.equal(shortKernelName('<img src=x onerror=alert(1)>_kernel'), '<\u2026>_kernel');
  assert.equal(shortKernelName('a'.repeat(100), 10), `${'a'.repeat(9)}\u2026`);
  assert.equal(shortKernelName(''), '\u2014');
});

test('kernel detail tells Eigen kernels apart by their template arguments', () => {
  const conversion = 'void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<' +
    'Eigen::TensorMap<Eigen::Tensor<Eigen::half, 1, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorConversionOp<' +
    'Eigen::half, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, long>, 16, Eigen::MakePointer> const> const> ' +
    'const, Eigen::GpuDevice>, long>(Eigen::TensorEvaluator<int>, long)';
  assert.equal(kernelDetail(conversion), 'TensorConversionOp');
  assert.equal(kernelDetail('ampere_sgemm_128x64_tn'), '');
  assert.equal(kernelDetail('void f(std::vector<int>)'), '');
});

test('evidence keys and values read as text', () => {
  assert.equal(humanizeKey('input_wait_pct'), 'Input wait (%)');
  assert.equal(humanizeKey('step_time_ms'), 'Step time (ms)');
  assert.equal(humanizeKey('kernel_count'), 'Kernel count');
  assert.equal(humanizeKey('gpu_busy_pct'), 'GPU busy (%)');
  assert.equal(humanizeKey('tf_data_stages'), 'tf.data stages');
  assert.equal(humanizeKey('h2d_time_us'), 'Host\u2192device time (\u00b5s)');
  assert.equal(humanizeKey('threshold'), 'Threshold');
  assert.equal(formatValue(12.34567), '12.346');
  assert.equal(formatValue(0.123456), '0.1235');
  assert.equal(formatValue([1, 2, 3]), '1, 2, 3');
  assert.equal(formatValue({a: 1, b: 'x'}), 'a: 1; b: x');
  assert.equal(formatValue(true), 'yes');
  assert.equal(formatValue(Array.from({length: 10}, (_, i) => i)), '0, 1, 2, 3, 4, 5, 6, 7, … (10 in all)');
});

test('latency histogram labels', () => {
  assert.deepEqual(binLabels([0, 5, 10, 500, 1000, 2000, null]),
    ['0–5µs', '5–10µs', '10–500µs', '500µs–1ms', '1–2ms', '≥2ms']);
});

test('analysis progress shows the fraction when the server knows it', async () => {
  const {analysisProgress} = await import('../../tb_gpu_advisor/static/format.js');
  assert.equal(analysisProgress({state: 'running', progress: 0.423, elapsed_s: 3}), '42% · 3\u00a0s');
  assert.equal(analysisProgress({state: 'running', elapsed_s: 5}), '5\u00a0s');
  assert.equal(analysisProgress({progress: 1.7}), '100% · 0\u00a0s');
});

test('labels come from the vocabulary the CLI and the HTML report use', () => {
  assert.equal(BREAKDOWN_LABELS, VOCABULARY.breakdown);
  assert.equal(BOTTLENECK_LABELS, VOCABULARY.bottleneck);
  assert.equal(TRANSFER_LABELS, VOCABULARY.transfer);
  assert.equal(BREAKDOWN_LABELS.h2d, 'Host\u2192device copy');
});

test('a number keeps its unit on its line', () => {
  assert.equal(bindUnits('took 37.14 ms (40.7% of 5 steps) at 9 GB/s'), 'took 37.14\u00a0ms (40.7% of 5 steps) at 9\u00a0GB/s');
  assert.equal(bindUnits('3 steps, 2 sources'), '3 steps, 2 sources');
  assert.equal(bindUnits(null), null);
});

test('matrix units are named by the vendor of the GPUs that ran kernels', () => {
  assert.deepEqual(matrixUnitLabels([{vendor: 'AMD', kernel_count: 54}]), ['MC', 'Matrix cores']);
  assert.deepEqual(matrixUnitLabels([{vendor: 'NVIDIA', kernel_count: 9}, {vendor: 'AMD', kernel_count: 0}]),
    ['TC', 'Tensor Cores']);
  assert.deepEqual(matrixUnitLabels(undefined), ['TC', 'Tensor Cores']);
});

test('counts agree with their noun as the CLI writes them', () => {
  assert.equal(counted(1, 'copy', 'copies'), '1 copy');
  assert.equal(counted(3, 'copy', 'copies'), '3 copies');
  assert.equal(counted(8.0, 'time'), '8 times');
  assert.equal(counted(2.5, 'kernel'), '2.5 kernels');
  assert.equal(counted(1234, 'thread'), '1,234 threads');
});

test('the durations of one table read in one unit, the largest value\'s', async () => {
  const {durationUnit, tableMs, tableUs} = await import('../../tb_gpu_advisor/static/format.js');
  const us = tableUs([2430, 606.5, 12]);
  assert.deepEqual([us(2430), us(606.5), us(12), us(null)], ['2.43\u00a0ms', '0.607\u00a0ms', '0.012\u00a0ms', '\u2014']);
  const ms = tableMs([1500, 20]);
  assert.deepEqual([ms(1500), ms(20)], ['1.5\u00a0s', '0.02\u00a0s']);
  assert.equal(durationUnit([0.2, 0.5])[1], '\u00b5s');
  assert.equal(durationUnit([])[1], '\u00b5s');
});

test('a bandwidth that rounds to 0 but is not 0 never reads as 0 GB/s', () => {
  assert.equal(formatGbps(0.002), '<0.01\u00a0GB/s');  // 20 B of device-to-host copies in 10 µs
  assert.equal(formatGbps(0), '0\u00a0GB/s');
  assert.equal(formatGbps(null), '\u2014');
});

test('a GPU is named as its framework names it: cuda:N in a PyTorch (Kineto) trace, GPU:N otherwise', async () => {
  const {deviceName} = await import('../../tb_gpu_advisor/static/format.js');
  assert.equal(deviceName('/device:GPU:2', 'kineto'), 'cuda:2');
  assert.equal(deviceName('/device:GPU:2', 'current'), 'GPU:2');
  assert.equal(deviceName('/device:GPU:2'), 'GPU:2');
  assert.equal(deviceName('/device:TPU:0', 'kineto'), 'TPU:0');
});

test('a speedup that reads 1x is no badge: "up to 1× faster" is no gain', () => {
  assert.equal(formatSpeedup(1.0, 'bound'), null);
  assert.equal(formatSpeedup(1.004, 'model'), null);
  assert.equal(formatSpeedup(1.01, 'model'), 'about 1.01\u00d7 faster');
});

test('the tab rounds as the text report does: an exact tie to the even digit (review issue 31 D4)', async () => {
  const {fixed} = await import('../../tb_gpu_advisor/static/format.js');
  // Python: format(27.25, '.1f') == '27.2', format(1.25, '.1f') == '1.2', format(63.25, '.1f') == '63.2'
  assert.equal(formatPct(27.25), '27.2%');
  assert.equal(formatPct(1.25), '1.2%');
  assert.equal(formatPct(6.25), '6.2%');
  assert.equal(fixed(27.35, 1), '27.4');  // 27.35 is 27.350000000000001 as a double: no tie, up as in Python
  assert.equal(fixed(0.35, 1), '0.3');  // 0.34999999999999998: down, as in Python
  assert.equal(fixed(3.5, 0), '4');
  assert.equal(fixed(2.5, 0), '2');
  assert.equal(fixed(-27.25, 1), '-27.2');
  assert.equal(fixed(27.26, 1), '27.3');
});
