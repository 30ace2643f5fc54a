/**
 * A finding's fix text as blocks (pure): prose paragraphs, which wrap, and code blocks (the catalog indents code
 * by four spaces, as Markdown does), which keep their lines and scroll.
 */

const CODE = /^( {4}|\t)/;

/** [{kind: 'prose' | 'code', text}] of `fix`: code without its 4-space indent; prose lines joined into paragraphs. */
export function fixBlocks(fix) {
  const blocks = [];
  let current = null;
  let blank = false;
  for (const line of String(fix ?? '').replace(/\r\n?/g, '\n').split('\n')) {
    if (!line.trim()) {
      blank = true;
      continue;
    }
    const kind = CODE.test(line) ? 'code' : 'prose';
    // A blank line ends a paragraph; inside code it is kept (a code block resumes after it).
    if (!current || current.kind !== kind || (blank && kind === 'prose')) {
      current = {kind, lines: []};
      blocks.push(current);
    } else if (blank) {
      current.lines.push('');
    }
    current.lines.push(kind === 'code' ? line.replace(CODE, '') : line.trim());
    blank = false;
  }
  return blocks.map(({kind, lines}) => ({kind, text: lines.join(kind === 'code' ? '\n' : ' ')}));
}
