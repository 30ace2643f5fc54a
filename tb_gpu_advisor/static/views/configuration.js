/**
 * The configuration card: how the job ran, as the trace shows it (report.configuration), and what it does not say.
 */

import {h} from '../dom.js';
import {NO_MATMUL_PRECISION, counted, formatBytes, formatPct} from '../format.js';
import {VOCABULARY} from '../vocabulary.js';
import {section} from './common.js';

const NOT_IN_TRACE = VOCABULARY.notInTrace;
const VERSION_LABELS = {
  tensorflow_version: 'TensorFlow', jax_version: 'JAX', jaxlib_version: 'jaxlib', torch_version: 'PyTorch',
  cuda_runtime_version: 'CUDA runtime', cuda_version: 'CUDA', cuda_driver_version: 'CUDA driver',
  cudnn_version: 'cuDNN', nccl_version: 'NCCL', rocm_version: 'ROCm',
};
const ON_OFF = {true: 'on', false: 'off', null: 'unknown (no GPU kernel)'};
const COMPILED = {true: 'torch.compile (Triton kernels)', false: 'off (eager kernels)', null: 'unknown (no GPU kernel)'};

/** The global batch row, as the text report writes it (report/configuration_section.py batch_text). */
export function batchText(config) {
  const examples = config.examples_per_step || {};
  if (config.global_batch) return `${config.global_batch} (${examples.source || 'examples per step'})`;
  if (examples.value) {
    const scope = VOCABULARY.batchScope[examples.scope] || examples.scope;
    return `${NOT_IN_TRACE}; ${examples.value} examples per step ${scope} (${examples.source}; ${examples.reason})`;
  }
  return examples.reason ? `${NOT_IN_TRACE} (${examples.reason})` : NOT_IN_TRACE;
}

/** A GPU whose trace names no model: its vendor and architecture where the trace gives them. */
function gpuWithoutModel(arch) {
  if (arch && arch.startsWith('gfx')) return `AMD ${arch} (model not in the trace)`;
  if (arch && arch.startsWith('sm_')) return `NVIDIA ${arch} (model not in the trace)`;
  return 'GPU (model not in the trace)';
}

/** [label, value] rows of a report's configuration, in the order the text report lists them. */
export function configurationRows(config) {
  const versions = Object.entries(config.versions || {})
    .map(([key, value]) => `${VERSION_LABELS[key] || key.replace(/_version$/, '')} ${value}`).join(', ');
  const gpu = config.gpu || {};
  let gpus = 'none in the profile';
  if (gpu.count) {
    gpus = `${gpu.count} x ${gpu.model || gpuWithoutModel(gpu.arch)}`
      + (gpu.compute_capability ? `, cc ${gpu.compute_capability}` : '')
      + (gpu.memory_bytes ? `, ${formatBytes(gpu.memory_bytes)}` : '')
      + (gpu.active !== gpu.count ? ` (${gpu.active} active)` : '');
  }
  const shares = Object.entries(config.matmul_dtype_pct || {}).map(([dtype, pct]) => `${dtype} ${formatPct(pct)}`);
  const pools = Object.entries(config.thread_pools || {}).map(([kind, count]) => `${kind} ${counted(count, 'thread')}`)
    .join(', ');
  const rows = [
    ['Framework', config.framework],
    ['Versions', versions || NOT_IN_TRACE],
    ['GPUs', gpus],
    config.framework === 'pytorch' ? ['Compiler', COMPILED[config.xla]]
      : ['XLA', config.xla === true && !gpu.active ? (config.tpu_count ? 'on (TPU)' : 'on (CPU)') : ON_OFF[config.xla]],
    ['Precision', config.precision ? `${config.precision} (matmul/conv time: ${shares.join(', ')})`
      : NO_MATMUL_PRECISION],
    ['Distribution', config.distribution || 'none seen'],
    ['Global batch', batchText(config)],
    ['Thread pools', (config.gpu_thread_mode ? `TF_GPU_THREAD_MODE=${config.gpu_thread_mode}; ` : '') + pools
      || NOT_IN_TRACE],
    ['Host cores', config.host_cores ? String(config.host_cores) : (config.host_cores_seen?.text || NOT_IN_TRACE)],
  ];
  if (config.tpu_count) rows.splice(3, 0, ['TPUs', `${config.tpu_count} (XProf's TPU tools in the Profile tab analyze them)`]);
  if (config.tf_data_options?.length) rows.push(['tf.data', config.tf_data_options.join(', ')]);
  return rows;
}

/** The configuration card of a HostReport (none for reports without the section). */
export function configurationView(report) {
  if (!report.configuration) return null;
  return section('Configuration', {id: 'configuration', wide: true, subtitle: 'how this job ran, as the trace shows it'},
    h('div', {class: 'table-wrap'}, h('table', {class: 'configuration', 'data-testid': 'configuration'},
      h('tbody', {}, configurationRows(report.configuration).map(([label, value]) =>
        h('tr', {}, h('th', {scope: 'row'}, label), h('td', {}, value)))))));
}

/** The configuration changes card of a HostComparison (none when nothing the traces record changed). */
export function configurationChangesView(comparison) {
  const changes = comparison.configuration_changes || [];
  if (!changes.length) return null;
  return section('Configuration changes', {id: 'configuration-changes', wide: true,
    subtitle: 'what the two traces show changed in how the job ran'},
  h('ul', {class: 'notes', 'data-testid': 'configuration-changes'}, changes.map((change) => h('li', {}, change.text))));
}
