// @ts-check
// ── Incidents ──
const INCIDENT_PAGE = 200;
/** The incidents list's filters, as the address and the API name them (the jobs list's pattern). */
const INCIDENT_FILTERS = ["agent", "state"];
/** The pseudo-agent of the scheduler's own incidents (src/config/schema.ts's SCHEDULER_AGENT): no agent route knows it. */
const SCHEDULER_AGENT = "scheduler";
/** @param {AbortSignal} signal */
async function incidentsView(signal) {
	const form = $("#incidents-filter");
	const tbody = $("#incidents-table tbody");
	const older = $("#incidents-older");
	const params = new URLSearchParams(location.search);
	sayIgnoredFilters("/incidents", filtersFromAddress(form, INCIDENT_FILTERS, params), params);
	// The agent filter takes any name (a deleted agent's incidents stay listed, and the scheduler's own).
	const query = () => {
		const q = new URLSearchParams();
		for (const k of INCIDENT_FILTERS) if (form.elements[k].value.trim()) q.set(k, form.elements[k].value.trim());
		return q;
	};
	/** @type {string | null} */
	let cursor = null; // next_cursor after the oldest shown
	let pages = 1;
	let generation = 0;
	let paging = false; // "Older" is reading a page: the 10 s poll leaves the list alone
	/** @type {(after: string | null) => Promise<IncidentPage>} */
	const page = (after) => {
		const q = new URLSearchParams({ limit: String(INCIDENT_PAGE) });
		for (const [k, v] of new URLSearchParams(filters.applied)) q.set(k, v);
		if (after) q.set("cursor", after);
		return api("/v1/incidents?" + q, { signal });
	};
	/** Why the list is empty, when its agent filter names no agent (agentMissing; the scheduler's own incidents' name is none). @param {number} shown */
	const noSuchAgent = (shown) => {
		const agent = new URLSearchParams(filters.applied).get("agent");
		return shown || agent === SCHEDULER_AGENT ? Promise.resolve(null) : agentMissing(agent, signal);
	};
	/** A refusal of the agent filter (a name that cannot be an agent's) said at its field (filterRefusal); whether it was one. */
	const refusedFilter = filterRefusal(form, $("#incidents-filter-error"), INCIDENT_FILTERS, signal);
	/** @param {Incident} i */
	const row = (i) => h("tr", { "data-incident": i.id },
		h("td", null, h("span", { class: "mono", text: i.id })),
		h("td", null, agentLink(i.agent)),
		h("td", { text: words(i.class) }),
		// An open incident waits on these to run clean before it resolves (a healthy schedule's clean runs do not).
		h("td", null, badge(i.state, "i-"), (i.state === "detected" || i.state === "alerted") && i.failing?.length
			? h("span", { class: "sub", text: "failing: " + i.failing.join(", ") })
			: null,
			paged(i),
			i.resolved_at ? h("span", { class: "sub" }, "resolved ", exactTime(i.resolved_at)) : null,
			i.closed_at ? h("span", { class: "sub" }, "closed ", exactTime(i.closed_at)) : null),
		h("td", { class: "error-text", text: printable(i.error) }),
		h("td", { class: "num", text: num(i.count) }),
		// As the jobs list's times: the exact time with its zone, not only in a tooltip.
		h("td", null, slotTime(i.last_seen_at), h("span", { class: "sub" }, "first ", exactTime(i.first_seen_at))),
		h("td", null, i.last_job_id ? jobLink(i.last_job_id) : "—"),
		h("td", { class: "actions" }, i.state === "closed"
			? h("span", { class: "muted small", text: i.closed_by ? "closed by " + i.closed_by : "closed" })
			: [
				// Open: resolved by the operator's word, as a clean run would (a fixed pager's hook incident,
				// which only the agent's next failure would clear), paging again if the error comes back.
				i.state === "resolved" ? null : settleButton(i, "resolve", "Resolve", "The same error will open it again, and page.", "Resolved "),
				settleButton(i, "close", "Close", "The same error will not open it again.", "Closed "),
			]));
	/**
	 * A button that asks, then closes or resolves the incident, and rereads the list.
	 * @param {Incident} i @param {"close" | "resolve"} action @param {string} label @param {string} text @param {string} said
	 */
	const settleButton = (i, action, label, text, said) => {
		/** @type {Incident | null} */
		let answer = null;
		return h("button", { type: "button", class: "small", "data-needs": "operate", text: label, "aria-label": label + " incident " + i.id, onclick: (/** @type {MouseEvent} */ e) => act(/** @type {HTMLButtonElement} */ (e.currentTarget), async () => {
			const done = await ask({ title: label + " incident " + i.id, text, submit: label + " incident", run: async () => void (answer = await post("/v1/incidents/" + enc(i.id) + "/" + action, action === "resolve" ? { count: i.count } : undefined)) });
			if (!done) return false;
			await load(false);
			// A resolve names the count this row showed, and is answered open when the incident failed
			// again since: the operator did not see that failure, and resolved over it, it would never page.
		}, () => {
			if (action === "resolve" && answer && answer.state !== "resolved") return "Still open: " + i.id + " failed again since it was shown (×" + num(answer.count) + ", last " + absText(Date.parse(answer.last_seen_at)) + ")";
			// Closed by another operator after this row was drawn: the API answers it as it stands, and
			// this press changed nothing. (A token's name is all either closing is known by.)
			const by = document.body.dataset.who;
			if (action === "close" && answer?.closed_by && by !== undefined && answer.closed_by !== by) {
				return "Already closed: " + i.id + " was closed by " + printable(answer.closed_by) + (answer.closed_at ? ", " + absText(Date.parse(answer.closed_at)) : "") + "; nothing changed";
			}
			return said + i.id;
		}) });
	};
	/** @param {string | null} [missing] why the list is empty, when its agent filter names no agent */
	const drawMeta = (missing) => {
		const shown = tbody.rows.length;
		const empty = $("#incidents-empty");
		empty.hidden = shown > 0;
		// As the jobs list says it: "No incidents match." read as if the list were filtered, unfiltered.
		setText(empty, missing ? "No incidents match: " + printable(missing) + "." : filters.applied ? "No incidents match." : "No incidents.");
		older.hidden = !cursor;
		setText($("#incidents-meta"), num(shown) + (cursor ? " shown, more older" : shown === 1 ? " incident" : " incidents"));
	};
	// A filter starts again from the newest page; a close rereads as many pages as are shown.
	/** @param {boolean} reset */
	const load = async (reset) => {
		if (reset) pages = 1;
		const mine = ++generation;
		let rows, next, missing;
		try {
			({ rows, next } = await firstPages(page, "incidents", pages));
			missing = await noSuchAgent(rows.length);
		} catch (err) {
			// The list chosen could not be read: the one before it must not stay on screen as if it were this one.
			if (reset && mine === generation) {
				tbody.replaceChildren();
				cursor = null;
				older.hidden = true;
				$("#incidents-empty").hidden = true;
				$("#incidents-meta").textContent = "";
			}
			throw err;
		}
		if (mine !== generation) return; // a later filter or close has answered first
		syncRows(tbody, rows, (i) => i.id, row);
		cursor = next;
		drawMeta(missing);
	};
	older.onclick = () => {
		const from = tbody.rows.length;
		// The last page hides the button: the first row it added takes the focus.
		act(older, async () => {
			const mine = generation;
			paging = true;
			try {
				const p = await page(cursor);
				if (mine !== generation) return;
				tbody.append(...p.incidents.map((i) => rowFor(i.id, i, row)));
				cursor = p.next_cursor;
				pages++;
				drawMeta();
			} finally {
				paging = false;
			}
		}, undefined, () => tbody.rows[from] && tbody.rows[from].querySelector("a"));
	};
	// The poll rereads the newest page while it is the only one shown, with the filters applied; pages
	// the reader added stay as they are.
	const refresh = async () => {
		if (pages !== 1 || paging) return;
		const mine = generation;
		/** @type {IncidentPage} */
		let p;
		try {
			p = await page(null);
		} catch (err) {
			// The refused filter again: said in the form already, not in the page's notice too.
			if (mine === generation && refusedFilter(err)) return;
			throw err;
		}
		const missing = await noSuchAgent(p.incidents.length);
		if (mine !== generation || pages !== 1 || paging) return; // a filter, a close or "Older" came meanwhile
		keepingFocus(tbody, () => syncRows(tbody, p.incidents, (i) => i.id, row));
		cursor = p.next_cursor;
		drawMeta(missing);
	};
	const filters = appliedFilters("/incidents", query, load, refusedFilter);
	const apply = filters.apply;
	// The state as the jobs list's status: a pick at once, arrow-key steps once they rest; a name typed
	// on Enter or leaving the field, or as a suggestion is picked (agentField).
	appliedOnSettle(form, apply, signal);
	agentField(form.elements.agent, $("#incidents-agents"), apply, signal);
	// An address whose filter the API refuses: said at its field too.
	await load(true).catch((err) => {
		if (!refusedFilter(err)) throw err;
	});
	poll(refresh, LIVE_MS);
}
/**
 * Whether and when the incident's opening was paged (ALERT_WEBHOOK_URL took its alert): an open one
 * not paged yet is said so, as GET /v1/status warns of one still so 3 minutes after it opened.
 * @param {Incident} i
 */
function paged(i) {
	if (i.alerted_at) return h("span", { class: "sub" }, "alerted ", exactTime(i.alerted_at));
	return i.state === "detected" ? h("span", { class: "sub", text: "not paged" }) : null;
}
