/**
 * The Ranks card: a distributed run as a whole, above the report of the rank picked. A rank x step heat map of step
 * time and of where the time went, the slowest rank and why (with each rank's evidence), the
 * collectives split into waiting for the last rank and transfer with their bus bandwidth, and the what-ifs (a
 * model, with what each assumes). The same words and units as the CLI's run-level sections.
 */

import {getResult} from '../api.js';
import {h, replace, s, tooltip} from '../dom.js';
import {textWidth} from '../axis.js';
import {fixed, formatBytes, formatCount, formatGbps, formatMs, tableMs} from '../format.js';
import {VOCABULARY} from '../vocabulary.js';
import {emptyState, legend, section} from './common.js';

const WORDS = VOCABULARY.ranks;
const TIMES = VOCABULARY.times;
const MAX_STEPS = 60;  // columns of a heat map; more steps are evenly sampled
const MAX_PATHS = 8;  // steps whose critical path is listed (as the CLI)
const MAX_RANK_ROWS = 32;  // the first ranks in the per-rank table (as the CLI, with the slowest wherever it is)
const W = 560;
const MARGIN = {right: 8, top: 8, bottom: 34};
const Y_TITLE_PX = 16;
// The colour of each cause, from the categories the other cards use for the same kind of time.
const CAUSE_CLASS = {compute: 'cat-compute_32bit', input: 'cat-input_wait', host: 'cat-host',
  peer_wait: 'cat-collectives', transfer: 'cat-d2d', other: 'cat-idle'};
const PARTS = [['compute_ms', 'compute'], ['input_ms', 'input'], ['host_ms', 'host'], ['peer_wait_ms', 'peer_wait'],
  ['transfer_ms', 'transfer'], ['other_ms', 'other']];

const rankName = (rank) => `rank ${rank.rank ?? rank.host}`;
// "host" for an XPlane session's hosts (they name no rank: each is known by its host name), else "rank"
const unit = (view) => (view.ranks.length && view.ranks.every((r) => typeof r.rank === 'string') ? 'host' : 'rank');
const signed = (ms, format) => (ms >= 0 ? '+' : '\u2212') + format(Math.abs(ms));

/** Every `every`-th of `items` so at most `max` remain, with their indices: [{item, index}]. */
function sampled(items, max) {
  const every = Math.max(1, Math.ceil(items.length / max));
  return items.map((item, index) => ({item, index})).filter(({index}) => index % every === 0);
}

/** The breakdown of one cell in words, for its tooltip. */
function cellWords(rank, step, cell) {
  const parts = PARTS.filter(([key]) => cell[key] > 0).map(([key, cause]) => `${WORDS.causes[cause]} ${formatMs(cell[key])}`);
  return `${rankName(rank)}, step ${step.step} (the run\u2019s: ${formatMs(step.step_time_ms)}): ` +
    `${formatMs(cell.step_ms)} (${parts.join(', ')})`;
}

/** A rank x step heat map (SVG): `fill(cell)` gives {class, opacity} of a cell. */
function heatMap(view, {ariaLabel, fill}) {
  const steps = sampled(view.steps, MAX_STEPS);
  const ranks = view.ranks;
  const rowH = Math.max(3, Math.min(20, Math.floor(220 / ranks.length)));
  const labelEvery = Math.ceil(12 / rowH);
  const labels = ranks.map((rank, i) => (i % labelEvery === 0 ? String(rank.rank ?? rank.host) : null));
  const left = Math.ceil(Math.max(...labels.filter(Boolean).map((text) => textWidth(text)), 8) + 8 + Y_TITLE_PX);
  const plotW = W - left - MARGIN.right;
  const plotH = rowH * ranks.length;
  const height = MARGIN.top + plotH + MARGIN.bottom;
  const colW = plotW / steps.length;
  const stepEvery = Math.max(1, Math.ceil(steps.length / Math.floor(plotW / 28)));
  const cells = [];
  ranks.forEach((rank, r) => {
    steps.forEach(({item: step}, c) => {
      const cell = step.cells[r];
      const {cls, opacity} = fill(cell);
      cells.push(s('rect', {class: cls, x: left + c * colW, y: MARGIN.top + r * rowH, width: Math.max(colW - 1, 0.5),
        height: Math.max(rowH - (rowH > 6 ? 1 : 0), 1), 'fill-opacity': opacity ?? null, 'data-rank': String(r),
        'data-step': String(step.step)}, tooltip(cellWords(rank, step, cell))));
    });
  });
  const yLabels = labels.map((text, r) => (text === null ? null : s('text', {class: 'y-label', x: left - 5,
    y: MARGIN.top + r * rowH + rowH / 2 + 4, 'text-anchor': 'end'}, text)));
  const xLabels = steps.map(({item: step}, c) => (c % stepEvery === 0 ? s('text', {class: 'x-label',
    x: left + c * colW + colW / 2, y: MARGIN.top + plotH + 14, 'text-anchor': 'middle'}, String(step.step)) : null));
  const slowest = ranks.findIndex((rank) => view.slowest && (rank.rank ?? rank.host) === view.slowest.rank);
  const outline = slowest < 0 ? null : s('rect', {class: 'rank-slowest-row', x: left - 0.5, width: plotW + 1,
    y: MARGIN.top + slowest * rowH - 0.5, height: rowH + 1, fill: 'none', stroke: 'currentColor',
    'stroke-width': 1.5, 'pointer-events': 'none'}, tooltip(`The slowest rank: ${rankName(ranks[slowest])}`));
  const middle = MARGIN.top + plotH / 2;
  return s('svg', {class: 'chart rank-heat', viewBox: `0 0 ${W} ${height}`, role: 'img', 'aria-label': ariaLabel},
    cells, outline, yLabels, xLabels,
    s('text', {class: 'axis-title x-title', x: left + plotW / 2, y: height - 4, 'text-anchor': 'middle'}, 'step'),
    s('text', {class: 'axis-title y-title', x: 12, y: middle, 'text-anchor': 'middle',
      transform: `rotate(-90 12 ${middle})`}, 'rank'));
}

function heatMaps(view) {
  const all = view.steps.flatMap((step) => step.cells.map((cell) => cell.step_ms));
  const [lo, hi] = [Math.min(...all), Math.max(...all)];
  // shaded from half the slowest cell (or the fastest, if lower) up: a spread of a few percent stays faint
  const floor = Math.min(lo, hi / 2);
  const shade = (ms) => (hi > floor ? 0.1 + 0.9 * (ms - floor) / (hi - floor) : 0.6);
  const causes = view.cause_order.filter((cause) => view.steps.some((step) => step.cells.some((c) => c.cause === cause)));
  const sampledNote = view.steps.length > MAX_STEPS ? ` (${sampled(view.steps, MAX_STEPS).length} of ` +
    `${view.steps.length} steps, evenly sampled)` : '';
  const outlined = view.slowest ? ` Outlined: the slowest rank, ${view.slowest.rank}.` : '';
  return h('div', {class: 'grid'},
    h('figure', {class: 'rank-figure', style: {margin: '0'}, 'data-testid': 'rank-step-time'},
      h('figcaption', {class: 'hint'}, `Step time of each rank${sampledNote}: the stronger the colour, the slower; ` +
        `${formatMs(lo)} to ${formatMs(hi)}.${outlined}`),
      heatMap(view, {ariaLabel: 'Step time per rank and step', fill: (cell) => ({cls: 'cat-wait',
        opacity: shade(cell.step_ms).toFixed(3)})})),
    h('figure', {class: 'rank-figure', style: {margin: '0'}, 'data-testid': 'rank-step-cause'},
      h('figcaption', {class: 'hint'}, `Where each rank's step went${sampledNote}: the part ` +
        `that took the most of it (compute also when nothing else took a tenth).${outlined}`),
      heatMap(view, {ariaLabel: 'Idle cause per rank and step', fill: (cell) => ({cls: CAUSE_CLASS[cell.cause]})}),
      legend(causes.map((cause) => ({key: CAUSE_CLASS[cause].slice(4), label: WORDS.causes[cause]})))));
}

/**
 * The "Why" sentence. A compute cause names the whole compute excess (the number the line below and the table
 * give) and the part of it the cause is about, never the part alone as the difference (review issue 31 K1:
 * "27.4 ms more" beside "compute +31.4 ms").
 */
export function whyWords(slow) {
  const compute = slow.excess_ms_per_step?.compute;
  const part = {more_compute: 'in ops it runs more often', slower_compute: 'the same ops running slower'}[slow.cause];
  if (part && Number.isFinite(compute) && Math.abs(compute - slow.cause_ms_per_step) >= 0.0005) {
    return `Why: ${slow.cause_text}: ${formatMs(compute)} more compute per step than the median rank, ` +
      `${formatMs(slow.cause_ms_per_step)} of it ${part}.`;
  }
  return `Why: ${slow.cause_text}: ${formatMs(slow.cause_ms_per_step)} more per step than the median rank.`;
}

/** The sentences on the slowest rank: who, how late, why, against the median rank. */
function slowestLines(view) {
  const slow = view.slowest;
  if (!slow) {
    return [h('p', {'data-testid': 'rank-slowest'}, 'No rank holds the others back: none came last at the ' +
      'collectives in most steps and cost the others a tenth of the step.')];
  }
  const split = slow.compute_split_ms;
  const splitWords = split && (split.more_work > 0 || split.same_work_slower > 0) ?
    ` (${WORDS.computeSplit.replace('{more}', formatMs(split.more_work)).replace('{slower}',
      formatMs(split.same_work_slower))})` : '';
  const excess = Object.entries(slow.excess_ms_per_step).map(([key, ms]) =>
    `${key} ${signed(ms, formatMs)}${key === 'compute' ? splitWords : ''}`).join(', ');
  const loader = slow.evidence === 'input' && slow.work.some((w) => w.name.includes('_SingleProcessDataLoaderIter'));
  return [
    h('p', {'data-testid': 'rank-slowest'}, h('strong', {}, `Slowest ${unit(view)}: ${slow.rank === slow.host ? slow.rank :
      `${slow.rank} (${slow.host})`}`),
      `, last to arrive in ${slow.late_steps} of ${slow.steps} steps; the others wait ` +
      `${formatMs(slow.held_others_ms_per_step)} per step for it.`),
    slow.as_late?.length ? h('p', {'data-testid': 'rank-as-late'}, WORDS.asLate.replace('{ranks}',
      slow.as_late.join(', '))) : null,
    h('p', {'data-testid': 'rank-why'}, whyWords(slow)),
    h('p', {class: 'hint'}, `${WORDS.excess}: ${excess}.`),
    loader ? h('p', {'data-testid': 'rank-loader'}, WORDS.singleProcessLoader) : null,
  ];
}

function table(testid, caption, headers, rows, {highlight} = {}) {
  return h('div', {class: 'table-wrap'}, h('table', {class: 'collectives', 'data-testid': testid},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, headers.map((label, i) => h('th', {scope: 'col', class: i ? 'num' : null}, label)))),
    h('tbody', {}, rows.map((cells, r) => h('tr', {style: highlight === r ? {fontWeight: '500'} : null,
      'aria-current': highlight === r ? 'true' : null},
    cells.map((text, i) => h('td', {class: i ? 'num' : null}, text)))))));
}

/** Each rank's mean time per step by component: the evidence the slowest rank is judged on. */
function rankTable(view) {
  const named = new Set(view.slowest ? [view.slowest.rank, ...view.slowest.as_late] : []);
  const ranks = view.ranks.filter((r, i) => i < MAX_RANK_ROWS || named.has(r.rank ?? r.host));
  const keys = ['step_ms', 'compute_ms', 'input_ms', 'host_ms', 'peer_wait_ms', 'transfer_ms'];
  const ms = tableMs(ranks.flatMap((r) => [...keys.map((key) => r.mean[key]), r.held_others_ms_per_step,
    Math.abs(r.clock_offset_ms)]));
  const slow = view.slowest ? ranks.findIndex((r) => (r.rank ?? r.host) === view.slowest.rank) : -1;
  const more = view.ranks.length > ranks.length ? ` (${ranks.length} of the ${view.ranks.length}: the first ` +
    `${MAX_RANK_ROWS}, and the slowest and those as late as it)` : '';
  return table('rank-table', `Each rank per step, mean over the steps${more}; ${WORDS.tableNote}`,
    WORDS.headers, ranks.map((r) => [String(r.rank ?? r.host), ...keys.map((key) => ms(r.mean[key])),
      ms(r.held_others_ms_per_step), signed(r.clock_offset_ms, ms)]), {highlight: slow});
}

/** The evidence from the slowest rank's own trace (ops, kernels, input spans or host ops) against the median rank's. */
function workTable(view) {
  const work = view.slowest?.work || [];
  if (!work.length) return null;
  const ms = tableMs(work.flatMap((w) => [w.ms_per_step, w.median_ms_per_step]));
  const calls = (n) => (Number.isInteger(n) ? formatCount(n) : fixed(n, 1));
  const name = {ops: 'op', kernels: 'kernel', input: 'input span', host: 'host op'}[view.slowest.evidence] || 'name';
  return table('rank-work', `Rank ${view.slowest.rank}: ${WORDS.evidence[view.slowest.evidence] ?? 'its work'}`,
    [name, 'calls', 'median rank calls', 'time', 'median rank time'],
    work.map((w) => [w.name, calls(w.calls_per_step), calls(w.median_calls_per_step), ms(w.ms_per_step),
      ms(w.median_ms_per_step)]));
}

function collectivesTable(view) {
  if (!view.collectives.length) return h('p', {class: 'hint'}, 'No collective is matched on every rank.');
  const ms = tableMs(view.collectives.flatMap((k) => [k.median_wait_ms, k.median_transfer_ms]));
  return [
    h('p', {class: 'hint'}, 'Each call split per rank into waiting for the last rank to arrive and the transfer ' +
      'after it (medians over the calls); bus bandwidth (NCCL-tests\u2019 definition) over the median transfer.'),
    table('rank-collectives', 'Collectives across ranks', WORDS.collectiveHeaders, view.collectives.map((k) => [k.collective, formatCount(k.calls),
      formatCount(k.group_size), formatBytes(k.median_bytes), ms(k.median_wait_ms), ms(k.median_transfer_ms),
      formatGbps(k.busbw_gbps), formatGbps(k.link_gbps)])),
    h('p', {class: 'hint', 'data-testid': 'rank-link'},
      view.link ? `Link: ${view.link}.` : 'Link: not in the trace (a CPU run): no peak to compare with.',
      view.device === 'cpu' ? ` ${WORDS.cpuTransfer}.` : ''),
  ];
}

/** A what-if in words: `estimated` false (and why) where there is no step time to show, never "0 ms" or "null×". */
export function whatIfWords(item) {
  const words = (item.ranks || []).length > 1 ?
    WORDS.whatIf.ranks_at_median.replace('{ranks}', item.ranks.join(', ')) :
    WORDS.whatIf[item.name].replace('{rank}', String(item.rank));
  if (!(item.step_ms > 0) || !(item.speedup > 0)) {
    return {estimated: false, lead: `What-if ${words}: `,
      text: `not estimated; ${item.assumes || 'the trace gives no step time to model'}.`};
  }
  return {estimated: true, lead: `What-if (a ${item.kind}) ${words}: `,
    text: `${formatMs(item.step_ms)} per step instead of ${formatMs(item.baseline_ms)} (${item.speedup}${TIMES}). `,
    hint: `Assumes ${item.assumes}.`};
}

/** The what-ifs: each a model, with what it assumes; one the trace cannot support says why. */
function whatIfs(view) {
  const items = view.what_if.filter((item) => !(item.name === 'rank_at_median' && item.rank === null));
  return h('ul', {class: 'rank-what-ifs', 'data-testid': 'rank-what-ifs'}, items.map((item) => {
    const said = whatIfWords(item);
    if (!said.estimated) return h('li', {class: 'muted', 'data-what-if': item.name}, said.lead + said.text);
    return h('li', {'data-what-if': item.name}, h('strong', {}, said.lead), said.text,
      h('span', {class: 'hint'}, said.hint));
  }));
}

/** The critical path of a step as the CLI words it: consecutive segments of one kind and rank merged. */
export function pathWords(segments) {
  const merged = [];
  for (const seg of segments) {
    const key = `${seg.kind}|${seg.rank}|${seg.collective}`;
    const last = merged[merged.length - 1];
    if (last && last.key === key) {
      last.ms += seg.end_ms - seg.start_ms;
      last.calls += 1;
    } else merged.push({key, seg, ms: seg.end_ms - seg.start_ms, calls: 1});
  }
  return merged.map(({seg, ms, calls}) => (seg.kind === 'collective' ?
    `${seg.collective} transfer${calls > 1 ? ` ${TIMES}${calls}` : ''}` : `rank ${seg.rank} ${seg.kind}`) +
    ` ${formatMs(ms)}`).join(' \u2192 ') || 'no segment';
}

function criticalPaths(view) {
  return h('details', {class: 'rank-paths'}, h('summary', {}, 'Critical path across ranks, per step'),
    h('p', {class: 'hint'}, WORDS.path),
    h('ul', {}, view.critical_path.slice(0, MAX_PATHS).map((path) =>
      h('li', {}, `step ${path.step} (${formatMs(path.step_ms)}): ${pathWords(path.segments)}`))));
}

function label(view) {
  const parts = [`${view.rank_count} ${unit(view)}s`];
  if (view.world_size && view.world_size !== view.rank_count) parts.push(`of ${view.world_size}`);
  return [...parts, view.backend, view.device].filter(Boolean).join(', ');
}

/**
 * Why the ranks cannot be compared, or null: one rank only, or no step number common to every rank (a per-rank
 * table would be dashes, and "no rank holds the others back" a verdict on nothing compared).
 */
export function nothingToJoin(view) {
  const n = view.rank_count ?? view.ranks?.length ?? 0;
  if (n < 2) {
    return `Only one ${unit(view)}’s trace in this run: nothing to join, so no ${unit(view)} can be ` +
      'compared with the others. Open the run with every rank’s trace in it.';
  }
  if (view.step_count > 0) return null;
  const calls = view.collectives?.length ? 'their collectives alone (below) give no step to compare' :
    'and no collective is matched on every one';
  return `The ${n} ${unit(view)}s’ traces share no step number, ${calls}: nothing to join, so no ` +
    `${unit(view)} can be compared with the others (no per-${unit(view)} table, no slowest ${unit(view)}). ` +
    `Capture the same steps on every ${unit(view)} (one profiler schedule, started at the same step).`;
}

/** The body of the card for a /ranks answer. */
export function ranksBody(answer) {
  const view = answer?.ranks;
  if (!view) return emptyState(answer?.reason || 'This run has no run-level view.');
  const unjoined = nothingToJoin(view);
  if (unjoined) {
    return h('div', {class: 'ranks-body', 'data-testid': 'ranks-body'},
      h('p', {class: 'empty', 'data-testid': 'ranks-unjoined'}, `${label(view)}: ${unjoined}`),
      view.collectives?.length ? collectivesTable(view) : null,
      view.notes.length ? h('p', {class: 'hint'}, view.notes.map((note) => `Note: ${note}. `)) : null);
  }
  const residual = view.clock.residual_ms;
  const clock = view.clock.one_clock ?
    'One clock: every rank runs on one machine and its trace gives absolute times, so no offset.' :
    view.clock.offsets_from_calls ? `Clocks aligned on ${view.clock.offsets_from_calls} collective ends` +
      (residual === null || residual === undefined ? '.' :
        ` (after alignment a call\u2019s ends still spread ${formatMs(residual)}, the median).`) :
      'Clocks taken as recorded.';
  return h('div', {class: 'ranks-body', 'data-testid': 'ranks-body'},
    h('p', {'data-testid': 'rank-step-time-headline'}, `${label(view)}: ${view.step_count} steps on every ${unit(view)}, ` +
      `${formatMs(view.step_time_ms)} per step (${WORDS.stepTime}).`),
    slowestLines(view),
    view.steps.length ? heatMaps(view) : null,
    h('div', {class: 'grid'}, rankTable(view), workTable(view)),
    collectivesTable(view),
    whatIfs(view),
    criticalPaths(view),
    h('p', {class: 'hint'}, clock, view.notes.map((note) => ` Note: ${note}.`)));
}

/** The Ranks card of run `run` (a /runs entry with several hosts), filled when /ranks answers; null for one host. */
export function ranksView(entry, {signal} = {}) {
  if (!entry || !Array.isArray(entry.hosts) || entry.hosts.length < 2) return null;
  const progress = h('p', {class: 'progress'}, `Joining the ${entry.hosts.length} hosts\u2019 traces on one timeline\u2026`);
  const body = h('div', {'data-testid': 'ranks-slot'}, emptyState('Analyzing every rank\u2026'), progress);
  const card = section('Ranks', {id: 'ranks', wide: true,
    subtitle: 'the run as a whole: which rank holds the others back, and why'}, body);
  getResult('ranks', {run: entry.run}, {signal, onProgress: (status) => {
    progress.textContent = `${status.done ?? 0} of ${status.total ?? entry.hosts.length} hosts analyzed\u2026`;
  }}).then((answer) => {
    replace(body, ranksBody(answer));
    body.dataset.state = answer?.ranks ? 'ready' : 'empty';
  }).catch((error) => {
    if (error.name !== 'AbortError') {
      replace(body, h('p', {class: 'error'}, error.message));
      body.dataset.state = 'error';
    }
  });
  return card;
}
