/**
 * Entry point TensorBoard imports in the tab's iframe: `render()` adds the stylesheet and builds the app.
 */

import {createApp} from './app.js';
import {followTheme} from './theme.js';

export async function render() {
  const style = document.createElement('link');
  style.rel = 'stylesheet';
  style.href = new URL('./style.css', import.meta.url).toString();
  document.head.append(style);
  followTheme();
  createApp(document.body);
}
