// @ts-check
// ── Jobs ──
const JOB_FILTERS = ["agent", "status", "trigger_type"];
/** Filters on when a job was created: instants, as the API takes them, shown in the viewer's time. */
const JOB_TIME_FILTERS = ["since", "until"];
/** @param {AbortSignal} signal */
async function jobsView(signal) {
	const form = $("#jobs-filter");
	const tbody = $("#jobs-table tbody");
	const older = $("#jobs-older");
	const agentInput = form.elements.agent;
	const params = new URLSearchParams(location.search);
	const ignored = filtersFromAddress(form, JOB_FILTERS, params);
	for (const k of JOB_TIME_FILTERS) {
		const value = params.get(k);
		if (!value) continue;
		// An ISO 8601 instant, or a date for its start in UTC (as the API reads it): the address is a
		// link another viewer, in another zone, opens to the same jobs.
		const ms = Date.parse(value);
		if (Number.isNaN(ms)) {
			ignored.push(k + "=" + value);
			params.delete(k);
		} else form.elements[k].value = localInput(ms);
	}
	for (const zone of form.querySelectorAll(".filter-zone")) zone.textContent = "(" + zoneName() + ")";
	sayIgnoredFilters("/jobs", ignored, params);
	// The agent filter takes any name (a deleted agent's jobs stay listed).
	/** @type {string | null} */
	let cursor = null;
	let shown = 0;
	let generation = 0;
	// Whether "Older" has added a page (or is adding one): the 10 s poll rereads the first page only
	// while it is the only one shown, so it never takes away pages the reader asked for.
	let paged = false;
	let paging = false;
	const query = () => {
		const q = new URLSearchParams();
		for (const k of JOB_FILTERS) if (form.elements[k].value.trim()) q.set(k, form.elements[k].value.trim());
		// A datetime-local value has no zone: read as the viewer's time, sent as UTC.
		for (const k of JOB_TIME_FILTERS) if (form.elements[k].value) q.set(k, new Date(form.elements[k].value).toISOString());
		return q;
	};
	/** Why the list of `filters` is empty, when its agent filter names no agent (agentMissing). @param {string} filters @param {JobPage} page */
	const noSuchAgent = (filters, page) => (page.jobs.length ? Promise.resolve(null) : agentMissing(new URLSearchParams(filters).get("agent"), signal));
	/** A refusal of the filters said at their fields (filterRefusal); whether it was one. */
	const refusedFilter = filterRefusal(form, $("#jobs-filter-error"), [...JOB_FILTERS, ...JOB_TIME_FILTERS], signal);
	/** @param {boolean} reset */
	const load = async (reset) => {
		const mine = reset ? ++generation : generation;
		// Until the new filter's first page is in, "Older" would page it with the old list's cursor.
		if (reset) {
			older.hidden = true;
			paged = false;
		}
		const q = query();
		q.set("limit", "25");
		if (!reset && cursor) q.set("cursor", cursor);
		/** @type {JobPage} */
		let page;
		/** @type {string | null} */
		let missing = null;
		try {
			page = await api("/v1/jobs?" + q, { signal });
			if (reset) missing = await noSuchAgent(q.toString(), page);
		} catch (err) {
			// A filter the API refuses (a name that cannot be an agent's) lists nothing: the rows and
			// count of the list before it must not stay under its error.
			if (reset && mine === generation) {
				tbody.replaceChildren();
				shown = 0;
				cursor = null;
				$("#jobs-empty").hidden = true;
				$("#jobs-meta").textContent = "";
			}
			throw err;
		}
		if (mine !== generation) return; // a newer filter answered first
		if (reset) paged = false;
		draw(page, reset, missing);
	};
	/**
	 * Puts a page of jobs on screen, in place of the list (reset) or after it; `missing` says why the
	 * list is empty when its agent filter names no agent.
	 * @param {JobPage} page @param {boolean} reset @param {string | null} [missing]
	 */
	const draw = (page, reset, missing) => {
		if (reset) {
			syncRows(tbody, page.jobs, (j) => j.id, jobRow);
			shown = page.jobs.length;
		} else {
			tbody.append(...page.jobs.map((j) => rowFor(j.id, j, jobRow)));
			shown += page.jobs.length;
		}
		cursor = page.next_cursor;
		older.hidden = !cursor;
		$("#jobs-empty").hidden = shown > 0;
		// "No jobs match." read as if a filter were set, on a fresh deployment with none.
		$("#jobs-empty").textContent = missing ? "No jobs match: " + printable(missing) + "." : filters.applied ? "No jobs match." : "No jobs yet: they appear here when an agent runs.";
		setText($("#jobs-meta"), shown + (cursor ? " shown, more older" : shown === 1 ? " job" : " jobs"));
	};
	const filters = appliedFilters("/jobs", query, load, refusedFilter);
	const apply = filters.apply;
	appliedOnSettle(form, apply, signal);
	agentField(agentInput, $("#jobs-agents"), apply, signal);
	older.onclick = () => {
		const from = tbody.rows.length;
		// The last page hides the button: the first row it added takes the focus.
		act(older, async () => {
			paging = true;
			try {
				await load(false);
				paged = true;
			} finally {
				paging = false;
			}
		}, undefined, () => tbody.rows[from] && tbody.rows[from].querySelector("a"));
	};
	// The first page again, with the filters applied (not text typed but not yet applied).
	const refresh = async () => {
		if (paged || paging) return;
		const mine = generation;
		const q = new URLSearchParams(filters.applied);
		q.set("limit", "25");
		/** @type {JobPage} */
		let page;
		try {
			page = await api("/v1/jobs?" + q, { signal });
		} catch (err) {
			// The refused filter again: said in the form already, not in the page's notice too.
			if (mine === generation && refusedFilter(err)) return;
			throw err;
		}
		const missing = await noSuchAgent(q.toString(), page);
		if (mine !== generation || paged || paging) return; // a filter or "Older" came meanwhile
		keepingFocus(tbody, () => draw(page, true, missing));
	};
	// An address whose filter the API refuses: said at its field too.
	await load(true).catch((err) => {
		if (!refusedFilter(err)) throw err;
	});
	poll(refresh, LIVE_MS);
}
/** An instant as a datetime-local field's value: the viewer's date and time, to the second. @param {number} ms */
function localInput(ms) {
	const d = new Date(ms);
	const two = (/** @type {number} */ n) => String(n).padStart(2, "0");
	return String(d.getFullYear()).padStart(4, "0") + "-" + two(d.getMonth() + 1) + "-" + two(d.getDate()) + "T" + two(d.getHours()) + ":" + two(d.getMinutes()) + ":" + two(d.getSeconds());
}
/** @param {JobSummary} j */
function jobRow(j) {
	return h("tr", { "data-job": j.id },
		h("td", null, jobLink(j.id)),
		h("td", null, agentLink(j.agent)),
		h("td", null, badge(j.status), failedCalls(j.tool_calls, j.status) ? h("span", { class: "sub warn", text: failedCalls(j.tool_calls, j.status) }) : null),
		h("td", null, words(j.trigger_type), j.schedule ? h("span", { class: "sub", text: j.schedule }) : null),
		// The time itself, with the relative one beneath (as the runs table's slots): not only in a tooltip.
		h("td", null, j.started_at ? slotTime(j.started_at) : h("span", { class: "muted" }, "created ", slotTime(j.created_at))),
		h("td", { class: "num", text: dur(j.duration_seconds) }),
		// Two lines of it (the CSS clamps them): the list's 500 characters are the cell's tooltip, the record's 2,000 on the job's page.
		summaryCell(j));
}
/** The job's answer; or, for one that has none, what ended it (a failed job's error), as its page says it. @param {JobSummary} j */
function summaryCell(j) {
	const error = j.summary && j.summary.trim() !== "" ? null : j.error;
	const text = printable(error ? error.type + ": " + error.message : j.summary || "");
	return h("td", { class: "summary", title: text }, h("div", { class: error ? "ended-by" : undefined, text }));
}
