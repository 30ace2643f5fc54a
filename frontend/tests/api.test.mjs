// Unit tests of the tab's URL building (run by tests/plugin/test_js_helpers.py with node --test).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {apiUrl} from '../../tb_gpu_advisor/static/api.js';

const BASE = 'http://localhost:6006/data/plugin/gpu_advisor/';

test('routes resolve under the plugin base, also behind a path prefix', () => {
  assert.equal(apiUrl('runs', {}, BASE), 'http://localhost:6006/data/plugin/gpu_advisor/runs');
  assert.equal(apiUrl('/runs', {}, BASE), 'http://localhost:6006/data/plugin/gpu_advisor/runs');
  assert.equal(apiUrl('runs', {}, 'http://h/tb/experiment/e1/data/plugin/gpu_advisor/'),
    'http://h/tb/experiment/e1/data/plugin/gpu_advisor/runs');
});

test('parameters are encoded, empty ones left out', () => {
  const url = new URL(apiUrl('report', {run: 'train/2026_01_01', host: 'a&b=c', empty: '', none: null}, BASE));
  assert.equal(url.searchParams.get('run'), 'train/2026_01_01');
  assert.equal(url.searchParams.get('host'), 'a&b=c');
  assert.equal(url.searchParams.has('empty'), false);
  assert.equal(url.searchParams.has('none'), false);
});
