// ── the API ──
class ApiError extends Error {
	constructor(status, code, message) {
		super(message);
		this.status = status;
		this.code = code;
	}
}
/** The API's own message ({"error": {"code", "message"}}), or the status line if the body is not one. */
async function errorFrom(res) {
	let code = "http_" + res.status;
	let message = "HTTP " + res.status + (res.statusText ? " " + res.statusText : "");
	try {
		const b = await res.json();
		if (b && b.error) {
			code = b.error.code || code;
			message = b.error.message || message;
		}
	} catch (e) {}
	return new ApiError(res.status, code, message);
}
const token = () => sessionStorage.getItem(TOKEN_KEY);
async function request(path, opts) {
	opts = opts || {};
	const headers = new Headers(opts.headers || {});
	headers.set("authorization", "Bearer " + token());
	let body;
	if (opts.json !== undefined) {
		headers.set("content-type", "application/json");
		body = JSON.stringify(opts.json);
	}
	const res = await fetch(path, { method: opts.method || "GET", headers, body, signal: opts.signal, cache: "no-store" });
	if (!res.ok) {
		const err = await errorFrom(res);
		if (res.status === 401) signOut(err.message);
		throw err;
	}
	return res;
}
const api = async (path, opts) => (await request(path, opts)).json();
const post = (path, json) => api(path, { method: "POST", json: json === undefined ? {} : json });
/** Every page of a list endpoint, up to max items. */
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
/** Runs an action from a button: disabled while it runs, its error shown, an optional note on success. */
async function act(button, fn, okMessage) {
	button.disabled = true;
	try {
		const done = await fn();
		if (okMessage && done !== false) notify(okMessage, true);
	} catch (err) {
		fail(err);
	} finally {
		button.disabled = false;
	}
}
