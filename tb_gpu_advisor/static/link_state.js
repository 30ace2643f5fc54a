/**
 * The view in TensorBoard's URL, so that a link opens it for a teammate: `#gpu_advisor&p.gpu_advisor.run=…`.
 *
 * TensorBoard keeps `p.<plugin>.<key>=<value>` entries of its URL hash for a plugin (its plugin API hands them
 * to the plugin as "URL data") but gives a plugin no call to change them. Our iframe has TensorBoard's origin, so
 * the tab reads them from the parent's hash on load and rewrites that hash (history.replaceState: no reload, no
 * history entry) as the view changes; "Copy link" copies the result.
 */

export const PLUGIN = 'gpu_advisor';
const PREFIX = `p.${PLUGIN}.`;
/** What a link carries, in this order. */
export const LINK_KEYS = ['view', 'run', 'host', 'baseline_run', 'baseline_host', 'finding', 'kernel_filter'];
const MAX_VALUE_CHARS = 512;

/** {tab, entries: [[key, value]]} of a TensorBoard hash ("#tab&key=value&…"). */
export function parseHash(hash) {
  const parts = String(hash || '').replace(/^#/, '').split('&').filter(Boolean);
  const entries = [];
  let tab = '';
  for (const part of parts) {
    const at = part.indexOf('=');
    let key;
    let value;
    try {
      key = decodeURIComponent(at < 0 ? part : part.slice(0, at));
      value = at < 0 ? null : decodeURIComponent(part.slice(at + 1));
    } catch (error) {
      continue; // a malformed escape: that entry is left out
    }
    if (value === null && !tab && !entries.length) tab = key;
    else entries.push([key, value ?? '']);
  }
  return {tab, entries};
}

/** The hash of `tab` with `entries` ([[key, value]]). */
export function formatHash(tab, entries) {
  const parts = tab ? [encodeURIComponent(tab)] : [];
  for (const [key, value] of entries) parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
  return `#${parts.join('&')}`;
}

/** The link state in a hash: {run, host, …} of our `p.gpu_advisor.*` entries (unknown keys left out). */
export function stateFromHash(hash) {
  const state = {};
  for (const [key, value] of parseHash(hash).entries) {
    const name = key.startsWith(PREFIX) ? key.slice(PREFIX.length) : null;
    if (name && LINK_KEYS.includes(name) && value && value.length <= MAX_VALUE_CHARS) state[name] = value;
  }
  return state;
}

/** `hash` with our entries replaced by `state`'s (empty values left out), other plugins' entries kept. */
export function hashWithState(hash, state) {
  const {entries} = parseHash(hash);
  const others = entries.filter(([key]) => !key.startsWith(PREFIX));
  const ours = LINK_KEYS.filter((key) => state[key]).map((key) => [PREFIX + key, String(state[key])]);
  return formatHash(PLUGIN, [...others, ...ours]);
}

/** TensorBoard's window (our parent, same origin), or null when there is none we may read. */
export function tensorBoardWindow(win = globalThis.window) {
  try {
    const top = win?.top;
    if (!top || top === win) return null;
    void top.location.href; // throws when not the same origin
    return top;
  } catch (error) {
    return null;
  }
}

/** The link state TensorBoard's URL carries now ({} outside TensorBoard). */
export function readLinkState(top = tensorBoardWindow()) {
  return top ? stateFromHash(top.location.hash) : {};
}

/** The URL that opens `state` in this TensorBoard. */
export function linkUrl(state, top = tensorBoardWindow()) {
  const location = top ? top.location : globalThis.location;
  return `${location.origin}${location.pathname}${location.search}${hashWithState(location.hash, state)}`;
}

/** Puts `state` into TensorBoard's address bar, without reloading it or adding a history entry, while our
 * tab is the one shown. */
export function writeLinkState(state, top = tensorBoardWindow()) {
  if (!top || parseHash(top.location.hash).tab !== PLUGIN) return;
  const hash = hashWithState(top.location.hash, state);
  if (hash === top.location.hash) return;
  try {
    top.history.replaceState(top.history.state, '', hash);
  } catch (error) {
    // a browser refusing it: the address bar keeps the old view, "Copy link" still has the current one
  }
}

/**
 * The URL of the Profile tab (XProf) on `run` and `host`, with its trace viewer: XProf reads `run`, `tag` (the
 * tool) and `host` from TensorBoard's query string when it loads. It takes no time range from a link.
 */
export function profileTabUrl(run, host, top = tensorBoardWindow()) {
  const location = top ? top.location : globalThis.location;
  const query = new URLSearchParams(location.search); // TensorBoard's own options (darkMode, …) stay
  for (const key of ['run', 'tag', 'tool', 'host', 'hosts', 'session_path', 'run_path']) query.delete(key);
  query.set('run', run);
  query.set('tag', 'trace_viewer');
  if (host) query.set('host', host);
  return `${location.origin}${location.pathname}?${query.toString()}#profile`;
}
