// @ts-check
// ── notices ──
/** Whether the notice shown is a poll's failure: the view's next poll that succeeds takes it away. */
let pollNotice = false;
/** Whether a poll found the server unreachable, and none has reached it since. */
let pollLost = false;
/**
 * Shows a message in the page's notice: a failure as an alert (said at once), a success ("Paused x",
 * "Approved") as a status, said when the reader is free, and kept until dismissed or the next action
 * (it went after 4 s, before a magnifier user working lower on the page had seen it).
 * @param {string} message @param {boolean} [ok]
 */
function notify(message, ok) {
	const n = $("#notice");
	pollNotice = false;
	const cls = ok ? "notice ok" : "notice";
	// The same message again (each poll while the server is unreachable, each status event's refresh
	// on a job page) leaves the notice as it is: rebuilt, the alert was read out again every time.
	if (!n.hidden && n.className === cls && n.firstChild && n.firstChild.textContent === message) return;
	n.setAttribute("role", ok ? "status" : "alert");
	n.replaceChildren(h("span", { text: message }), h("button", { type: "button", class: "small", text: "Dismiss", onclick: () => { n.hidden = true; } }));
	n.className = cls;
	n.hidden = false;
}
const CARRIED_KEY = "drover.notice";
/** A success note for the page an action goes on to (a full load: a new agent's, the fleet after a delete), said there once. @param {string} message */
function carryNotice(message) {
	sessionStorage.setItem(CARRIED_KEY, message);
}
/** Says the note the page before carried here, if it left one. */
function sayCarriedNotice() {
	const message = sessionStorage.getItem(CARRIED_KEY);
	if (message === null) return;
	sessionStorage.removeItem(CARRIED_KEY);
	notify(printable(message), true);
}
/** A new action starts: the last one's success note has been seen, and would read as this one's. */
function clearOkNotice() {
	const n = $("#notice");
	if (n.classList.contains("ok")) n.hidden = true;
}
/** What a failed load or action says: null for an abort, and for a 401 (the sign-in form is up with the API's message). @param {any} err @returns {string | null} */
function failMessage(err) {
	if (!err || err.name === "AbortError") return null;
	if (err instanceof ApiError && err.status === 401) return null;
	if (err instanceof Unreachable) return "The drover server is unreachable (" + err.message + "): check that it is running and that this machine is online.";
	return err instanceof ApiError ? err.message : "Something went wrong: " + (err.message || String(err));
}
/** @param {any} err what a load or action threw */
function fail(err) {
	const message = failMessage(err);
	if (message !== null) notify(message);
	if (err instanceof Unreachable) {
		pollLost = true;
		pollNotice = !$("#notice").hidden;
	}
}
/** A poll's load failed: said as any failure is, and taken away again by pollSucceeded(). @param {any} err */
function pollFailed(err) {
	fail(err);
	pollNotice = !$("#notice").hidden;
	if (err instanceof Unreachable) pollLost = true;
}
/**
 * A poll's load succeeded: its failure's notice goes. After "unreachable" that is said, politely
 * (the alert taken away in silence left a screen-reader user, or one who had looked away, believing
 * the page still stale); another notice put up meanwhile (an action's outcome) is left as it is.
 */
function pollSucceeded() {
	const lost = pollLost;
	pollLost = false;
	if (lost && (pollNotice || $("#notice").hidden)) notify("Reconnected — data is current again.", true);
	else if (pollNotice) $("#notice").hidden = true;
	pollNotice = false;
}
