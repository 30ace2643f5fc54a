/**
 * DOM construction with textContent and attributes only: no string is ever parsed as HTML.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function setProps(node, props) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') node.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : value);
    else if (key === 'text') node.textContent = String(value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (key === 'style' && typeof value === 'object') Object.assign(node.style, value);
    else if (key === 'value' || key === 'checked' || key === 'disabled' || key === 'selected') node[key] = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  return node;
}

/** An HTML element: h('td', {class: 'num', title: fullName}, 'text', childNode). */
export function h(tag, props, ...children) {
  return append(setProps(document.createElement(tag), props), children);
}

/** An SVG element; numeric attributes are written as strings. */
export function s(tag, attrs, ...children) {
  return append(setProps(document.createElementNS(SVG_NS, tag), attrs), children);
}

/** Replaces every child of `node` with `children`. */
export function replace(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

/** An SVG <title>: the native tooltip of the shape it is appended to. */
export function tooltip(text) {
  return s('title', {}, text);
}
