// Unit tests of the transfers card's empty state (run by tests/plugin/test_js_helpers.py with node --test).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {noCopiesText} from '../../tb_gpu_advisor/static/views/transfers.js';

test('no copy events and no copy time: no memory copies', () => {
  assert.equal(noCopiesText({summary: {breakdown_pct: {d2d: 0}}}), 'No memory copies in this profile.');
  assert.equal(noCopiesText({}), 'No memory copies in this profile.');
});

test('copy time with no copy events (ROCm copyBuffer kernels) is named, never contradicted', () => {
  // Review issue 31 A2: "No memory copies in this profile" beside "Device→device copy/memset 0.9%" (MI300X).
  const text = noCopiesText({summary: {breakdown_pct: {d2d: 0.93}}});
  assert.doesNotMatch(text, /No memory copies/);
  assert.match(text, /Device\u2192device copy\/memset 0\.9% of the time/);
  assert.match(text, /ran as kernels/);
});
