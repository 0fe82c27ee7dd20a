// @ts-check
// ── session: sign-in, sign-out, the scheduler pill, starting the view ──
/** @param {string} [message] */
function showSignIn(message) {
	$("#view").hidden = true;
	$("#signin").hidden = false;
	$("#sign-out").hidden = true;
	$("#scheduler-pill").hidden = true;
	/** @type {HTMLElement} */ ($("#scheduler-details")).hidePopover?.();
	schedulerHealth = null;
	$("#whoami").hidden = true;
	$(".topbar nav").hidden = true;
	$("#notice").hidden = true;
	pollNotice = pollLost = false;
	const err = $("#signin-error");
	err.textContent = message || "";
	err.hidden = !message;
	// Tied to the field that takes the focus, so that it is said with it (the alert may be cut off by the focus's announcement).
	const input = $("#token");
	tieError(input, err, !!message);
	input.focus();
	// The view's title (the page's, or what its view made it) is not what is shown: a tab of the sign-in is told apart from the view's.
	document.title = "Sign in · drover";
}
/** @param {string} [message] */
function signOut(message) {
	sessionStorage.removeItem(TOKEN_KEY);
	forgetAnswers();
	delete document.body.dataset.role;
	delete document.body.dataset.who;
	viewAbort.abort();
	viewAbort = new AbortController();
	showSignIn(message);
}
/** The scheduler pill's state as last drawn (its class), to say a change of it; null until the first. @type {string | null} */
let schedulerHealth = null;
/** What the pill's popover shows, as last drawn (see showSchedulerDetails); null until the first. @type {string | null} */
let schedulerDetailsKey = null;
/**
 * Draws the pill's popover anew only when what it shows (`key`) changed: redrawn at each status poll
 * (every 10 to 15 s), an open one lost the text selected in it and a screen reader's place. Redrawn,
 * the focus stays in it if it was there (on the popover itself: its old nodes are gone).
 * @param {string} key @param {() => Array<Node | string | null>} content
 */
function showSchedulerDetails(key, content) {
	if (key === schedulerDetailsKey) return;
	schedulerDetailsKey = key;
	const details = $("#scheduler-details");
	const focused = details.contains(document.activeElement) && document.activeElement !== details;
	details.replaceChildren(...content());
	if (focused) {
		details.tabIndex = -1;
		details.focus({ preventScroll: true });
	}
}
/**
 * The /v1/status start() was given: the fleet view's first load takes it (once) rather than asking
 * again, as it would the moment the page opened. @type {Status | null}
 */
let startStatus = null;
/** @returns {Status | null} */
function takeStartStatus() {
	const s = startStatus;
	startStatus = null;
	return s;
}
/** @param {Status | null} status */
function showScheduler(status) {
	const pill = $("#scheduler-pill");
	if (!status) return;
	const s = status.scheduler;
	// Absent from a server before them.
	const warnings = status.warnings || [];
	const behind = s.shards_behind || 0;
	// Migrations D1 lacks (a deploy that skipped them): the code needs some, or they only add indexes.
	const d1 = status.d1;
	const missing = (d1 && d1.missing) || [];
	// Not ok: a migration the code needs is missing (its routes fail), or D1's record could not be read.
	const d1Bad = !!d1 && d1.ok === false;
	const d1Warning = missing.length
		? "D1 migrations missing: " + missing.join(", ") + "; run " + ((d1 && d1.fix) || "npx wrangler d1 migrations apply DB --remote")
		: d1Bad ? "D1's record of its migrations could not be read (the Worker's logs say why)" : "";
	pill.hidden = false;
	// Partial: the scheduler ticks, some agent it could not reach (that agent's incident): amber, not red.
	const partial = !s.stalled && s.outcome === "partial";
	pill.className = s.stalled || d1Bad ? "pill bad" : partial || warnings.length || missing.length ? "pill warn" : "pill";
	pill.replaceChildren();
	if (!s.last_tick_at) add(pill, s.stalled ? "scheduler stalled: no tick yet" : "scheduler: no tick yet");
	// Stalled by the last good tick (ok or partial): ticks may still come, every one failed.
	else if (s.stalled) add(pill, s.last_ok_at ? ["scheduler stalled · last good tick ", when(s.last_ok_at)] : "scheduler stalled: no good tick yet");
	else add(pill, ["last tick ", when(s.last_tick_at)]);
	// What the last tick could not reach: in full on the red pill, in the title on the amber one.
	if (s.stalled && s.error) add(pill, " · " + printable(s.error));
	// A shard that did not answer leaves all its agents uncalled that minute: said by count, as
	// drover status does; else some agent of an answering shard (the title names it).
	const unanswered = s.shards_failed || 0;
	if (partial) add(pill, unanswered ? ` · ${unanswered} shard${unanswered === 1 ? "" : "s"} of ${unanswered + (s.shards_ok || 0)} not reached` : " · some agents not reached");
	// A shard behind its ticks loses nothing, but its agents claim later and later: said briefly here,
	// in full in the title (and by drover doctor).
	if (behind) add(pill, ` · ${behind} shard${behind === 1 ? "" : "s"} behind`);
	if (missing.length) add(pill, " · D1 migrations missing");
	else if (d1Bad) add(pill, " · D1 unreadable");
	// The other warnings (D1 nearly full, incidents not paged) made the pill amber and were said only
	// in its title, which a keyboard, touch or screen-reader user does not reach: counted in words
	// (a shard behind, said above, is one of them).
	// One shard behind may come with no warning of it, when the tick did not say since when its agents wait.
	const backlogSaid = behind > 0 && (status.warning_kinds || []).includes("scheduler_behind");
	const unsaid = warnings.length - (backlogSaid ? 1 : 0);
	if (unsaid > 0) add(pill, ` · ${unsaid} warning${unsaid === 1 ? "" : "s"}`);
	const said = [s.error ? "Scheduler: " + printable(s.error) : "", ...warnings.map(printable), printable(d1Warning)].filter(Boolean);
	pill.title = said.join("\n");
	// The same, in full, in the pill's popover: the title is for a mouse alone.
	const lastTick = s.last_tick_at ? absText(Date.parse(s.last_tick_at)) : null;
	const lastGood = s.last_tick_at && s.last_ok_at !== s.last_tick_at ? (s.last_ok_at ? absText(Date.parse(s.last_ok_at)) : "none yet") : null;
	showSchedulerDetails(JSON.stringify([lastTick, lastGood, said]), () => [
		h("p", null, h("strong", { text: "Scheduler" }), " · ", lastTick ? ["last tick ", lastTick] : "no tick yet", lastGood ? [" · last good tick ", lastGood] : null),
		said.length ? h("ul", null, said.map((w) => h("li", { text: w }))) : h("p", { class: "muted", text: "Nothing to look at." })]);
	// The pill is redrawn at every poll, its tick time changing: not a live region, which would read it
	// out each time. A change of its state (stalled, amber, well again) is said politely, once.
	const health = pill.className;
	if (schedulerHealth !== null && health !== schedulerHealth) {
		setText($("#scheduler-said"), (health === "pill" ? "Scheduler well again: " : "Scheduler: ") + pill.textContent + ".");
	}
	schedulerHealth = health;
	showOpenIncidents(status.incidents);
}
/**
 * The open incidents' count on the Incidents link, read with the pill: an operator on any view sees
 * that something is failing, where the pill speaks only of the scheduler. Left as it was when the
 * server could not say (null) or says nothing of them (a server before it).
 * @param {Status["incidents"]} incidents
 */
function showOpenIncidents(incidents) {
	if (!incidents) return;
	const count = $("#open-incidents");
	const open = incidents.open > 0;
	count.hidden = !open;
	count.textContent = open ? incidents.open + (incidents.more ? "+" : "") : "";
	const said = (incidents.more ? "more than " : "") + incidents.open + " open";
	count.title = open ? said : "";
	// Heard as part of the link's name ("Incidents (3 open)"), where an aria-label would replace it.
	setText($("#open-incidents-said"), open ? "(" + said + ")" : "");
	// The count's link opens the ones it counts, not a list that mixes in the resolved.
	/** @type {HTMLAnchorElement} */ (count.parentElement).href = open ? "/incidents?state=open" : "/incidents";
}
/** @param {Status | null} status */
function start(status) {
	$("#signin").hidden = true;
	// The page's own title again, until its view makes it more precise (a job's status).
	document.title = PAGE_TITLE;
	$("#view").hidden = false;
	$("#sign-out").hidden = false;
	$(".topbar nav").hidden = false;
	showScheduler(status);
	startStatus = status;
	sayCarriedNotice();
	// No action is shown until the token's role is known to allow it (styles.ts hides
	// [data-needs=operate] until then): a read token is never offered what it would be refused,
	// even while /v1/me is slow or failing, which is asked again until it answers. Asked for this
	// session alone: signed out meanwhile, its answer (or its retry) would name the token before the next.
	const signal = viewAbort.signal;
	const role = (/** @type {number} */ tries) => api("/v1/me", { signal }).then(
		(/** @type {Me} */ me) => {
			if (signal.aborted) return;
			document.body.dataset.role = me.role;
			// Whose session this is: an answer naming another closer was not this session's doing.
			document.body.dataset.who = me.name;
			const who = $("#whoami");
			who.textContent = printable(me.name) + " · " + me.role;
			who.title = "Signed in with the token " + printable(me.name) + ", whose role is " + me.role;
			who.hidden = false;
		},
		() => { if (tries < 5 && !signal.aborted) setTimeout(() => { if (!signal.aborted) role(tries + 1); }, 2000 * (tries + 1)); },
	);
	role(0);
	const view = VIEWS[VIEW];
	statusPolled = false;
	// Busy until the view's first load is drawn and its polls are set: what it shows until then may be
	// an earlier session's, which a screen reader should not read out as current (nor a test act on).
	const shown = $("#view");
	shown.setAttribute("aria-busy", "true");
	// A view that does not poll (or whose first load failed) still keeps the pill current.
	const ready = () => {
		if (!statusPolled) poll(async () => {}, LIVE_MS);
		// A session signed out meanwhile: the next sign-in's view says when it is ready.
		if (!signal.aborted) shown.removeAttribute("aria-busy");
	};
	if (view) view(signal).catch(fail).finally(ready);
	else ready();
}
$("#signin-form").addEventListener("submit", async (/** @type {Event} */ e) => {
	e.preventDefault();
	const input = $("#token");
	const button = $("#signin-form button");
	const tok = input.value.trim();
	button.disabled = true;
	let status = null;
	/** @type {any} */
	let statusError = null;
	try {
		// The token is checked on the job list: it needs only the read role, so any valid token
		// signs in, and it answers even when /v1/status cannot (an invalid fleet.yaml is a 500 there).
		const res = await fetch("/v1/jobs?limit=1", { headers: { authorization: "Bearer " + tok }, cache: "no-store" });
		if (!res.ok) throw await errorFrom(res);
		sessionStorage.setItem(TOKEN_KEY, tok);
		input.value = "";
	} catch (err) {
		// A sentence, not the API's bare "invalid token": what happened, then its words.
		const why = /** @type {Error} */ (err).message || String(err);
		const refused = err instanceof ApiError && (err.status === 401 || err.status === 403);
		showSignIn(refused ? "That token was refused: " + why + "."
			: err instanceof ApiError ? "Could not sign in: the server answered " + why + "."
			: "Could not sign in: the server could not be reached (" + why + ").");
		// The token typed is what was wrong (not so when the server could not answer), until it is edited.
		if (refused) tieError(input, $("#signin-error"), true, true);
		button.disabled = false;
		return;
	}
	try {
		status = await api("/v1/status");
	} catch (err) {
		// Signed in all the same: only the scheduler pill is missing.
		statusError = err;
	}
	button.disabled = false;
	if (!token()) return; // a 401 here has signed out again
	start(status);
	// The form that had the focus is gone: the view's heading takes it, so a screen reader says where the user is.
	focusOn(null);
	if (statusError) notify("Signed in, but the scheduler's status is unavailable: " + (statusError.message || String(statusError)));
});
clearedByEdits($("#token"));
$("#sign-out").addEventListener("click", () => signOut());
