/**
 * Axis tick labels in one unit per axis, and the text widths that size a chart's margins so no label is cut.
 */

const MS_UNITS = [[1000, 's'], [1, 'ms'], [1e-3, 'µs'], [1e-6, 'ns']];
const CHAR_PX = 0.62;  // a Roboto character of the axis font is at most about this many font-sizes wide

function decimalsFor(step) {
  for (let digits = 0; digits < 6; digits += 1) {
    if (Math.abs(Math.round(step * 10 ** digits) - step * 10 ** digits) < 1e-6) return digits;
  }
  return 6;
}

function grouped(value, digits) {
  return value.toLocaleString('en-US', {minimumFractionDigits: digits, maximumFractionDigits: digits});
}

/** Labels for ticks in ms, all in the unit of the largest tick: [0, 2, 4] -> ["0 ms", "2 ms", "4 ms"]. */
export function msTickLabels(ticks) {
  const top = Math.max(...ticks.map(Math.abs), 0);
  const [scale, unit] = MS_UNITS.find(([size]) => top >= size) || MS_UNITS[MS_UNITS.length - 1];
  const scaled = ticks.map((value) => value / scale);
  const step = scaled.length > 1 ? Math.abs(scaled[1] - scaled[0]) : 1;
  const digits = decimalsFor(step);
  return scaled.map((value) => `${grouped(value, value === 0 ? 0 : digits)} ${unit}`);
}

/** Labels for count ticks, compact past 10,000 in one suffix per axis: [0, 50000, 100000] -> ["0", "50k", "100k"]. */
export function countTickLabels(ticks) {
  const top = Math.max(...ticks.map(Math.abs), 0);
  const [scale, suffix] = top >= 1e6 ? [1e6, 'M'] : top >= 1e4 ? [1e3, 'k'] : [1, ''];
  const step = ticks.length > 1 ? Math.abs(ticks[1] - ticks[0]) / scale : 1;
  const digits = decimalsFor(step);
  return ticks.map((value) => (value === 0 ? '0' : `${grouped(value / scale, digits)}${suffix}`));
}

/** A generous width in px of `text` at `fontPx`: for margins, never smaller than the drawn text. */
export function textWidth(text, fontPx = 11) {
  return String(text).length * fontPx * CHAR_PX;
}

/** Room (px) a label rotated by `degrees` needs below its anchor, and to the left of it (text-anchor end). */
export function rotatedExtent(text, degrees, fontPx = 11) {
  const angle = (Math.abs(degrees) * Math.PI) / 180;
  const width = textWidth(text, fontPx);
  return {down: width * Math.sin(angle) + fontPx * Math.cos(angle), left: width * Math.cos(angle) + fontPx * Math.sin(angle)};
}
