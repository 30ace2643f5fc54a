/**
 * The findings: severity, title, evidence, estimated speedup, the fix with a copy button, links.
 */

import {copyText} from '../clipboard.js';
import {h} from '../dom.js';
import {evidenceRows} from '../evidence.js';
import {formatSpeedup, speedupKindTitle} from '../format.js';
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

function evidenceList(evidence) {
  const rows = evidenceRows(evidence).flatMap(({label, items}) => [
    h('dt', {}, label),
    h('dd', {}, h('ul', {class: 'evidence-items'},
      items.map((item) => h('li', item.title ? {title: item.title} : {}, item.text))))]);
  return rows.length ? h('dl', {class: 'evidence'}, rows) : null;
}

/** "Shares recoverable time with #2, #5": speedups of overlapping findings do not add up. */
function overlapNote(finding, numbers) {
  const shared = (Array.isArray(finding.overlaps_with) ? finding.overlaps_with : [])
    .filter((id) => numbers.has(id)).map((id) => `#${numbers.get(id)}`);
  return shared.length ? h('p', {class: 'overlap', 'data-testid': 'overlap'},
    `Shares recoverable time with ${shared.join(', ')}: their speedups do not add up.`) : null;
}

function findingCard(finding, index, numbers) {
  const severity = SEVERITIES.has(finding.severity) ? finding.severity : 'low';
  const speedup = formatSpeedup(finding.estimated_speedup, finding.speedup_kind);
  const fix = typeof finding.fix === 'string' && finding.fix.trim() ? finding.fix : null;
  const docs = (Array.isArray(finding.docs) ? finding.docs : []).map(safeLink).filter(Boolean);
  return h('details', {class: ['finding', `severity-${severity}`], open: index === 0, 'data-testid': 'finding',
    'data-finding-id': finding.id || null},
    h('summary', {},
      h('span', {class: ['badge', `severity-${severity}`]}, severity),
      h('span', {class: 'finding-number'}, `#${index + 1}`),
      h('span', {class: 'finding-title'}, finding.title || finding.id || 'Finding'),
      speedup ? h('span', {class: 'badge speedup', 'data-kind': finding.speedup_kind === 'model' ? 'model' : 'bound',
        title: speedupKindTitle(finding.speedup_kind)}, speedup) : null,
      finding.category ? h('span', {class: 'chip'}, finding.category) : null),
    h('div', {class: 'finding-body'},
      finding.summary ? h('p', {}, finding.summary) : null,
      overlapNote(finding, numbers),
      evidenceList(finding.evidence),
      finding.fix_summary ? h('p', {class: 'fix-summary'}, h('strong', {}, 'Fix: '), finding.fix_summary) : null,
      fix ? h('div', {class: 'fix'}, copyButton(fix), h('pre', {}, h('code', {}, fix))) : null,
      docs.length ? h('p', {class: 'docs'}, 'Read more: ', docs.flatMap((a, i) => (i ? [' · ', a] : [a]))) : null,
      finding.id ? h('p', {class: 'finding-id'}, finding.id) : null));
}

/** The findings card; says so plainly when there are none. */
export function findingsView(report) {
  const findings = Array.isArray(report.findings) ? report.findings : null;
  const body = findings === null ? emptyState('This report has no findings section.') :
    findings.length === 0 ? emptyState('No findings: nothing in this profile crossed a threshold.') :
      findings.map((finding, index) => findingCard(finding, index,
        new Map(findings.map((f, i) => [f.id, i + 1]))));
  return section('Findings', {id: 'findings', subtitle: findings?.length ? `${findings.length}, most impactful first` : null},
    h('div', {'data-testid': 'findings'}, body));
}
