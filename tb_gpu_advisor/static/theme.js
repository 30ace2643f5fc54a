/**
 * Follows TensorBoard's theme: the parent page's `dark-mode` body class when embedded (same origin),
 * else the browser's prefers-color-scheme. Sets data-theme="dark"|"light" on <html>.
 */

function parentBody() {
  try {
    return window.parent !== window ? window.parent.document.body : null;
  } catch (error) {
    return null; // not same-origin: no TensorBoard page to follow
  }
}

export function followTheme(root = document.documentElement) {
  const media = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;
  const body = parentBody();
  const apply = () => {
    const dark = body ? body.classList.contains('dark-mode') : Boolean(media && media.matches);
    root.dataset.theme = dark ? 'dark' : 'light';
  };
  apply();
  if (body) new MutationObserver(apply).observe(body, {attributes: true, attributeFilter: ['class']});
  if (media && media.addEventListener) media.addEventListener('change', apply);
}
