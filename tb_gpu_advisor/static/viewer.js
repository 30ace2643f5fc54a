/**
 * Where the user can see a run's timeline (pure): the Profile tab for XPlane runs it can read, else the trace
 * file itself (a PyTorch trace opens in Perfetto or chrome://tracing).
 */

/**
 * {link: true} when the Profile tab can show `host` of run `entry` (a /runs entry); else {link: false, note}:
 * the sentence that says where to look. `environment` is the /environment answer (null: unknown, assume yes).
 */
export function timelineViewer(entry, host, environment) {
  if (entry?.format === 'kineto') {
    const file = entry.files?.[host];
    return {link: false, note: `This PyTorch trace is not shown by the Profile tab: open ${file || 'its .pt.trace.json file'} ` +
      'in Perfetto (ui.perfetto.dev) or chrome://tracing to see its timeline.'};
  }
  const profileTab = environment?.profile_tab;
  if (profileTab && profileTab.available === false) {
    return {link: false, note: profileTab.note || 'The Profile tab cannot show these runs.'};
  }
  return {link: true, note: null};
}
