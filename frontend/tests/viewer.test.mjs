// Unit tests of where the tab sends the user for a run's timeline (run by tests/plugin/test_js_helpers.py).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {timelineViewer} from '../../tb_gpu_advisor/static/viewer.js';

const XPLANE = {run: 'bert/2026_01_01_00_00_00', hosts: ['h'], format: 'xplane',
  files: {h: 'bert/plugins/profile/2026_01_01_00_00_00/h.xplane.pb'}};
const KINETO = {run: 'ddp', hosts: ['rank0', 'rank1'], format: 'kineto',
  files: {rank0: 'ddp/rank0.1.pt.trace.json.gz', rank1: 'ddp/rank1.1.pt.trace.json.gz'}};

test('an XPlane run links to the Profile tab when it reads the logdir', () => {
  assert.deepEqual(timelineViewer(XPLANE, 'h', {profile_tab: {available: true, note: null}}), {link: true, note: null});
  assert.deepEqual(timelineViewer(XPLANE, 'h', null), {link: true, note: null});  // an older server
});

test('a PyTorch run never links to the Profile tab: it names the host\'s trace file and Perfetto', () => {
  const viewer = timelineViewer(KINETO, 'rank1', {profile_tab: {available: true, note: null}});
  assert.equal(viewer.link, false);
  assert.match(viewer.note, /ddp\/rank1\.1\.pt\.trace\.json\.gz/);
  assert.match(viewer.note, /Perfetto \(ui\.perfetto\.dev\) or chrome:\/\/tracing/);
  assert.doesNotMatch(viewer.note, /rank0/);
});

test('a logdir the Profile tab does not read says so instead of a dead link', () => {
  const note = 'The Profile tab cannot show these runs: ...';
  assert.deepEqual(timelineViewer(XPLANE, 'h', {profile_tab: {available: false, note}}), {link: false, note});
});
