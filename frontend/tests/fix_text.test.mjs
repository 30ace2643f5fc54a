// Unit tests of the fix text's blocks: prose wraps, code keeps its lines (run by tests/plugin/test_js_helpers.py).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {fixBlocks} from '../../tb_gpu_advisor/static/fix_text.js';

test('indented lines are code, the rest prose paragraphs joined for wrapping', () => {
  const fix = 'Keep values on the GPU\nand read them rarely:\n\n    running_loss += loss.detach()\n\n' +
    '    if step % 100 == 0:\n        print(running_loss.item())\n\nTime the loader alone.\nThen compare.';
  assert.deepEqual(fixBlocks(fix), [
    {kind: 'prose', text: 'Keep values on the GPU and read them rarely:'},
    {kind: 'code', text: 'running_loss += loss.detach()\n\nif step % 100 == 0:\n    print(running_loss.item())'},
    {kind: 'prose', text: 'Time the loader alone. Then compare.'},
  ]);
});

test('a long sentence before the catalog text is its own paragraph; nothing is dropped', () => {
  const note = 'x'.repeat(884);
  assert.deepEqual(fixBlocks(`${note}\n\nSecond paragraph.`),
    [{kind: 'prose', text: note}, {kind: 'prose', text: 'Second paragraph.'}]);
  assert.deepEqual(fixBlocks('\ta = 1\r\n\tb = 2'), [{kind: 'code', text: 'a = 1\nb = 2'}]);
  assert.deepEqual(fixBlocks(''), []);
  assert.deepEqual(fixBlocks(null), []);
});
