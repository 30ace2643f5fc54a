// The kernel table's occupancy column (views/kernel_table.js): CUPTI's theoretical occupancy where the trace
// records it, else the PyTorch profiler's estimate of achieved occupancy, under its own header.
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {occupancyColumn, occupancyKind} from '../../tb_gpu_advisor/static/views/kernel_table.js';

test('a PyTorch trace\'s estimate heads the column as the estimate it is', () => {
  const kernels = [{occupancy_pct: null, achieved_occupancy_pct: 25}, {occupancy_pct: null, achieved_occupancy_pct: null}];
  assert.equal(occupancyKind(kernels), 'achieved');
  const column = occupancyColumn('achieved');
  assert.equal(column.key, 'achieved_occupancy_pct');
  assert.equal(column.label, 'Est. occupancy');
  assert.match(column.title, /est\. achieved occupancy %/);
});

test('theoretical occupancy wins where any row records it, and is the default', () => {
  assert.equal(occupancyKind([{occupancy_pct: 50, achieved_occupancy_pct: 30}]), 'theoretical');
  assert.equal(occupancyKind([]), 'theoretical');
  assert.equal(occupancyKind(undefined), 'theoretical');
  assert.deepEqual([occupancyColumn('theoretical').key, occupancyColumn('theoretical').label], ['occupancy_pct', 'Occupancy']);
});
