// Unit tests of the tab's pure chart geometry (run by tests/plugin/test_js_helpers.py with node --test).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {barSlots, niceMax, sampleEvenly, stackSegments, ticks, timelineRuns} from '../../tb_gpu_advisor/static/charts.js';

test('axis maxima are round', () => {
  assert.equal(niceMax(7), 10);
  assert.equal(niceMax(21.3), 25);
  assert.equal(niceMax(0.42), 0.5);
  assert.equal(niceMax(100), 100);
  assert.equal(niceMax(0), 1);
  assert.equal(niceMax(-3), 1);
});

test('ticks are evenly spaced round numbers', () => {
  assert.deepEqual(ticks(21.3), [0, 5, 10, 15, 20, 25]);
  assert.deepEqual(ticks(1.7), [0, 0.5, 1, 1.5, 2]);
  assert.deepEqual(ticks(0.9), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.deepEqual(ticks(2, {integer: true}), [0, 1, 2]);
  assert.deepEqual(ticks(317, {integer: true}), [0, 100, 200, 300, 400]);
  assert.deepEqual(ticks(10.9), [0, 2, 4, 6, 8, 10, 12]);  // the axis fits the data: not 0..20
  assert.deepEqual(ticks(65), [0, 25, 50, 75]);
  assert.deepEqual(ticks(120345, {integer: true}), [0, 25000, 50000, 75000, 100000, 125000]);
  assert.deepEqual(ticks(0), [0, 0.2, 0.4, 0.6, 0.8, 1]);
});

test('stacked segments skip empty categories and add up', () => {
  const segments = stackSegments({a: 2, b: 0, c: 3, d: null}, ['a', 'b', 'c', 'd'], 10);
  assert.deepEqual(segments, [{key: 'a', value: 2, y0: 0, y1: 20}, {key: 'c', value: 3, y0: 20, y1: 50}]);
});

test('bars share the width and stay narrow when few', () => {
  const many = barSlots(4, 100, 0.2);
  assert.equal(many.length, 4);
  assert.deepEqual(many[0], {x: 2.5, width: 20});
  assert.equal(barSlots(1, 500)[0].width, 56);
  assert.deepEqual(barSlots(0, 100), []);
});

test('long lists are sampled evenly, ends kept', () => {
  const items = Array.from({length: 100}, (_, i) => i);
  const picked = sampleEvenly(items, 5);
  assert.deepEqual(picked, [0, 25, 50, 74, 99]);
  assert.deepEqual(sampleEvenly([1, 2], 5), [1, 2]);
});

test('timeline runs merge equal busy levels', () => {
  assert.deepEqual(timelineRuns([0, 0, 1, 1, 0.3, 0]), [
    {start: 0, end: 2, level: 0}, {start: 2, end: 4, level: 4}, {start: 4, end: 5, level: 1},
    {start: 5, end: 6, level: 0}]);
  assert.deepEqual(timelineRuns([0.01]), [{start: 0, end: 1, level: 1}]);
});

test('roofline axes cover the points and the roofs; each roof starts at its ridge point', async () => {
  const {decades, logScale, rooflineGeometry} = await import('../../tb_gpu_advisor/static/charts.js');
  const points = [{x: 2048, y: 900, weight: 1833}, {x: 85.3, y: 6.7, weight: 15}];
  const g = rooflineGeometry(points, [{label: 'matrix', tflops: 1307.44}, {label: 'vector', tflops: 163.43}], 5324.8);
  assert.deepEqual(g.x, [10, 10000]);
  assert.deepEqual(g.y, [1, 10000]);
  assert.ok(Math.abs(g.roofs[0].ridge - 1307.44 / 5.3248) < 1e-9);
  assert.ok(Math.abs(g.memory[1][0] - g.roofs[0].ridge) < 1e-9 && g.memory[1][1] === 1307.44);
  assert.deepEqual(decades(10, 1000), [10, 100, 1000]);
  const scale = logScale(1, 100, 200);
  assert.equal(scale(10), 100);
  assert.equal(scale(1e6), 200);
});
