/**
 * The findings as a compact ranked list: per finding a line with severity, title and estimated speedup, and
 * one sentence; the first is open with its fix (copy button), its evidence folded, links.
 */

import {copyText} from '../clipboard.js';
import {h} from '../dom.js';
import {evidenceRows, evidenceTables} from '../evidence.js';
import {fixBlocks} from '../fix_text.js';
import {bindUnits, formatSpeedup, speedupKindTitle} from '../format.js';
import {emptyState, section} from './common.js';

const SEVERITIES = new Set(['high', 'medium', 'low']);

function safeLink(doc) {
  const url = typeof doc === 'string' ? doc : doc && (doc.url || doc.href);
  const title = typeof doc === 'string' ? doc : doc && (doc.title || doc.label || url);
  if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return null;
  return h('a', {href: url, target: '_blank', rel: 'noopener noreferrer'}, title);
}

function copyButton(text) {
  const button = h('button', {type: 'button', class: 'copy', title: 'Copy the fix to the clipboard'}, 'Copy');
  button.addEventListener('click', async () => {
    const copied = await copyText(text);
    button.textContent = copied ? 'Copied' : 'Copy failed';
    button.classList.toggle('copied', copied);
    setTimeout(() => {
      button.textContent = 'Copy';
      button.classList.remove('copied');
    }, 2000);
  });
  return button;
}

function evidenceTable({label, columns, rows}) {
  return h('div', {class: 'table-wrap evidence-table'}, h('table', {},
    h('caption', {}, label),
    h('thead', {}, h('tr', {}, columns.map((column) => h('th', {scope: 'col', class: column.numeric ? 'num' : null},
      column.label)))),
    h('tbody', {}, rows.map((cells) => h('tr', {}, cells.map((cell, i) =>
      h('td', {class: columns[i].numeric ? 'num' : null, title: cell.title || null}, cell.text)))))));
}

/** The evidence, folded: "Evidence" opens the measured values, threshold, pointers and per-item tables. */
function evidenceList(evidence, context) {
  const rows = evidenceRows(evidence, context).flatMap(({label, items}) => [
    h('dt', {}, label),
    h('dd', {}, h('ul', {class: 'evidence-items'},
      items.map((item) => h('li', item.title ? {title: item.title} : {}, item.text))))]);
  const tables = evidenceTables(evidence, context).map(evidenceTable);
  if (!rows.length && !tables.length) return null;
  return h('details', {class: 'evidence-fold'}, h('summary', {}, 'Evidence'),
    rows.length ? h('dl', {class: 'evidence'}, rows) : null, tables);
}

/** "Shares recoverable time with #2, #5": speedups of overlapping findings do not add up. */
function overlapNote(finding, numbers) {
  const shared = (Array.isArray(finding.overlaps_with) ? finding.overlaps_with : [])
    .filter((id) => numbers.has(id)).map((id) => `#${numbers.get(id)}`);
  return shared.length ? h('p', {class: 'overlap', 'data-testid': 'overlap'},
    `Shares recoverable time with ${shared.join(', ')}: their speedups do not add up.`) : null;
}

/** A communication finding's pointer to the collectives card, when the host has one. */
function collectivesLink(finding, context) {
  if (finding.category !== 'communication' || !context.hasCollectives) return null;
  return h('p', {class: 'see-table'}, h('a', {href: '#collectives', 'data-testid': 'collectives-link',
    onclick: (event) => {
      event.preventDefault();  // the hash belongs to TensorBoard's page (link_state.js)
      event.currentTarget.ownerDocument.getElementById('collectives')?.scrollIntoView({block: 'start'});
    }}, 'The collectives behind this finding ↓'));
}

function findingCard(finding, index, numbers, context) {
  const severity = SEVERITIES.has(finding.severity) ? finding.severity : 'low';
  const speedup = formatSpeedup(finding.estimated_speedup, finding.speedup_kind);
  const fix = typeof finding.fix === 'string' && finding.fix.trim() ? finding.fix : null;
  const docs = (Array.isArray(finding.docs) ? finding.docs : []).map(safeLink).filter(Boolean);
  const line = finding.summary || finding.fix_summary || '';
  return h('details', {class: ['finding', `severity-${severity}`], open: index === 0, 'data-testid': 'finding',
    'data-finding-id': finding.id || null},
    h('summary', {},
      h('span', {class: 'finding-head'},
        h('span', {class: ['badge', `severity-${severity}`]}, severity),
        h('span', {class: 'finding-number'}, `#${index + 1}`),
        h('span', {class: 'finding-title'}, finding.title || finding.id || 'Finding'),
        speedup ? h('span', {class: 'badge speedup', 'data-kind': finding.speedup_kind === 'model' ? 'model' : 'bound',
          title: speedupKindTitle(finding.speedup_kind)}, speedup) : null,
        finding.category ? h('span', {class: 'chip'}, finding.category) : null),
      line ? h('span', {class: 'finding-line', title: line}, bindUnits(line)) : null),
    h('div', {class: 'finding-body'},
      overlapNote(finding, numbers),
      finding.fix_summary && finding.fix_summary !== line ? h('p', {class: 'fix-summary'}, h('strong', {}, 'Fix: '),
        bindUnits(finding.fix_summary)) : null,
      fix ? h('div', {class: 'fix', 'data-testid': 'fix'}, copyButton(fix), fixBlocks(fix).map((block) => block.kind === 'code' ?
        h('pre', {}, h('code', {}, block.text)) : h('p', {class: 'fix-prose'}, bindUnits(block.text)))) : null,
      evidenceList(finding.evidence, context),
      collectivesLink(finding, context),
      docs.length ? h('p', {class: 'docs'}, 'Read more: ', docs.flatMap((a, i) => (i ? [' · ', a] : [a]))) : null,
      finding.id ? h('p', {class: 'finding-id'}, finding.id) : null));
}

/** The findings card; says so plainly when there are none. */
export function findingsView(report) {
  const findings = Array.isArray(report.findings) ? report.findings : null;
  const body = findings === null ? emptyState('This report has no findings section.') :
    findings.length === 0 ? emptyState('No findings: nothing in this profile crossed a threshold.') :
      findings.map((finding, index) => findingCard(finding, index,
        new Map(findings.map((f, i) => [f.id, i + 1])), {steps: report.summary?.step_time_ms?.count,
          hasCollectives: Array.isArray(report.collectives) && report.collectives.length > 0,
          traceFormat: report.trace_format}));
  return section('Findings', {id: 'findings', subtitle: findings?.length ? `${findings.length}, most impactful first` : null},
    h('div', {'data-testid': 'findings'}, body));
}
