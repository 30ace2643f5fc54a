/**
 * The tab: the run/host picker, the analysis lifecycle (loading, errors), the report's cards, or the
 * comparison's when a baseline is picked.
 */

import {ApiError, getJson, getResult} from './api.js';
import {copyText} from './clipboard.js';
import {comparePicker} from './compare_picker.js';
import {h, replace} from './dom.js';
import {analysisProgress} from './format.js';
import {linkUrl, profileTabUrl, readLinkState, writeLinkState} from './link_state.js';
import {timelineViewer} from './viewer.js';
import {collectivesView} from './views/collectives.js';
import {comparisonView} from './views/comparison.js';
import {configurationView} from './views/configuration.js';
import {emptyState, section} from './views/common.js';
import {findingsView} from './views/findings.js';
import {gpusView, imbalanceOf, timelineStrip} from './views/gpus.js';
import {idleView} from './views/idle.js';
import {kernelTableView} from './views/kernel_table.js';
import {launchView} from './views/launch_histogram.js';
import {rooflineView} from './views/roofline.js';
import {stepsView} from './views/steps_chart.js';
import {summaryView} from './views/summary.js';
import {transfersView} from './views/transfers.js';
import {overviewView} from './views/overview.js';
import {ranksView} from './views/ranks.js';
import {firstSelection, keepSelection, keptSelection} from './run_choice.js';
import {runSearch} from './run_search.js';

const STATUS_POLL_MS = 1000;

function messageCard(kind, title, ...lines) {
  return h('section', {class: ['card', 'message', kind], role: kind === 'error' ? 'alert' : 'status',
    'data-testid': `${kind}-message`},
  h('h2', {}, title), lines.map((line) => h('p', {}, line)));
}

/** Builds the app into `root` and loads the runs. */
export function createApp(root) {
  // finding and kernelFilter: the open finding and the kernel table's filter, kept for links
  // view: 'run' (a run, or a comparison when a baseline is picked) or 'overview' (every run of the logdir)
  const state = {runs: [], run: null, host: null, controller: null, finding: null, kernelFilter: '', view: 'run',
    environment: null};
  const runSelect = h('select', {'aria-label': 'Run', 'data-testid': 'run-select'});
  const hostSelect = h('select', {'aria-label': 'Host', 'data-testid': 'host-select'});
  const profileLink = h('a', {class: 'profile-link', href: '#profile', target: '_blank', rel: 'noopener',
    'data-testid': 'profile-link'}, 'Profile tab ↗');
  // Below the toolbar, where a sentence wraps: the sticky toolbar stays one line at any width.
  const profileNote = h('p', {class: 'profile-note hint', 'data-testid': 'profile-note', hidden: true});
  const copyLink = h('button', {type: 'button', class: 'copy-link', 'data-testid': 'copy-link',
    title: 'Copy a link that opens this view (run, host, baseline, open finding, kernel filter) for a teammate'},
  'Copy link');
  const refresh = h('button', {type: 'button', class: 'refresh', title: 'Look for new runs', 'aria-label': 'Refresh'},
    '\u21bb');
  const hostLabel = h('label', {class: 'host-picker'}, 'Host ', hostSelect);
  const allRuns = h('button', {type: 'button', 'data-testid': 'overview-button',
    title: 'Every run of the logdir: verdict, step time, GPU busy, top finding, change against the previous run'},
  'All runs');
  const content = h('main', {class: 'content', 'aria-live': 'polite'});
  const picker = comparePicker(() => {
    state.view = 'run';  // a baseline picked on the overview opens the comparison
    show();
  });
  const search = runSearch((run) => select(run, null));

  replace(root, h('div', {class: 'app'},
    h('header', {class: 'toolbar'},
      h('span', {class: 'brand'}, 'GPU Advisor'),
      h('label', {}, 'Run ', runSelect),
      search.element,
      hostLabel,
      picker.element,
      allRuns, refresh, copyLink, profileLink),
    profileNote,
    content));

  runSelect.addEventListener('change', () => select(runSelect.value, null));
  hostSelect.addEventListener('change', () => select(state.run, hostSelect.value));
  picker.element.addEventListener('change', () => syncLink());
  picker.element.addEventListener('click', () => setTimeout(syncLink));
  refresh.addEventListener('click', () => loadRuns());
  allRuns.addEventListener('click', () => {
    state.view = 'overview';
    syncLink();
    show();
  });
  copyLink.addEventListener('click', async () => {
    const copied = await copyText(linkUrl(linkState()));
    copyLink.textContent = copied ? 'Link copied' : 'Copy failed';
    setTimeout(() => {
      copyLink.textContent = 'Copy link';
    }, 2000);
  });
  // A finding opened by the user (not the first one, open by default) is the one a link points at.
  content.addEventListener('click', (event) => {
    const summary = event.target.closest?.('summary');
    const finding = summary?.parentElement?.closest('details[data-finding-id]');
    if (!finding || summary.parentElement !== finding) return;
    state.finding = finding.open ? null : finding.dataset.findingId;
    syncLink();
  });

  /** The view as a link carries it (link_state.js). */
  function linkState() {
    const baseline = picker.baseline();
    return {view: state.view, run: state.run, host: state.host, baseline_run: baseline?.run, baseline_host: baseline?.host,
      finding: baseline ? null : state.finding, kernel_filter: baseline ? null : state.kernelFilter};
  }

  function syncLink() {
    writeLinkState(linkState());
  }

  function fillHosts() {
    const entry = state.runs.find((r) => r.run === state.run);
    replace(hostSelect, (entry?.hosts || []).map((host) => h('option', {value: host}, host)));
    hostSelect.value = state.host;
    hostSelect.disabled = !entry || entry.hosts.length < 2;
    hostLabel.hidden = hostSelect.disabled;  // one host: the verdict names it; the toolbar keeps the room
  }

  /** Shows `run` and `host`; `linked` ({view, baseline_run, baseline_host, finding, kernel_filter}) restores a
   * link's view (`view` 'overview': the overview, with this run in the pickers), else the run's report, its
   * finding and kernel filter afresh. */
  function select(run, host, linked = null) {
    state.view = linked?.view === 'overview' ? 'overview' : 'run';
    const entry = state.runs.find((r) => r.run === run) || state.runs[0];
    state.run = entry.run;
    state.host = entry.hosts.includes(host) ? host : entry.hosts[0];
    state.finding = linked?.finding || null;
    state.kernelFilter = linked?.kernel_filter || '';
    runSelect.value = state.run;
    fillHosts();
    runSelect.title = state.run;
    profileLink.href = profileTabUrl(state.run, state.host);
    profileLink.title = `Open ${state.host} of ${state.run} in the Profile tab's trace viewer, in a new page`;
    showViewer();
    if (state.view === 'run') keepSelection({run: state.run, host: state.host});
    picker.update(state.runs, state.run, state.host);
    if (linked?.baseline_run) picker.set(linked.baseline_run, linked.baseline_host);
    syncLink();
    show();
  }

  function show() {
    if (state.view === 'overview') showOverview();
    else if (picker.baseline()) loadComparison();
    else loadReport();
  }

  function showOverview() {
    state.controller?.abort();
    state.controller = new AbortController();
    Object.assign(content.dataset, {run: state.run, host: state.host, state: 'ready', view: 'overview', baseline: ''});
    replace(content, overviewView({onOpen: (run, host) => select(run, host), signal: state.controller.signal}));
  }

  /** Aborts what was loading, marks `content` as loading and shows a loading card; returns the new signal. */
  function startLoading(title, progress) {
    state.controller?.abort();
    state.controller = new AbortController();
    const baseline = picker.baseline();
    Object.assign(content.dataset, {run: state.run, host: state.host, state: 'loading',
      view: baseline ? 'comparison' : 'report', baseline: baseline ? `${baseline.run}|${baseline.host}` : ''});
    replace(content, h('section', {class: 'card message loading', role: 'status', 'data-testid': 'loading-message'},
      h('h2', {}, h('span', {class: 'spinner', 'aria-hidden': 'true'}), title),
      progress, h('p', {class: 'hint'}, 'Large profiles take a while the first time; the result is kept in memory.')));
    return state.controller;
  }

  async function loadComparison() {
    const {run, host} = state;
    const baseline = picker.baseline();
    const progress = h('p', {class: 'progress'}, 'Starting…');
    const controller = startLoading(`Comparing ${host} of ${run} with ${baseline.host} of ${baseline.run}`, progress);
    const params = {run, host, baseline_run: baseline.run, baseline_host: baseline.host};
    const showStatus = (status) => {
      const side = (name, entry) => `${name}: ${entry?.state === 'running' ? `analyzing… ${analysisProgress(entry)}` : entry?.state || '…'}`;
      if (status) progress.textContent = `${side('baseline', status.baseline)} · ${side('candidate', status.candidate)}`;
    };
    try {
      const answer = await getResult('compare', params, {signal: controller.signal, onProgress: showStatus});
      if (controller.signal.aborted) return;
      replace(content, comparisonView(answer));
      content.dataset.state = 'ready';
    } catch (error) {
      if (error.name === 'AbortError') return;
      replace(content, error instanceof ApiError && error.status === 422 ?
        messageCard('error', 'These runs cannot be compared', error.message,
          'Clear the comparison or pick another baseline above.') : errorCard(error, run, host));
      content.dataset.state = 'error';
    }
  }

  async function loadRuns() {
    replace(content, messageCard('loading', 'Looking for profiles…'));
    try {
      const {body} = await getJson('runs');
      state.runs = Array.isArray(body) ? body : [];
    } catch (error) {
      replace(content, messageCard('error', 'Cannot list the runs', error.message));
      content.dataset.state = 'error';
      return;
    }
    replace(runSelect, state.runs.map((r) => h('option', {value: r.run}, r.run)));
    // Nothing to pick, compare, list or link in an empty logdir: only Refresh stays live.
    for (const control of [runSelect, hostSelect, allRuns, copyLink]) control.disabled = state.runs.length === 0;
    search.update(state.runs);
    if (!state.runs.length) {
      replace(hostSelect);
      hostLabel.hidden = true;
      state.run = null;
      showViewer();
      replace(content, messageCard('info', 'No profiles in this logdir',
        'The GPU Advisor reads the same files as the Profile tab, <logdir>/<run>/plugins/profile/<timestamp>/<host>.xplane.pb, ' +
        'and PyTorch traces, <logdir>/<run>/<worker>.<span>.pt.trace.json[.gz].',
        'Capture one with tf.profiler.experimental.start(logdir) … stop(), the Keras TensorBoard callback (profile_batch=…), ' +
        'jax.profiler.trace(logdir) or torch.profiler.profile(on_trace_ready=torch.profiler.tensorboard_trace_handler(logdir)), ' +
        'then press Refresh.'));
      content.dataset.state = 'empty';
      return;
    }
    const linked = state.run ? {} : readLinkState(); // a link's view, on the first load only
    if (state.runs.some((r) => r.run === linked.run)) {
      select(linked.run, linked.host, linked);
      return;
    }
    if (state.run) {  // Refresh: the same run and view
      const same = firstSelection(state.runs, {run: state.run, host: state.host});
      select(same.run, same.host, {view: state.view});
      return;
    }
    // The first view: this browser tab's earlier run (a reload), else the overview of every run.
    const kept = keptSelection();
    const first = firstSelection(state.runs, kept);
    select(first.run, first.host, kept && first.run === kept.run ? null : {view: 'overview'});
  }

  /** Says next to "Open in Profile tab" when the Profile tab cannot show this logdir (e.g. a bucket only this
   * tab reads). */
  async function loadEnvironment() {
    try {
      const {body} = await getJson('environment');
      state.environment = body;
      showViewer();
    } catch (error) {
      // an older server without the route: the link stays
    }
  }

  /** The Profile tab link where it can show the run, else the sentence that says where to look. */
  function showViewer() {
    const entry = state.runs.find((r) => r.run === state.run);
    const viewer = entry ? timelineViewer(entry, state.host, state.environment) : {link: false, note: null};
    profileNote.textContent = viewer.note || '';
    profileNote.hidden = !viewer.note;
    profileLink.hidden = !viewer.link;  // no run shown: nothing to open
  }

  async function loadReport() {
    const {run, host} = state;
    const progress = h('p', {class: 'progress'}, 'Starting…');
    const controller = startLoading(`Analyzing ${host} of ${run}`, progress);
    const showStatus = (status) => {
      if (status && status.state === 'running') progress.textContent = `Analyzing the profile… ${analysisProgress(status)}`;
    };
    const poll = setInterval(() => {
      getJson('status', {run, host}, {signal: controller.signal}).then(({body}) => showStatus(body)).catch(() => {});
    }, STATUS_POLL_MS);
    try {
      const report = await getResult('report', {run, host}, {signal: controller.signal, onProgress: showStatus});
      if (controller.signal.aborted) return;
      renderReport(report);
      content.dataset.state = 'ready';
    } catch (error) {
      if (error.name === 'AbortError') return;
      replace(content, errorCard(error, run, host));
      content.dataset.state = 'error';
    } finally {
      clearInterval(poll);
    }
  }

  function errorCard(error, run, host) {
    if (error instanceof ApiError && error.status === 422) {
      return messageCard('error', `Host \u201c${host}\u201d of run ${run} cannot be analyzed`, error.message,
        'Other runs and hosts are not affected: pick another one above.');
    }
    if (error instanceof ApiError && error.status === 404) {
      return messageCard('error', 'This run or host is gone', error.message, 'Press Refresh to list the runs again.');
    }
    return messageCard('error', 'The analysis failed', error.message);
  }

  function renderReport(report) {
    const timelineSlot = h('div', {class: 'timeline-slot'}, h('p', {class: 'empty', role: 'status'},
      h('span', {class: 'spinner', 'aria-hidden': 'true'}), 'Loading the timeline…'));
    const hasGpu = Array.isArray(report.devices) && report.devices.length > 0;
    replace(content,
      // a run of several ranks or hosts: the run as a whole, above the report of the host picked
      ranksView(state.runs.find((r) => r.run === state.run), {signal: state.controller.signal}),
      summaryView(report),
      // the findings beside the step chart: both above the fold at 1280x800
      h('div', {class: 'grid lead'}, findingsView(report), stepsView(report)),
      gpusView(report, timelineSlot),
      hasGpu ? idleView(report) : null,
      hasGpu ? kernelTableView(state.run, state.host, report.kernels?.length ?? 0, {filter: state.kernelFilter,
        devices: report.devices, kernels: report.kernels, onFilter: (filter) => {
          state.kernelFilter = filter;
          syncLink();
        }}) :
        section('Kernels', {id: 'kernels', wide: true}, emptyState('No GPU in this profile, so no kernels.')),
      hasGpu ? rooflineView(report) : null,
      h('div', {class: 'grid'}, launchView(report), transfersView(report)),
      collectivesView(report),
      configurationView(report));
    showLinkedFinding();
    if (hasGpu) {
      getResult('timeline', {run: state.run, host: state.host}, {signal: state.controller.signal})
        .then((timeline) => replace(timelineSlot, timelineStrip(timeline, imbalanceOf(report).straggler, report.trace_format)))
        .catch((error) => {
          if (error.name !== 'AbortError') replace(timelineSlot, h('p', {class: 'error'}, error.message));
        });
    }
  }

  /** Opens the finding a link named (and scrolls to it); closes the one open by default. */
  function showLinkedFinding() {
    const findings = [...content.querySelectorAll('details[data-finding-id]')];
    const linked = findings.find((details) => details.dataset.findingId === state.finding);
    if (!linked) return;
    for (const details of findings) details.open = details === linked;
    linked.scrollIntoView({block: 'start'});
  }

  loadEnvironment();
  loadRuns();
  return state;
}
