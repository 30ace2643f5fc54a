/**
 * A finding's evidence as readable rows: metrics with their units, the threshold crossed, and pointers
 * (time ranges, steps, kernels, devices) spelled out. Pure: returns plain data, the view builds the DOM.
 */

import {deviceName, formatBytes, formatGbps, formatMs, formatPct, formatUs, formatValue, humanizeKey, shortKernelName,
  splitUnit} from './format.js';
import {VOCABULARY} from './vocabulary.js';

const KERNEL_CHARS = 60;
const LISTED = 8;

const PER = /_(pct|ms|us|bytes|gbps)_((?:per_)?(?:[a-z]+))$/;

/** One metric value with the unit its key names (`x_ms`, and `x_ms_per_step` too). */
export function formatMetric(key, value) {
  if (typeof value !== 'number') return formatValue(value);
  const per = PER.exec(key);
  if (per) key = `${key.slice(0, per.index)}_${per[1]}`;
  if (key.endsWith('_pct')) return formatPct(value, 2);
  if (key.endsWith('_ms')) return formatMs(value);
  if (key.endsWith('_us')) return formatUs(value);
  if (key.endsWith('_bytes') || key === 'bytes') return formatBytes(value);
  if (key.endsWith('_gbps')) return formatGbps(value);
  return formatValue(value);
}

function metricLabel(key) {
  const per = PER.exec(key);
  if (per) return `${metricLabel(key.slice(0, per.index))} ${per[2].replace('_', ' ')}`;
  return humanizeKey(key).replace(/ \([^)]*\)$/, '');
}

/** What kind of figure a metric key holds: a share (%), a total, a rate ("per step") or a statistic ("mean"). */
function figureKind(key) {
  const per = PER.exec(key);
  if (per) return VOCABULARY.perWords.includes(per[2]) ? 'rate' : 'statistic';
  const [base, unit] = splitUnit(key);
  if (unit === '%') return 'share';
  const words = base.split('_');
  if (VOCABULARY.statisticWords.some((word) => words.includes(word)) || words.includes('step')) return 'statistic';
  return unit ? 'total' : 'other';
}

/**
 * Labels for the metric keys of one evidence, each unique: a time summed over the profile says over how many
 * steps ("over 5 steps", when `context.steps` is known); where two keys still read the same ("input_wait_pct" and
 * "input_wait_ms" are both "Input wait"), the share says "share" and the total says "total".
 */
export function metricLabels(keys, context = {}) {
  const base = new Map(keys.map((key) => [key, metricLabel(key)]));
  const counts = new Map();
  for (const label of base.values()) counts.set(label, (counts.get(label) || 0) + 1);
  const steps = Number.isInteger(context.steps) && context.steps > 1 ? context.steps : null;
  return new Map(keys.map((key) => {
    const label = base.get(key);
    const kind = figureKind(key);
    if (kind === 'total' && steps) return [key, `${label} over ${steps} steps`];
    if (counts.get(label) < 2) return [key, label];
    if (kind === 'share') return [key, `${label} share`];
    if (kind === 'total') return [key, steps ? `${label} over ${steps} steps` : `${label} total`];
    const [, , labelUnit] = splitUnit(key);
    return [key, kind === 'other' && labelUnit ? `${label} (${labelUnit})` : label];
  }));
}

const LIMIT_KEYS = new Set(['metric', 'value', 'high', 'medium', 'low', 'level', 'direction', 'crossed']);

function thresholdText(threshold) {
  if (!threshold || typeof threshold !== 'object') return formatValue(threshold);
  const metric = threshold.metric ? metricLabel(threshold.metric) : 'value';
  const shown = (value) => (threshold.metric ? formatMetric(threshold.metric, value) : formatValue(value));
  const limits = [];
  for (const level of ['high', 'medium', 'low']) {
    if (threshold[level] !== undefined) limits.push(`${level} at ${shown(threshold[level])}`);
  }
  if (threshold.level !== undefined && threshold.level !== null) {
    limits.push(`${threshold.direction || 'limit'} ${shown(threshold.level)}`);
  }
  for (const [key, value] of Object.entries(threshold)) {
    const side = /_(above|below)$/.exec(key);
    if (LIMIT_KEYS.has(key) || !side || typeof value !== 'number') continue;
    const measure = key.slice(0, side.index);
    limits.push(`${metricLabel(measure).toLowerCase()} ${side[1]} ${formatMetric(measure, value)}`);
  }
  const crossed = threshold.crossed ? `, crossed ${threshold.crossed}` : '';
  return `${metric} ${shown(threshold.value)}` + (limits.length ? ` (${limits.join(', ')}${crossed})` : crossed);
}

function pointerItems(key, value) {
  const list = Array.isArray(value) ? value : [value];
  const items = list.slice(0, LISTED).map((item) => {
    if (key === 'time_ranges_ms' && Array.isArray(item) && item.length === 2) {
      return {text: `${formatMs(item[0])} – ${formatMs(item[1])}`};
    }
    if (key === 'steps' && item && typeof item === 'object') {
      const parts = [item.time_ms !== undefined ? `${formatMs(item.time_ms)} step` : null,
        item.overlap_ms !== undefined ? `${formatMs(item.overlap_ms)} affected` : null].filter(Boolean);
      return {text: `${item.step ?? item.name ?? '?'}` + (parts.length ? ` (${parts.join(', ')})` : '')};
    }
    if (key === 'kernels' && typeof item === 'string') {
      return {text: shortKernelName(item, KERNEL_CHARS), title: item};
    }
    return {text: formatValue(item)};
  });
  if (list.length > LISTED) items.push({text: `… ${list.length - LISTED} more`});
  return items;
}

/**
 * [{label, items: [{text, title?}]}] for an evidence object {metrics, threshold, pointers, ...}; `context.steps`
 * (the profile's step count) lets a total say over how many steps it was measured.
 */
export function evidenceRows(evidence, context = {}) {
  if (!evidence || typeof evidence !== 'object') return [];
  const rows = [];
  const {metrics, threshold, pointers, ...rest} = evidence;
  if (metrics && typeof metrics === 'object') {
    const flat = Object.entries(metrics).filter(([, v]) => v === null || typeof v !== 'object');
    const labels = metricLabels(flat.map(([k]) => k), context);
    const items = flat.map(([k, v]) => ({text: `${labels.get(k)}: ${formatMetric(k, v)}`}));
    if (items.length) rows.push({label: 'Measured', items});
  }
  if (threshold !== undefined) rows.push({label: 'Threshold', items: [{text: thresholdText(threshold)}]});
  if (pointers && typeof pointers === 'object') {
    for (const [key, value] of Object.entries(pointers)) {
      rows.push({label: metricLabel(key), items: pointerItems(key, value)});
    }
  }
  for (const [key, value] of Object.entries(rest)) {
    rows.push({label: metricLabel(key), items: [{text: formatMetric(key, value)}]});
  }
  return rows;
}

function isFlatObject(value) {
  return value && typeof value === 'object' && !Array.isArray(value) &&
    Object.values(value).every((v) => v === null || typeof v !== 'object');
}

/**
 * The evidence's per-item lists (a metric holding a list of flat objects, e.g. `per_gpu`) as tables:
 * [{label, columns: [{key, label, numeric}], rows: [[{text, title?}]]}].
 */
export function evidenceTables(evidence, context = {}) {
  const metrics = evidence && typeof evidence === 'object' ? evidence.metrics : null;
  if (!metrics || typeof metrics !== 'object') return [];
  const tables = [];
  for (const [key, value] of Object.entries(metrics)) {
    if (!Array.isArray(value) || !value.length || !value.every(isFlatObject)) continue;
    const keys = [...new Set(value.flatMap((item) => Object.keys(item)))];
    const columns = keys.map((k) => ({key: k, label: humanizeKey(k), numeric: value.some((item) => typeof item[k] === 'number')}));
    const rows = value.map((item) => keys.map((k) => {
      const cell = item[k];
      if (typeof cell === 'string' && cell.startsWith('/device:')) return {text: deviceName(cell, context.traceFormat), title: cell};
      return {text: formatMetric(k, cell)};
    }));
    tables.push({label: metricLabel(key), columns, rows});
  }
  return tables;
}
