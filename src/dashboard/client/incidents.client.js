// @ts-check
// ── Incidents ──
const INCIDENT_PAGE = 200;
/** @param {AbortSignal} signal */
async function incidentsView(signal) {
	const form = $("#incidents-filter");
	const select = form.elements.state;
	const tbody = $("#incidents-table tbody");
	const older = $("#incidents-older");
	const params = new URLSearchParams(location.search);
	if (params.get("state")) select.value = params.get("state");
	form.onsubmit = (/** @type {Event} */ e) => e.preventDefault();
	/** @type {string | null} */
	let cursor = null; // next_cursor after the oldest shown
	let pages = 1;
	let generation = 0;
	let paging = false; // "Older" is reading a page: the 10 s poll leaves the list alone
	/** @type {(after: string | null) => Promise<IncidentPage>} */
	const page = (after) => {
		const q = new URLSearchParams({ limit: String(INCIDENT_PAGE) });
		if (select.value) q.set("state", select.value);
		if (after) q.set("cursor", after);
		return api("/v1/incidents?" + q, { signal });
	};
	/** @param {Incident} i */
	const row = (i) => h("tr", { "data-incident": i.id },
		h("td", null, h("span", { class: "mono", text: i.id })),
		h("td", null, agentLink(i.agent)),
		h("td", { text: words(i.class) }),
		// An open incident waits on these to run clean before it resolves (a healthy schedule's clean runs do not).
		h("td", null, badge(i.state, "i-"), (i.state === "detected" || i.state === "alerted") && i.failing?.length
			? h("span", { class: "sub", text: "failing: " + i.failing.join(", ") })
			: null,
			i.resolved_at ? h("span", { class: "sub" }, "resolved ", exactTime(i.resolved_at)) : null,
			i.closed_at ? h("span", { class: "sub" }, "closed ", exactTime(i.closed_at)) : null),
		h("td", { class: "error-text", text: printable(i.error) }),
		h("td", { class: "num", text: num(i.count) }),
		// As the jobs list's times: the exact time with its zone, not only in a tooltip.
		h("td", null, slotTime(i.last_seen_at), h("span", { class: "sub" }, "first ", exactTime(i.first_seen_at))),
		h("td", null, i.last_job_id ? jobLink(i.last_job_id) : "—"),
		h("td", { class: "actions" }, i.state === "closed"
			? h("span", { class: "muted small", text: i.closed_by ? "closed by " + i.closed_by : "closed" })
			: h("button", { type: "button", class: "small", "data-needs": "operate", text: "Close", "aria-label": "Close incident " + i.id, onclick: (e) => act(e.currentTarget, async () => {
				const closed = await ask({
					title: "Close incident " + i.id,
					text: "The same error will not open it again.",
					submit: "Close incident",
					run: () => post("/v1/incidents/" + enc(i.id) + "/close"),
				});
				if (!closed) return false;
				await load(false);
			}, "Closed " + i.id) })));
	const drawMeta = () => {
		const shown = tbody.rows.length;
		$("#incidents-empty").hidden = shown > 0;
		older.hidden = !cursor;
		setText($("#incidents-meta"), num(shown) + (cursor ? " shown, more older" : shown === 1 ? " incident" : " incidents"));
	};
	// A filter starts again from the newest page; a close rereads as many pages as are shown.
	/** @param {boolean} reset */
	const load = async (reset) => {
		if (reset) pages = 1;
		const mine = ++generation;
		let rows, next;
		try {
			({ rows, next } = await firstPages(page, "incidents", pages));
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
		drawMeta();
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
	// The poll rereads the newest page while it is the only one shown; pages the reader added stay as they are.
	const refresh = async () => {
		if (pages !== 1 || paging) return;
		const mine = generation;
		const p = await page(null);
		if (mine !== generation || pages !== 1 || paging) return; // a filter, a close or "Older" came meanwhile
		keepingFocus(tbody, () => syncRows(tbody, p.incidents, (i) => i.id, row));
		cursor = p.next_cursor;
		drawMeta();
	};
	form.onchange = () => {
		history.replaceState(null, "", "/incidents" + (select.value ? "?state=" + enc(select.value) : ""));
		load(true).catch(fail);
	};
	await load(true);
	poll(refresh, LIVE_MS);
}
