/**
 * Pure chart geometry (no DOM): axis ticks, stacked segments, bars. Views turn the numbers into SVG.
 */

/** A round axis maximum >= value: 1, 2, 2.5, 5 or 10 times a power of ten. */
export function niceMax(value) {
  if (!(value > 0) || !Number.isFinite(value)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) {
    if (value <= step * power * (1 + 1e-9)) return step * power;
  }
  return 10 * power;
}

const TICK_STEPS = [1, 2, 2.5, 5];

/**
 * Evenly spaced round ticks from 0 to the smallest top that fits `max`: a step of 1, 2, 2.5 or 5 times a power
 * of ten giving 3 to 6 intervals (10.9 -> 0..12 by 2, not 0..20). On equal tops the rounder step (not 2.5)
 * wins, then the fewer ticks. With `integer` (counts) no tick falls between whole numbers.
 */
export function ticks(max, {integer = false} = {}) {
  const value = Number.isFinite(max) && max > 0 ? max : 0;
  if (value === 0) return integer ? [0, 1] : [0, 0.2, 0.4, 0.6, 0.8, 1];
  let best = null;
  const first = Math.floor(Math.log10(value / 6));
  for (let power = first; power <= first + 1; power += 1) {
    for (const mantissa of TICK_STEPS) {
      const step = Number((mantissa * 10 ** power).toPrecision(12));
      if (integer && !Number.isInteger(step)) continue;
      const count = Math.max(1, Math.ceil(value / step - 1e-9));
      if (count > 6 || (count < 3 && !(integer && step === 1))) continue;
      const top = Number((count * step).toPrecision(12));
      const rank = mantissa === 2.5 ? 1 : 0;
      const better = !best || top < best.top - 1e-12 || (Math.abs(top - best.top) <= 1e-12 &&
        (rank < best.rank || (rank === best.rank && count < best.count)));
      if (better) best = {top, step, count, rank};
    }
  }
  if (!best) return [0, niceMax(value)];
  return Array.from({length: best.count + 1}, (_, i) => Number((best.step * i).toPrecision(12)));
}

/**
 * Stacked segments of one bar: [{key, value, y0, y1}] from the bottom, skipping non-positive values.
 * `scale` maps a value to a length (pixels).
 */
export function stackSegments(values, keys, scale) {
  const segments = [];
  let at = 0;
  for (const key of keys) {
    const value = values[key];
    if (!(value > 0)) continue;
    const length = value * scale;
    segments.push({key, value, y0: at, y1: at + length});
    at += length;
  }
  return segments;
}

/** Evenly spaced bars over `width`: [{x, width}], `gap` (fraction of a slot) apart, at most `maxBar` wide. */
export function barSlots(count, width, gap = 0.2, maxBar = 56) {
  if (count <= 0) return [];
  const slot = width / count;
  const bar = Math.min(maxBar, Math.max(1, slot * (1 - gap)));
  return Array.from({length: count}, (_, i) => ({x: i * slot + (slot - bar) / 2, width: bar}));
}

/** At most `max` items, evenly spread over `items`, first and last kept: for long step lists. */
export function sampleEvenly(items, max) {
  if (items.length <= max) return items.slice();
  const picked = [];
  for (let i = 0; i < max; i += 1) picked.push(items[Math.round((i * (items.length - 1)) / (max - 1))]);
  return picked;
}

/** Runs of equal busy level for a timeline strip: [{start, end, level}] in bin units, level 0..4. */
export function timelineRuns(fractions, levels = 4) {
  const runs = [];
  fractions.forEach((fraction, index) => {
    const level = fraction <= 0 ? 0 : Math.max(1, Math.round(Math.min(fraction, 1) * levels));
    const last = runs[runs.length - 1];
    if (last && last.level === level && last.end === index) last.end = index + 1;
    else runs.push({start: index, end: index + 1, level});
  });
  return runs;
}

/** Powers of ten covering [lo, hi] on a log axis: [10^floor(log lo), ..., 10^ceil(log hi)]. */
export function decades(lo, hi) {
  const out = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e += 1) out.push(10 ** e);
  return out;
}

/** A log10 scale mapping [lo, hi] onto [0, length]; values are clamped to the range. */
export function logScale(lo, hi, length) {
  const a = Math.log10(lo);
  const span = Math.log10(hi) - a || 1;
  return (value) => (length * (Math.log10(Math.min(Math.max(value, lo), hi)) - a)) / span;
}

/**
 * Roofline axes and roofs (no DOM): points [{x: FLOPs/byte, y: TFLOP/s, weight}], roofs [{label, tflops}] and the
 * HBM bandwidth in GB/s. Returns {x: [lo, hi], y: [lo, hi], memory: [[x, y], [x, y]], roofs: [{label, tflops,
 * ridge}]} in data units; each roof starts at its ridge point (tflops / bandwidth).
 */
export function rooflineGeometry(points, roofs, bandwidthGbps) {
  const tbps = bandwidthGbps / 1000;
  const withRidge = roofs.map((roof) => ({...roof, ridge: roof.tflops / tbps}));
  const xs = points.map((p) => p.x).concat(withRidge.map((r) => r.ridge));
  const ys = points.map((p) => p.y).concat(roofs.map((r) => r.tflops));
  const xHi = 10 ** Math.ceil(Math.log10(Math.max(...xs) * 2));
  const xLo = 10 ** Math.floor(Math.log10(Math.min(...xs) / 2));
  const yHi = 10 ** Math.ceil(Math.log10(Math.max(...ys) * 1.5));
  const yLo = 10 ** Math.floor(Math.log10(Math.max(Math.min(...ys) / 2, yHi / 1e7)));
  const top = Math.max(...roofs.map((r) => r.tflops));
  const start = Math.max(xLo, yLo / tbps);
  return {x: [xLo, xHi], y: [yLo, yHi], memory: [[start, start * tbps], [top / tbps, top]], roofs: withRidge};
}
