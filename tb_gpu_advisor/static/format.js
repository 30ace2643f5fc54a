/**
 * Pure formatting of the report's numbers for display (no DOM): durations, sizes, rates, names. Words and units
 * come from vocabulary.js (generated from tb_gpu_advisor/vocabulary.py, shared with the CLI and HTML report);
 * a number and its unit are joined by a non-breaking space, so a line never breaks between them.
 */

import {VOCABULARY} from './vocabulary.js';

const DASH = '\u2014';
const NB = VOCABULARY.nbsp;
const MICRO = VOCABULARY.micro;

function finite(value) {
  return typeof value === 'number' && Number.isFinite(value);
}

/**
 * `value` with `digits` decimals, rounded as the CLI and HTML report round (Python's format(value, '.1f'):
 * correctly rounded, an exact tie to the even digit), so one quantity never reads 27.3% in the tab and 27.2% in the
 * text report. toFixed alone rounds an exact tie (27.25, a JSON value with 2 decimals) up.
 */
export function fixed(value, digits = 0) {
  const text = value.toFixed(digits);
  const exact = Math.abs(value).toFixed(100);  // the double's whole decimal expansion (JS allows 100 digits)
  const point = exact.indexOf('.');
  const rest = exact.slice(point + 1 + digits);
  if (rest[0] !== '5' || rest.slice(1).replace(/0/g, '') !== '') return text;  // not an exact tie
  const kept = exact.slice(0, point + 1 + digits).replace(/\.$/, '');
  if (Number(kept[kept.length - 1]) % 2 === 0) {
    return `${value < 0 && Number(kept) !== 0 ? '-' : ''}${kept}`;  // the even digit stays: round down
  }
  return text;  // toFixed rounded the tie up, to the even digit
}

function trim(value, digits) {
  return Number(fixed(value, digits)).toLocaleString('en-US', {maximumFractionDigits: digits});
}

/** Milliseconds as a readable duration: 0.42 ms → "420 µs", 1234 ms → "1.23 s". */
export function formatMs(ms) {
  if (!finite(ms)) return DASH;
  const abs = Math.abs(ms);
  if (abs === 0) return `0${NB}ms`;
  if (abs < 0.001) return `${trim(ms * 1e6, 0)}${NB}ns`;
  if (abs < 1) return `${trim(ms * 1000, abs < 0.01 ? 2 : 1)}${NB}${MICRO}`;
  if (abs < 1000) return `${trim(ms, abs < 10 ? 2 : 1)}${NB}ms`;
  return `${trim(ms / 1000, 2)}${NB}s`;
}

const DURATION_UNITS = [[1000, 's'], [1, 'ms'], [1e-3, MICRO], [1e-6, 'ns']];

/**
 * One duration unit [ms per unit, name] for a set of durations in ms: the unit of the largest, so a table's
 * durations all read in one unit ("2.43 ms" and "0.31 ms", never "2.43 ms" and "310 µs").
 */
export function durationUnit(valuesMs) {
  const top = Math.max(0, ...valuesMs.filter(finite).map(Math.abs));
  return DURATION_UNITS.find(([size]) => top >= size) || DURATION_UNITS[2];
}

/** Milliseconds in a given durationUnit: three decimals below 1, two below 10, else one. */
export function formatMsIn(ms, [size, unit]) {
  if (!finite(ms)) return DASH;
  const value = ms / size;
  const abs = Math.abs(value);
  return `${trim(value, abs === 0 ? 0 : abs < 1 ? 3 : abs < 10 ? 2 : 1)}${NB}${unit}`;
}

/** A formatter of microseconds for the cells of one table, in the unit of its largest value. */
export function tableUs(valuesUs) {
  const unit = durationUnit(valuesUs.filter(finite).map((us) => us / 1000));
  return (us) => (finite(us) ? formatMsIn(us / 1000, unit) : DASH);
}

/** A formatter of milliseconds for the cells of one table, in the unit of its largest value. */
export function tableMs(valuesMs) {
  const unit = durationUnit(valuesMs);
  return (ms) => formatMsIn(ms, unit);
}

/** Microseconds as a readable duration. */
export function formatUs(us) {
  return finite(us) ? formatMs(us / 1000) : DASH;
}

/** A percentage with one decimal: 12.345 -> "12.3%". */
export function formatPct(pct, digits = 1) {
  return finite(pct) ? `${trim(pct, digits)}%` : DASH;
}

/** A count with thousands separators. */
/** A count and its noun, agreeing, as vocabulary.counted writes them: "1 thread", "4 threads", "2.5 kernels". */
export function counted(count, singular, plural) {
  const number = Math.round(count * 10) / 10 === Math.round(count) ? Math.round(count).toLocaleString('en-US')
    : count.toLocaleString('en-US', {minimumFractionDigits: 1, maximumFractionDigits: 1});
  return `${number} ${number === '1' ? singular : (plural || `${singular}s`)}`;
}

/** [short header, words] of the matrix units of a report's devices, as vocabulary.matrix_unit_labels says: AMD's
 * matrix cores when every GPU with kernels is AMD's, else NVIDIA's Tensor Cores. */
export function matrixUnitLabels(devices) {
  const vendors = new Set((Array.isArray(devices) ? devices : []).filter((d) => d?.kernel_count).map((d) => d.vendor));
  return VOCABULARY.matrixUnits[vendors.size === 1 && vendors.has('AMD') ? 'AMD' : 'NVIDIA'];
}

/** What the configuration says when no matmul/convolution kernel ran. */
export const NO_MATMUL_PRECISION = VOCABULARY.noMatmulPrecision;

export function formatCount(count) {
  return finite(count) ? Math.round(count).toLocaleString('en-US') : DASH;
}

/** Bytes in binary units: 393216 -> "384 KiB". */
export function formatBytes(bytes) {
  if (!finite(bytes)) return DASH;
  const units = VOCABULARY.byteUnits;
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${trim(value, unit === 0 ? 0 : value < 10 ? 2 : 1)}${NB}${units[unit]}`;
}

/** A bandwidth in GB/s (decimal, as the report). */
export function formatGbps(gbps) {
  if (!finite(gbps)) return DASH;
  // A rate that rounds to 0 but is not 0 (20 B in 10 µs) reads "<0.01 GB/s", never a bandwidth of 0.
  if (gbps > 0 && gbps < 0.005) return `<0.01${NB}GB/s`;
  return `${trim(gbps, gbps < 10 ? 2 : 1)}${NB}GB/s`;
}

/**
 * The step-time ratio of a finding, worded by its kind: a model (1.8, 'model') -> "about 1.8× faster",
 * a bound or an older report without the kind (1.8) -> "up to 1.8× faster"; null (no badge) for a ratio that
 * reads 1× (a gain under 0.5%): "up to 1× faster" is no speedup.
 */
export function formatSpeedup(ratio, kind) {
  if (!finite(ratio) || trim(ratio, 2) === '1') return null;
  const cap = VOCABULARY.speedupCap;
  if (ratio >= cap) return kind === 'model' ? `over ${cap}\u00d7 faster` : `up to ${cap}\u00d7 faster or more`;
  return `${kind === 'model' ? 'about' : 'up to'} ${trim(ratio, ratio < 10 ? 2 : 1)}\u00d7 faster`;
}

/** The tooltip of a finding's speedup: what kind of number it is. */
export function speedupKindTitle(kind) {
  return kind === 'model' ?
    'Model: the step time re-derived with the fix applied to this profile\u2019s own timeline' :
    'Upper bound: the step time if the recoverable time were removed';
}

/**
 * A kernel's display name: C++ templates collapsed, the function kept.
 * "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<float>, long>(int)" -> "Eigen::internal::EigenMetaKernel<…>"
 */
export function shortKernelName(name, maxChars = 80) {
  if (typeof name !== 'string' || name === '') return DASH;
  let text = name.replace(/^void\s+/, '');
  const paren = findTopLevel(text, '(');
  if (paren > 0) text = text.slice(0, paren);
  text = collapseTemplates(text);
  return text.length > maxChars ? shortenQualified(text, maxChars) : text;
}

/**
 * A name too long for `maxChars`, shortened from the left by whole namespace qualifiers ("a::b::f<…>" ->
 * "…::f<…>"), so what is kept is the function, never a bare namespace; cut at the end only when the last part
 * alone is too long.
 */
function shortenQualified(text, maxChars) {
  const parts = splitTopLevel(text, '::');
  for (let i = 1; i < parts.length; i += 1) {
    const tail = `\u2026::${parts.slice(i).join('::')}`;
    if (tail.length <= maxChars) return tail;
  }
  const last = parts.length > 1 ? `\u2026::${parts[parts.length - 1]}` : text;
  return last.length > maxChars ? `${last.slice(0, maxChars - 1)}\u2026` : last;
}

function splitTopLevel(text, separator) {
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '<' || c === '(') depth += 1;
    else if (c === '>' || c === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0 && text.startsWith(separator, i)) {
      parts.push(text.slice(start, i));
      start = i + separator.length;
      i += separator.length - 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

const ANONYMOUS = '(anonymous namespace)';

function findTopLevel(text, char) {
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '<') depth += 1;
    else if (c === '>') depth = Math.max(0, depth - 1);
    else if (depth === 0 && text.startsWith(ANONYMOUS, i)) i += ANONYMOUS.length - 1;  // part of the name
    else if (c === char && depth === 0) return i;
  }
  return -1;
}

function collapseTemplates(text) {
  let out = '';
  let depth = 0;
  for (const c of text) {
    if (c === '<') {
      if (depth === 0) out += '<\u2026>';
      depth += 1;
    } else if (c === '>') {
      depth = Math.max(0, depth - 1);
    } else if (depth === 0) {
      out += c;
    }
  }
  return out;
}

/** The words of a report key, as text: "gpu_busy" → "GPU busy", "tf_data_stages" → "tf.data stages". */
export function keyWords(key) {
  let text = `_${String(key)}_`;
  const words = Object.entries(VOCABULARY.keyWords).sort((a, b) => b[0].length - a[0].length);
  for (const [word, shown] of words) {
    text = text.split(`_${word}_`).join(`_${shown.replace(/ /g, '\u0000').replace(/_/g, '\u0001')}_`);
  }
  const label = text.replace(/_/g, ' ').replace(/\u0000/g, ' ').replace(/\u0001/g, '_').trim();
  return /^[a-z]/.test(label) && !/^[a-z]+\.[a-z]/.test(label) ? label.charAt(0).toUpperCase() + label.slice(1) : label;
}

/** A key's unit suffix: ["input_wait", "%", "%"] for "input_wait_pct"; [key, null, null] without one. */
export function splitUnit(key) {
  const text = String(key);
  for (const [suffix, unit, labelUnit] of VOCABULARY.unitSuffixes) {
    if (text.endsWith(suffix) && text.length > suffix.length) return [text.slice(0, -suffix.length), unit, labelUnit];
  }
  return [text, null, null];
}

/** A report key as a column label: "input_wait_pct" → "Input wait (%)", "gpu_busy_pct" → "GPU busy (%)". */
export function humanizeKey(key) {
  const [base, , labelUnit] = splitUnit(key);
  const label = keyWords(base);
  return labelUnit ? `${label} (${labelUnit})` : label;
}

/** `text` with a non-breaking space between every number and the unit after it ("160 ms" → "160\u00a0ms"). */
export function bindUnits(text) {
  if (typeof text !== 'string') return text;
  const units = [...VOCABULARY.boundUnits].sort((a, b) => b.length - a.length)
    .map((u) => u.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  return text.replace(new RegExp(`(\\d) (?=(?:${units.join('|')})(?![\\w/]))`, 'gu'), `$1${NB}`);
}

/** Any evidence value as short text: numbers rounded, lists joined, objects as "k: v" pairs. */
export function formatValue(value, depth = 0) {
  if (value === null || value === undefined) return DASH;
  if (typeof value === 'number') return Number.isFinite(value) ? trim(value, Math.abs(value) < 1 ? 4 : 3) : DASH;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const shown = value.slice(0, 8).map((v) => formatValue(v, depth + 1));
    return shown.join(', ') + (value.length > 8 ? `, … (${value.length} in all)` : '');
  }
  if (depth > 2) return '…';
  return Object.entries(value).map(([k, v]) => `${k}: ${formatValue(v, depth + 1)}`).join('; ');
}

/** The breakdown categories of the report, in its order, with display labels. */
export const BREAKDOWN_LABELS = VOCABULARY.breakdown;

/** The bottleneck ids of summary.bottleneck, as words. */
export const BOTTLENECK_LABELS = VOCABULARY.bottleneck;

/** The transfer directions of the report's `transfers`, as words. */
export const TRANSFER_LABELS = VOCABULARY.transfer;

function compactUs(us) {
  return us >= 1000 ? [trim(us / 1000, 3), 'ms'] : [trim(us, 3), 'µs'];
}

/** The latency histogram's bin labels from its edges in µs (null = no upper bound): "10–20µs", "≥10ms". */
export function binLabels(edgesUs) {
  const labels = [];
  for (let i = 0; i + 1 < edgesUs.length; i += 1) {
    const [low, lowUnit] = compactUs(edgesUs[i]);
    if (edgesUs[i + 1] === null) {
      labels.push(`≥${low}${lowUnit}`);
      continue;
    }
    const [high, highUnit] = compactUs(edgesUs[i + 1]);
    labels.push(lowUnit === highUnit || edgesUs[i] === 0 ? `${low}–${high}${highUnit}` : `${low}${lowUnit}–${high}${highUnit}`);
  }
  return labels;
}

const PLUMBING = new Set(VOCABULARY.kernelPlumbing);

/**
 * What tells apart kernels whose short names are alike (Eigen's EigenMetaKernel<…> above all): the first
 * distinctive identifiers of the template arguments. "" when there are none.
 */
export function kernelDetail(name, count = 3) {
  if (typeof name !== 'string') return '';
  const text = name.replace(/^void\s+/, '');
  const open = text.indexOf('<');
  const paren = findTopLevel(text, '(');
  if (open < 0 || (paren >= 0 && paren < open)) return '';
  const args = text.slice(open, paren > open ? paren : undefined);
  const seen = [];
  for (const match of args.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
    const word = match[0];
    if (PLUMBING.has(word) || word.length < 3 || seen.includes(word)) continue;
    seen.push(word);
    if (seen.length === count) break;
  }
  return seen.join(' · ');
}

/** "42% · 3 s" for an analysis status {progress: 0..1, elapsed_s}; the fraction is left out when unknown. */
export function analysisProgress(status) {
  const parts = [];
  if (status && typeof status.progress === 'number' && Number.isFinite(status.progress)) {
    parts.push(`${Math.round(Math.min(1, Math.max(0, status.progress)) * 100)}%`);
  }
  parts.push(`${status?.elapsed_s ?? 0}${NB}s`);
  return parts.join(' · ');
}

/**
 * A GPU as the framework that wrote the trace names it (vocabulary.device_label): a Kineto trace's
 * "/device:GPU:2" is PyTorch's "cuda:2"; other formats read "GPU:2".
 */
export function deviceName(name, traceFormat) {
  const text = String(name || '');
  const prefix = VOCABULARY.deviceNamePrefixes?.[traceFormat];
  const ordinal = text.startsWith('/device:GPU:') ? text.slice('/device:GPU:'.length) : '';
  if (prefix && /^\d+$/.test(ordinal)) return prefix + ordinal;
  return text.replace('/device:', '');
}
