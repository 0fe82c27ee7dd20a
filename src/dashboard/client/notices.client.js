// @ts-check
// ── notices ──
let noticeTimer = 0;
/** @param {string} message @param {boolean} [ok] */
function notify(message, ok) {
	const n = $("#notice");
	n.replaceChildren(h("span", { text: message }), h("button", { type: "button", class: "small", text: "Dismiss", onclick: () => { n.hidden = true; } }));
	n.className = ok ? "notice ok" : "notice";
	n.hidden = false;
	clearTimeout(noticeTimer);
	if (ok) noticeTimer = setTimeout(() => { n.hidden = true; }, 4000);
}
/** @param {any} err what a load or action threw */
function fail(err) {
	if (!err || err.name === "AbortError") return;
	// A 401 has already put the sign-in form up with the API's message.
	if (err instanceof ApiError && err.status === 401) return;
	notify(err instanceof ApiError ? err.message : "Something went wrong: " + (err.message || String(err)));
}
