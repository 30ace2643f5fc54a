/**
 * Entry point TensorBoard imports in the tab's iframe: `render()` loads the stylesheets and every module at once
 * (one round trip, instead of one per import level), then builds the app.
 */

// Every other module under static/, so the browser fetches them in parallel (tests/plugin/test_static_preload.py
// checks that the list is complete). No build step: these are the files as they are.
export const MODULES = [
  'api.js', 'app.js', 'axis.js', 'charts.js', 'clipboard.js', 'compare_picker.js', 'comparison_format.js', 'dom.js',
  'evidence.js', 'fix_text.js', 'format.js', 'link_state.js', 'run_choice.js', 'run_search.js', 'theme.js', 'viewer.js', 'vocabulary.js',
  'views/collectives.js', 'views/common.js', 'views/comparison.js', 'views/comparison_breakdown.js',
  'views/comparison_kernels.js', 'views/configuration.js', 'views/findings.js', 'views/gpus.js', 'views/idle.js',
  'views/kernel_table.js', 'views/launch_histogram.js', 'views/overview.js', 'views/ranks.js', 'views/roofline.js',
  'views/step_bars.js', 'views/steps_chart.js', 'views/summary.js', 'views/transfers.js',
];
export const STYLESHEETS = ['../fonts.css', 'style.css', 'comparison.css'];

function stylesheet(href) {
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = new URL(href, import.meta.url).toString();
  const loaded = new Promise((resolve) => {
    link.addEventListener('load', resolve, {once: true});
    link.addEventListener('error', resolve, {once: true});  // the tab works unstyled rather than not at all
  });
  document.head.append(link);
  return loaded;
}

function modulePreload(path) {
  const link = document.createElement('link');
  link.rel = 'modulepreload';
  link.href = new URL(path, import.meta.url).toString();
  document.head.append(link);
}

export async function render() {
  const styles = STYLESHEETS.map(stylesheet);
  MODULES.forEach(modulePreload);
  const [{createApp}, {followTheme}] = await Promise.all([import('./app.js'), import('./theme.js'), ...styles]);
  followTheme();
  createApp(document.body);
}
