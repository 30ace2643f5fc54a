/**
 * The roofline card: achieved TFLOP/s against FLOPs per logical byte, one dot per costed kernel row (area by time),
 * under the device's matrix, vector and HBM roofs.
 */

import {h, s, tooltip} from '../dom.js';
import {textWidth} from '../axis.js';
import {decades, logScale, rooflineGeometry} from '../charts.js';
import {deviceName, formatPct, formatUs, shortKernelName} from '../format.js';
import {section} from './common.js';

const W = 720;
const H = 300;
const M = {left: 56, right: 12, top: 10, bottom: 40};

function compact(value) {
  return value >= 1 ? value.toLocaleString('en-US', {maximumFractionDigits: 0}) : String(Number(value.toPrecision(1)));
}

/** The device whose roofs are drawn: the first one with kernels and known peaks. */
export function rooflineDevice(report) {
  return (report.devices || []).find((d) => d.kernel_count > 0 && d.peak_tflops > 0 && d.peak_gbps > 0) || null;
}

/** Kernel rows that can be placed: positive intensity and achieved TFLOP/s. */
export function rooflinePoints(report) {
  return (report.kernels || []).filter((k) => k.arithmetic_intensity > 0 && k.achieved_tflops > 0)
    .map((k) => ({x: k.arithmetic_intensity, y: k.achieved_tflops, weight: k.total_us || 0, row: k}));
}

/** 'middle', unless the label centred on `x` would stick out of the chart: then it ends (or starts) at `x`. */
function anchorInside(x, label) {
  const half = textWidth(label) / 2;
  return x + half > W ? 'end' : x - half < 0 ? 'start' : 'middle';
}

function chart(device, points) {
  const roofs = [{label: 'matrix 16-bit', tflops: device.peak_tflops}];
  if (device.peak_vector_tflops > 0) roofs.push({label: 'vector fp32', tflops: device.peak_vector_tflops});
  const geometry = rooflineGeometry(points, roofs, device.peak_gbps);
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const sx = logScale(geometry.x[0], geometry.x[1], plotW);
  const sy = logScale(geometry.y[0], geometry.y[1], plotH);
  const X = (v) => M.left + sx(v);
  const Y = (v) => M.top + plotH - sy(v);
  const heaviest = Math.max(...points.map((p) => p.weight), 1);
  const top = Math.max(...roofs.map((r) => r.tflops));
  return s('svg', {class: 'chart roofline', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'Roofline'},
    decades(...geometry.x).map((v) => s('g', {class: 'tick'},
      s('line', {x1: X(v), x2: X(v), y1: M.top, y2: M.top + plotH}),
      s('text', {x: X(v), y: M.top + plotH + 14, 'text-anchor': anchorInside(X(v), compact(v))}, compact(v)))),
    decades(...geometry.y).map((v) => s('g', {class: 'tick'},
      s('line', {x1: M.left, x2: W - M.right, y1: Y(v), y2: Y(v)}),
      s('text', {x: M.left - 6, y: Y(v) + 4, 'text-anchor': 'end'}, compact(v)))),
    s('text', {class: 'axis-title', x: M.left + plotW / 2, y: H - 4, 'text-anchor': 'middle'},
      'FLOPs per logical byte'),
    s('text', {class: 'axis-title', x: 12, y: M.top + plotH / 2, 'text-anchor': 'middle',
      transform: `rotate(-90 12 ${M.top + plotH / 2})`}, 'TFLOP/s'),
    s('line', {class: 'roof', x1: X(geometry.memory[0][0]), y1: Y(geometry.memory[0][1]),
      x2: X(geometry.memory[1][0]), y2: Y(geometry.memory[1][1])}, tooltip(`HBM roof: ${device.peak_gbps} GB/s`)),
    geometry.roofs.map((roof) => s('line', {class: roof.tflops === top ? 'roof' : 'roof secondary',
      x1: X(roof.ridge), y1: Y(roof.tflops), x2: W - M.right, y2: Y(roof.tflops)},
    tooltip(`${roof.label} roof: ${roof.tflops} TFLOP/s`))),
    points.slice().sort((a, b) => b.weight - a.weight).map((p) => s('circle', {class: `roof-dot bound-${dotBound(p)}`,
      cx: X(p.x), cy: Y(p.y), r: 3 + 11 * Math.sqrt(p.weight / heaviest)},
    tooltip(`${shortKernelName(p.row.name)}: ${p.y.toPrecision(3)} TFLOP/s at ${p.x.toPrecision(3)} FLOP/B, ` +
      `${formatPct(p.row.peak_pct)} of its ${p.row.bound || ''} roof, ${formatUs(p.row.total_us)} total`))),
    // the roofs' labels over the dots, never under them
    geometry.roofs.map((roof) => s('text', {class: 'roof-label', x: W - M.right - 4, y: Y(roof.tflops) - 5,
      'text-anchor': 'end'}, `${roof.label} ${roof.tflops} TFLOP/s`)));
}

const BOUNDS = {compute: 'compute-bound (under a FLOP/s roof)', memory: 'memory-bound (under the HBM roof)',
  unknown: 'bound not known'};

function dotBound(point) {
  return point.row.bound in BOUNDS ? point.row.bound : 'unknown';
}

/** The legend of the dots' colors: one entry per bound the chart draws, in the colors it draws them. */
export function boundLegend(points) {
  const drawn = new Set(points.map(dotBound));
  return h('ul', {class: 'legend', 'data-testid': 'roofline-legend'}, Object.keys(BOUNDS).filter((key) =>
    drawn.has(key)).map((key) => h('li', {'data-bound': key}, h('span', {class: ['swatch', `bound-${key}`]}),
    BOUNDS[key])));
}

/** Where the roofs come from; the HBM roof's source says when the trace's figure was corrected (ROCm). */
export function roofCaption(device) {
  return `roofs are upper bounds at boost clock (${device.peak_source}; HBM ${device.peak_gbps} GB/s: ` +
    `${device.peak_gbps_source || 'source unknown'})`;
}

/**
 * Why the roofline cannot be drawn, and what capture gives it, as a sentence; null when it can. The roofs need the
 * GPU's peaks; the dots need kernels with FLOPs and bytes, which come from XLA's HLO in the profile (JAX, or
 * TensorFlow with XLA), a few TensorFlow ops costed from their shapes, or PyTorch ops recorded with their shapes.
 */
export function rooflineMissing(report) {
  const withKernels = (report.devices || []).filter((d) => d.kernel_count > 0);
  if (!withKernels.length) return 'No GPU kernel ran in this profile, so there is nothing to place on a roofline.';
  if (!rooflineDevice(report)) {
    const model = withKernels.map((d) => d.model_name || d.name).find(Boolean) || 'this GPU';
    return `No roofline: the advisor does not know the peak FLOP/s and memory bandwidth of ${model}, so it ` +
      'cannot draw its roofs.';
  }
  if (rooflinePoints(report).length) return null;
  const none = 'No roofline: no kernel of this profile has known FLOPs and bytes';
  if (report.summary?.framework === 'pytorch') {
    return `${none}. PyTorch kernels get them from the ops that launch them (matrix multiplies and attention, ` +
      'from their input shapes): capture with torch.profiler.profile(record_shapes=True, with_flops=True).';
  }
  const jax = report.summary?.framework === 'jax';
  if (jax || report.configuration?.xla === true) {
    // XLA is already on: advice to use JAX or XLA would be false here; say which capture carries the programs.
    const capture = jax ? 'jax.profiler.trace(log_dir) (or jax.profiler.start_trace)' :
      'tf.profiler.experimental.start(log_dir) (or the TensorBoard callback)';
    return `${none}. ${jax ? 'JAX compiles with XLA' : 'XLA is on in this run'}, so they come from the XLA ` +
      'programs (HLO) the profiler writes into the .xplane.pb beside the kernels; this profile holds none that ' +
      `cost these kernels. Open the .xplane.pb written by ${capture} itself: a trace converted to another ` +
      'format (trace.json, Perfetto) drops the programs.';
  }
  return `${none} (they come from the XLA programs (HLO) a profile records, or, without XLA, from a few ` +
    'TensorFlow ops\' shapes; none here costs these kernels). It appears on profiles of XLA-compiled programs: ' +
    'JAX, or TensorFlow with XLA on (tf.function(jit_compile=True)), captured with jax.profiler or tf.profiler.';
}

/** The roofline card of a HostReport; without kernels to place, says why and what capture gives them. */
export function rooflineView(report) {
  const device = rooflineDevice(report);
  const points = rooflinePoints(report);
  if (!device || points.length === 0) {
    return section('Roofline', {id: 'roofline', wide: true},
      h('p', {class: 'empty', 'data-testid': 'roofline-missing'}, rooflineMissing(report)));
  }
  const summary = report.summary || {};
  const facts = h('p', {class: 'facts'},
    Number.isFinite(summary.flops_utilization_pct) ?
      `${formatPct(summary.flops_utilization_pct)} of the ${device.peak_tflops} TFLOP/s peak used over the window · ` +
      `${formatPct(summary.costed_kernel_time_pct)} of kernel time costed · ` : '',
    roofCaption(device));
  return section('Roofline', {id: 'roofline', subtitle: `${deviceName(device.name, report.trace_format)}: one dot per kernel row, area by time`,
    wide: true}, facts, chart(device, points), boundLegend(points));
}
