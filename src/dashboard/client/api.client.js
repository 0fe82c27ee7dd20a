// @ts-check
// ── the API ──
/** A request that got no answer at all: the server is down, or the network is. */
class Unreachable extends Error {}
class ApiError extends Error {
	/** @param {number} status @param {string} code @param {string} message */
	constructor(status, code, message) {
		super(message);
		this.status = status;
		this.code = code;
		/** What the answer's Retry-After asked, in ms (seconds or an HTTP date); null when it said nothing. @type {number | null} */
		this.retryAfterMs = null;
		/** The fields a 400 names (details.issues), a YAML body's with their line and column. @type {{ path: string, message: string, line?: number, column?: number }[]} */
		this.issues = [];
	}
}
/** The API's own message ({"error": {"code", "message"}}), or the status line if the body is not one. */
/** @param {Response} res @returns {Promise<ApiError>} */
async function errorFrom(res) {
	let code = "http_" + res.status;
	let message = "HTTP " + res.status + (res.statusText ? " " + res.statusText : "");
	let issues = [];
	try {
		const b = await res.json();
		if (b && b.error) {
			code = b.error.code || code;
			message = b.error.message || message;
			issues = (b.error.details && Array.isArray(b.error.details.issues) && b.error.details.issues) || [];
		}
	} catch (e) {}
	const err = new ApiError(res.status, code, message);
	err.issues = issues;
	err.retryAfterMs = retryAfterMs(res.headers, Date.now());
	return err;
}
const token = () => sessionStorage.getItem(TOKEN_KEY);
/** @param {string} path @param {RequestOptions} [opts] @returns {Promise<Response>} */
async function request(path, opts) {
	opts = opts || {};
	const headers = new Headers(opts.headers || {});
	headers.set("authorization", "Bearer " + token());
	let body;
	if (opts.json !== undefined) {
		headers.set("content-type", "application/json");
		body = JSON.stringify(opts.json);
	} else if (opts.body !== undefined) {
		headers.set("content-type", opts.type || "text/plain");
		body = opts.body;
	}
	let res;
	try {
		res = await fetch(path, { method: opts.method || "GET", headers, body, signal: opts.signal, cache: "no-store" });
	} catch (err) {
		if (/** @type {Error} */ (err).name === "AbortError") throw err;
		throw new Unreachable(/** @type {Error} */ (err).message || String(err));
	}
	// A 304 answers the If-None-Match api() sent, naming the answer it kept.
	if (!res.ok && res.status !== 304) {
		const err = await errorFrom(res);
		// A token that worked is refused (revoked, expired): said as such, not as a mistyped one is.
		if (res.status === 401) signOut("Your token was refused, so you are signed out (it may have expired or been revoked): " + err.message);
		throw err;
	}
	return res;
}
/**
 * The last JSON answer to each GET, with its ETag (src/shared/kept-answers.ts, as the CLI keeps
 * them): the next GET of the path sends the tag, and a 304 (the answer unchanged: an idle fleet's
 * every poll) is read from here instead of downloaded again.
 */
const revalidated = new KeptAnswers(64, 8_000_000);
/** Forgets every kept answer: another token may be answered otherwise. */
const forgetAnswers = () => revalidated.clear();
/** The API's JSON answer, any: its readers give it its type (types.d.ts). @type {(path: string, opts?: RequestOptions) => Promise<any>} */
async function api(path, opts) {
	if (opts && opts.method && opts.method !== "GET") return (await request(path, opts)).json();
	const kept = revalidated.get(path);
	const headers = new Headers((opts && opts.headers) || {});
	if (kept) headers.set("if-none-match", kept.etag);
	const res = await request(path, { ...opts, headers });
	if (res.status === 304 && kept) {
		revalidated.keep(path, kept);
		return JSON.parse(kept.text);
	}
	const text = await res.text();
	const etag = res.headers.get("etag");
	revalidated.keep(path, etag ? { etag, text } : null);
	return JSON.parse(text);
}
/** @type {(path: string, json?: unknown, headers?: Record<string, string>) => Promise<any>} */
const post = (path, json, headers) => api(path, { method: "POST", json: json === undefined ? {} : json, headers });
/**
 * An Idempotency-Key for each body a dialog sends, kept while it is open: pressed again after no
 * answer (or a 500), it sends the same key, and the API answers with the job the first press
 * started, if it did, rather than starting a second. Another prompt is another request, with a key
 * of its own. getRandomValues, not randomUUID: a page served over plain HTTP (not localhost) has
 * only the former.
 * @returns {(body: unknown) => Record<string, string>}
 */
function idempotencyKeys() {
	/** @type {Map<string, string>} */
	const keys = new Map();
	return (body) => {
		const request = JSON.stringify(body === undefined ? {} : body);
		let key = keys.get(request);
		if (key === undefined) {
			key = "dashboard-" + Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
			keys.set(request, key);
		}
		return { "idempotency-key": key };
	};
}
/** Every page of a list endpoint, up to max items. */
/** @param {string} path @param {string} key @param {number} max @returns {Promise<any[]>} */
async function all(path, key, max) {
	const items = [];
	let cursor = null;
	do {
		const page = await api(path + (path.includes("?") ? "&" : "?") + "limit=200" + (cursor ? "&cursor=" + enc(cursor) : ""));
		items.push(...page[key]);
		cursor = page.next_cursor;
	} while (cursor && items.length < max);
	return items;
}
/** The first count pages of page(cursor) (fewer where the list ends): their key's rows, and the cursor after them. */
/**
 * @template {string} K @template T
 * @param {(cursor: string | null) => Promise<Page<K, T>>} page @param {K} key @param {number} count
 * @returns {Promise<{ rows: T[], next: string | null }>}
 */
async function firstPages(page, key, count) {
	const rows = [];
	let next = null;
	for (let i = 0; i < count; i++) {
		const p = await page(next);
		rows.push(...p[key]);
		next = p.next_cursor;
		if (!next) break;
	}
	return { rows, next };
}
/** @type {HTMLElement | null} The focused button an action is running from, for its dialog to give focus back to. */
let actingButton = null;
/** Runs an action from a button: disabled while it runs, its error shown, an optional note on success. */
/**
 * @param {{ disabled: boolean }} button @param {() => Promise<unknown>} fn
 * @param {string | (() => string)} [okMessage] a function for a note that depends on what the action was answered
 * @param {() => Element | null | undefined} [next] what takes the focus when the action took its button away
 *   (the last "Older" hides itself); by default the same place in its row as redrawn, else the view's heading
 */
async function act(button, fn, okMessage, next) {
	// Disabling a focused button moves focus to the page: a dialog this action opens gives focus back
	// to the button named here once it closes (see ask), and so does the end of the action.
	const focused = button instanceof HTMLElement && button === document.activeElement;
	if (focused) actingButton = button;
	const place = focused ? placeOf(button) : null;
	clearOkNotice();
	button.disabled = true;
	try {
		const done = await fn();
		if (okMessage && done !== false) notify(typeof okMessage === "function" ? okMessage() : okMessage, true);
	} catch (err) {
		fail(err);
	} finally {
		button.disabled = false;
		if (/** @type {unknown} */ (actingButton) === button) actingButton = null;
		// Unless the reader has gone elsewhere meanwhile (a dialog's field, a link).
		const lost = !document.activeElement || document.activeElement === document.body;
		if (focused && lost) focusOn(shown(button) ? button : (next && next()) || (place && atPlace(place)) || null);
	}
}
