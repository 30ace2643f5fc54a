/**
 * Building blocks shared by the views: sections, empty states, legends, metric tiles.
 */

import {h, s} from '../dom.js';

/** A titled card; `actions` go to the right of the title. */
export function section(title, {id, subtitle, actions, wide} = {}, ...body) {
  return h('section', {class: ['card', wide && 'wide'], id},
    h('header', {class: 'card-header'},
      h('h2', {}, title),
      subtitle ? h('span', {class: 'card-subtitle'}, subtitle) : null,
      actions ? h('div', {class: 'card-actions'}, actions) : null),
    h('div', {class: 'card-body'}, body));
}

/** A quiet message in place of a chart or table. */
export function emptyState(text) {
  return h('p', {class: 'empty'}, text);
}

/** A legend of colored swatches: items [{key, label}] use the CSS class `cat-<key>`. */
export function legend(items) {
  return h('ul', {class: 'legend'}, items.map(({key, label}) =>
    h('li', {}, h('span', {class: `swatch cat-${key}`}), label)));
}

/** A big number with its label, an optional hint, and an optional definition shown on hover. */
export function tile(label, value, hint, title) {
  return h('div', {class: 'tile', title: title || null},
    h('div', {class: 'tile-value'}, value),
    h('div', {class: 'tile-label'}, label),
    hint ? h('div', {class: 'tile-hint'}, hint) : null);
}

/** A horizontal 0-100% meter (SVG): the filled part uses `cat-<key>`. */
export function meter(pct, key, label) {
  const value = Number.isFinite(pct) ? Math.max(0, Math.min(100, pct)) : 0;
  return s('svg', {class: 'meter', viewBox: '0 0 100 8', preserveAspectRatio: 'none', role: 'img',
    'aria-label': label},
  s('rect', {class: 'meter-track', x: 0, y: 0, width: 100, height: 8}),
  s('rect', {class: `cat-${key}`, x: 0, y: 0, width: value, height: 8}));
}
