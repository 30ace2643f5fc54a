/**
 * Which run the tab shows first: the newest by its profile directory's timestamp, whatever the URL or the
 * order of the list; a reload of the same browser tab keeps the run picked there.
 */

const SESSION_KEY = 'tb_gpu_advisor.selection';
const STAMP = /(\d{4})_(\d{2})_(\d{2})_(\d{2})_(\d{2})_(\d{2})$/;

/** The sortable timestamp of a run id ".../2026_01_15_09_30_00" ("20260115093000"), or "" when it has none. */
export function runTimestamp(run) {
  const match = STAMP.exec(String(run || '').split('/').pop());
  return match ? match.slice(1).join('') : '';
}

/** The newest run of `runs` ([{run, hosts}]) by directory timestamp; on a tie, the one listed first. */
export function newestRun(runs) {
  let best = null;
  for (const entry of runs || []) {
    if (!best || runTimestamp(entry.run) > runTimestamp(best.run)) best = entry;
  }
  return best;
}

/** The {run, host} to show first: `kept` (this tab's earlier pick) while that run exists, else the newest. */
export function firstSelection(runs, kept) {
  const entry = kept && (runs || []).find((r) => r.run === kept.run);
  if (entry) return {run: entry.run, host: entry.hosts.includes(kept.host) ? kept.host : entry.hosts[0]};
  const newest = newestRun(runs);
  return newest ? {run: newest.run, host: newest.hosts[0]} : null;
}

/** This browser tab's earlier pick (sessionStorage: per tab, kept across reloads), or null. */
export function keptSelection(storage = globalThis.sessionStorage) {
  try {
    const value = JSON.parse(storage?.getItem(SESSION_KEY) || 'null');
    return value && typeof value.run === 'string' ? value : null;
  } catch (error) {
    return null;
  }
}

export function keepSelection(selection, storage = globalThis.sessionStorage) {
  try {
    storage?.setItem(SESSION_KEY, JSON.stringify(selection));
  } catch (error) {
    // storage disabled: the pick is simply not kept
  }
}
