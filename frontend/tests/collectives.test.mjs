// The collectives card's rows (views/collectives.js), from the report of the real 2-rank A100 NCCL trace and the
// multi-GPU straggler demo (sizes not recorded); headers and words as the text report writes them.
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {VOCABULARY} from '../../tb_gpu_advisor/static/vocabulary.js';
import {BANDWIDTH_COLUMNS, COLLECTIVE_COLUMNS, bandwidthGap, bandwidthRows, collectiveRows}
  from '../../tb_gpu_advisor/static/views/collectives.js';

const NB = '\u00a0';
// tests/data/real/kineto/a100_2rank_nccl.pt.trace.json.gz, `analyze --format json` (two of its five rows).
const A100 = {
  collectives: [
    {source: 'host', collective: 'broadcast', calls: 6, time_us: 1248.99, in_bytes: 638712, out_bytes: 638712,
      dtypes: ['Float', 'Long'], group_sizes: [2], size_source: 'profiler', calls_per_step: 2,
      named_from: ['host_op'], issued_by: ['record_param_comms']},
    {source: 'kernel', collective: 'allreduce', calls: 15, time_us: 46762.159, in_bytes: 306684384,
      out_bytes: 306684384, dtypes: ['Float'], group_sizes: [2], size_source: 'profiler', calls_per_step: 5,
      named_from: ['host_op'], issued_by: ['nccl:all_reduce']},
    {source: 'kernel', collective: 'broadcast', calls: 6, time_us: 114.334, in_bytes: 638712, out_bytes: 638712,
      dtypes: ['Float', 'Long'], group_sizes: [2], size_source: 'profiler', calls_per_step: 2,
      named_from: ['host_op'], issued_by: ['nccl:broadcast']},
  ],
  collective_bandwidth: {
    link: {kind: 'pcie', gbps: 24.0, known: false, basis: 'NVIDIA A100-PG509-200: an NVLink (SXM) board'},
    collectives: [
      {collective: 'allreduce', calls: 15, sized_calls: 15, group_size: 2, median_bytes: 26255360, time_ms: 46.762159,
        large_calls: 12, algbw_gbps: 10.042, busbw_gbps: 10.042, best_busbw_gbps: 12.994, best_busbw_link_ratio: 0.541,
        size_source: 'profiler'},
      {collective: 'broadcast', calls: 6, sized_calls: 6, group_size: 2, median_bytes: 106452, time_ms: 0.114334,
        large_calls: 0, algbw_gbps: null, busbw_gbps: null, best_busbw_gbps: null, best_busbw_link_ratio: null,
        size_source: 'profiler'},
    ],
  },
};
// demo_logs/multi_gpu_straggler: NCCL kernels without sizes, dtype or group.
const DEMO = {
  collectives: [{source: 'kernel', collective: 'allreduce', calls: 12, time_us: 766920.0, in_bytes: null,
    out_bytes: null, dtypes: [], group_sizes: [], size_source: null, calls_per_step: null, named_from: [],
    issued_by: []}],
  collective_bandwidth: {
    link: {kind: 'pcie', gbps: 24.0, known: true, basis: 'NVIDIA A100-PCIE-40GB: a PCIe card'},
    collectives: [{collective: 'allreduce', calls: 12, sized_calls: 0, group_size: null, median_bytes: null,
      time_ms: 201.8355, large_calls: 0, algbw_gbps: null, busbw_gbps: null, best_busbw_gbps: null,
      best_busbw_link_ratio: null, size_source: null}],
  },
};

const texts = (row) => row.cells.map((c) => c.text);

test('the columns are the text report\'s, capitalized', () => {
  assert.deepEqual(COLLECTIVE_COLUMNS, ['Recorded on', 'Collective', 'Calls', 'Per step', 'Time', 'Bytes in', 'Dtype',
    'Group', 'Sizes from', 'Issued by']);
  assert.deepEqual(COLLECTIVE_COLUMNS.map((label) => label.toLowerCase()), VOCABULARY.collectiveHeaders);
  assert.equal(BANDWIDTH_COLUMNS.length, 6);
});

test('each collective reads as in the text report, in the report\'s order', () => {
  const rows = collectiveRows(A100);
  assert.deepEqual(texts(rows[0]), ['host', 'broadcast', '6', '2', `1.25${NB}ms`, `623.7${NB}KiB`, 'Float, Long',
    '2', 'profiler args', 'record_param_comms']);
  assert.deepEqual(texts(rows[1]), ['kernel', 'allreduce', '15', '5', `46.8${NB}ms`, `292.5${NB}MiB`, 'Float', '2',
    'profiler args', 'nccl:all_reduce']);
  assert.equal(rows[1].cells[0].title, 'NCCL/RCCL kernels on the GPU');
  assert.ok(rows.every((row) => row.cells.every((c) => !c.missing)));
});

test('values the trace does not record say so', () => {
  const [row] = collectiveRows(DEMO);
  assert.deepEqual(texts(row), ['kernel', 'allreduce', '12', 'not in the trace', `766.9${NB}ms`, 'not in the trace',
    'not in the trace', 'not in the trace', 'not in the trace', 'not in the trace']);
  assert.deepEqual(row.cells.map((c) => c.missing), [false, false, false, true, false, true, true, true, true, true]);
  assert.deepEqual(collectiveRows({}), []);
});

test('bus bandwidth against the link, or why there is none', () => {
  const {rows, link} = bandwidthRows(A100);
  assert.deepEqual(texts(rows[0]), ['allreduce', '12', `10${NB}GB/s`, `10${NB}GB/s`, `13${NB}GB/s`, '54.1%']);
  assert.deepEqual(texts(rows[1]), ['broadcast', '0', 'no call of 8 MiB or more']);
  assert.equal(rows[1].cells[2].span, 4);
  assert.equal(link, `Link: 24${NB}GB/s PCIe per GPU (NVIDIA A100-PG509-200: an NVLink (SXM) board).`);
  const demo = bandwidthRows(DEMO);
  assert.deepEqual(texts(demo.rows[0]), ['allreduce', '\u2014', 'sizes not in the trace']);  // issue 31 K4: unknown, not 0
  assert.equal(demo.link, null);  // nothing measured against it, as in the text report
});

test('the reasons follow the text report\'s order', () => {
  const ungrouped = {busbw_gbps: null, sized_calls: 6, large_calls: 6, group_size: null, algbw_gbps: 9.0};
  assert.equal(bandwidthGap(ungrouped), 'group size not in the trace');
  assert.equal(bandwidthGap(ungrouped, [2, 4]), 'calls of several group sizes');
  assert.equal(bandwidthGap({...ungrouped, group_size: 2}), 'no bus bandwidth defined for this collective');
  assert.equal(bandwidthGap({...ungrouped, busbw_gbps: 3}), null);
  const {rows} = bandwidthRows({collectives: [], collective_bandwidth: {link: null, collectives: [
    {...ungrouped, collective: 'allgather'}]}});
  assert.deepEqual(texts(rows[0]), ['allgather', '6', `9${NB}GB/s`, 'group size not in the trace']);
  assert.equal(rows[0].cells[3].span, 3);
});

test('the table total and the verdict card\'s exposed share are told apart, so they reconcile', async () => {
  const {exposedNote} = await import('../../tb_gpu_advisor/static/views/collectives.js');
  // tests/data/real/ddp_cpu/slow_compute rank 0: 375.4 ms of gloo calls, 86.85% of the 406.9 ms analyzed exposed
  const ddp = {collectives: [{source: 'host', collective: 'allreduce', calls: 10, time_us: 375414.775}],
    summary: {breakdown_pct: {collectives: 86.85}, analysis_window_ms: 406.900088}};
  const note = exposedNote(ddp);
  assert.match(note, /375\.4\u00a0ms in all \(host ops\)/);
  assert.match(note, /Collectives 86\.8% of the 406\.9\u00a0ms analyzed is 353\.4\u00a0ms: the exposed part/);
  // kernels and host ops recording the same calls: the kernels' time only; agreeing figures need no note
  const a100 = {...A100, summary: {breakdown_pct: {collectives: 10}, analysis_window_ms: 100}};
  assert.match(exposedNote(a100), /46\.9\u00a0ms in all \(kernels\)/);
  const same = {...ddp, summary: {breakdown_pct: {collectives: 92.26}, analysis_window_ms: 406.9}};
  assert.equal(exposedNote(same), null);
  assert.equal(exposedNote({collectives: ddp.collectives, summary: {}}), null);
});
