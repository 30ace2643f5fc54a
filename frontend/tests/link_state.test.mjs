// Unit tests of the view kept in TensorBoard's URL hash (run by tests/plugin/test_js_helpers.py with node --test).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {hashWithState, linkUrl, parseHash, profileTabUrl, stateFromHash} from '../../tb_gpu_advisor/static/link_state.js';

const fakeTop = (href) => ({location: new URL(href)});

test('the tab and entries of a TensorBoard hash', () => {
  assert.deepEqual(parseHash('#gpu_advisor&p.gpu_advisor.run=a%2Fb&x=1'),
    {tab: 'gpu_advisor', entries: [['p.gpu_advisor.run', 'a/b'], ['x', '1']]});
  assert.deepEqual(parseHash(''), {tab: '', entries: []});
  assert.deepEqual(parseHash('#scalars&bad=%E0%A4%A'), {tab: 'scalars', entries: []});
});

test('our entries round-trip, others are kept, unknown keys and empty values left out', () => {
  const state = {view: 'run', run: 'train/2026_01_01_00_00_00', host: 'w0&1', baseline_run: 'base/2026',
    finding: 'input.tf_data_bound', kernel_filter: 'gemm =', extra: 'dropped', baseline_host: ''};
  const hash = hashWithState('#gpu_advisor&p.other.k=v&p.gpu_advisor.run=old', state);
  assert.ok(hash.startsWith('#gpu_advisor&p.other.k=v&p.gpu_advisor.view=run&'));
  const back = stateFromHash(hash);
  assert.deepEqual(back, {view: 'run', run: 'train/2026_01_01_00_00_00', host: 'w0&1', baseline_run: 'base/2026',
    finding: 'input.tf_data_bound', kernel_filter: 'gemm ='});
  assert.equal(hashWithState('#scalars', {run: 'r'}), '#gpu_advisor&p.gpu_advisor.run=r');
});

test('overlong values are ignored', () => {
  assert.deepEqual(stateFromHash(`#gpu_advisor&p.gpu_advisor.run=${'x'.repeat(600)}`), {});
});

test('a link keeps the path and query of TensorBoard', () => {
  const top = fakeTop('http://tb.example:6006/prefix/?darkMode=true#gpu_advisor');
  assert.equal(linkUrl({run: 'r/1', host: 'h'}, top),
    'http://tb.example:6006/prefix/?darkMode=true#gpu_advisor&p.gpu_advisor.run=r%2F1&p.gpu_advisor.host=h');
});

test('the Profile tab URL names run, tool and host in the query, as XProf reads them', () => {
  const url = new URL(profileTabUrl('train/2026_01_01', 'w 0', fakeTop('http://tb:6006/#gpu_advisor&x=1')));
  assert.equal(url.hash, '#profile');
  assert.equal(url.pathname, '/');
  assert.deepEqual([...url.searchParams], [['run', 'train/2026_01_01'], ['tag', 'trace_viewer'], ['host', 'w 0']]);
});
