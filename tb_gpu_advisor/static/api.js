/**
 * The plugin's JSON routes, addressed relative to document.baseURI (".../data/plugin/gpu_advisor/").
 */

/** The URL of `route` with query `params` (undefined/null values left out), relative to `base`. */
export function apiUrl(route, params = {}, base = globalThis.document?.baseURI) {
  const url = new URL(route.replace(/^\/+/, ''), base);
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(key, String(value));
  }
  return url.toString();
}

/** An answer of the plugin that is not a result: `status` is the HTTP code, `message` what it said. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** GET a route; resolves to {status, body}. 202 (still analyzing) is returned, not thrown. */
export async function getJson(route, params, {signal} = {}) {
  let response;
  try {
    response = await fetch(apiUrl(route, params), {signal, headers: {Accept: 'application/json'}});
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw new ApiError(0, `TensorBoard did not answer (${error.message}). Is it still running?`);
  }
  let body = null;
  try {
    body = await response.json();
  } catch (error) {
    body = null;
  }
  if (response.ok) return {status: response.status, body};
  const message = body && typeof body.error === 'string' ? body.error : `HTTP ${response.status}`;
  throw new ApiError(response.status, message);
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new DOMException('aborted', 'AbortError'));
    }, {once: true});
  });
}

/**
 * GET a route that may answer 202 while the profile is analyzed: asks again until a result arrives.
 * `onProgress(statusBody)` is called with each 202 body.
 */
export async function getResult(route, params, {signal, onProgress} = {}) {
  for (;;) {
    const {status, body} = await getJson(route, params, {signal});
    if (status !== 202) return body;
    onProgress?.(body);
    await sleep(500, signal);
  }
}
