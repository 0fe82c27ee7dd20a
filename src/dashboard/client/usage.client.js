// @ts-check
// ── Usage ──
const DAY = 86400e3;
const USAGE_SERIES = 8;
/**
 * The table's rows read and drawn at first, and at each "Next": a week of a 1,000-agent fleet is 7,000
 * rows, 70,000 nodes drawn in one go (2 s with the page frozen, Chromium) for a table read from its top.
 */
const USAGE_ROWS = 200;
/** Rows a request of "All rows" reads: the API's most. */
const USAGE_ALL_ROWS = 1000;
/** What a day's others are its total less the busiest agents' days in (costed is worked out apart). @type {(keyof Usage)[]} */
const USAGE_SUMS = ["jobs", "input", "output", "cacheWrite", "cacheRead", "cost", "priced"];
/** @param {{ jobs: number, input_tokens: number, output_tokens: number, cache_creation_input_tokens: number, cache_read_input_tokens: number, cost_usd: number | null, priced_jobs: number }} u @returns {Usage} */
function usageOf(u) {
	return {
		jobs: u.jobs,
		input: u.input_tokens,
		output: u.output_tokens,
		cacheWrite: u.cache_creation_input_tokens,
		cacheRead: u.cache_read_input_tokens,
		cost: u.cost_usd ?? 0,
		priced: u.priced_jobs,
		// Null when no job that used tokens was priced (those that made no call are, at $0): "—", not $0.
		costed: u.cost_usd === null ? 0 : 1,
	};
}
/** @param {Usage} c */
const totalOf = (c) => c.input + c.output + c.cacheWrite + c.cacheRead;
/** @param {AbortSignal} signal */
async function usageView(signal) {
	const form = $("#usage-filter");
	const select = $("#usage-days");
	const agentInput = form.elements.agent;
	// The periods are the select's (pages.tsx), in days back from today (UTC); the first by default.
	const periods = [...select.options].map((/** @type {HTMLOptionElement} */ o) => Number(o.value));
	const params = new URLSearchParams(location.search);
	const asked = params.get("days");
	let period = periods[0];
	if (asked !== null) {
		// A period the select lacks (?days=12): said, and the address made to match what is shown.
		if (periods.some((d) => String(d) === asked)) period = Number(asked);
		else notify("Not a period this page has, so left out: days=" + printable(asked) + ".");
	}
	select.value = String(period);
	agentInput.value = params.get("agent") || "";
	const shown = () => {
		const q = new URLSearchParams();
		if (Number(select.value) !== periods[0]) q.set("days", select.value);
		if (agentInput.value.trim()) q.set("agent", agentInput.value.trim());
		return q.toString();
	};
	history.replaceState(null, "", "/usage" + (shown() ? "?" + shown() : ""));
	let applied = shown();
	let generation = 0;
	/** A refused agent filter (a malformed name) said at its field (filterRefusal); whether it was one. */
	const refusedFilter = filterRefusal(form, $("#usage-filter-error"), ["agent"], signal);
	/**
	 * A load, its failure said: a refusal of the filter still asked for at its field, else in the notice;
	 * its success takes a refusal said before away. @param {number} days @param {() => boolean} current
	 */
	const show = async (days, current) => {
		try {
			await showUsage(days, agentInput.value.trim(), signal, current);
			if (current()) refusedFilter(null);
		} catch (err) {
			if (!(current() && refusedFilter(err))) fail(err);
		}
	};
	const apply = () => {
		const q = shown();
		if (q === applied) return;
		applied = q;
		history.replaceState(null, "", "/usage" + (q ? "?" + q : ""));
		const mine = ++generation;
		// A period or agent picked while the last one's answers are still coming: only the newest is drawn.
		show(Number(select.value), () => mine === generation);
	};
	// The period as the jobs list's status: a pick at once, arrow-key steps once they rest.
	appliedOnSettle(form, apply, signal);
	agentField(agentInput, $("#usage-agents"), apply, signal);
	await show(period, () => generation === 0);
}
/**
 * Reads and draws the last `periodDays` days' usage, of `agent` alone if one is named (several
 * separated by commas, as the API takes them), unless `current()` says another has been asked for
 * meanwhile.
 * @param {number} periodDays @param {string} agent @param {AbortSignal} signal @param {() => boolean} current
 */
async function showUsage(periodDays, agent, signal, current) {
	const meta = $("#usage-meta");
	const today = Math.floor(Date.now() / DAY) * DAY;
	const since = today - (periodDays - 1) * DAY;
	/** @type {Record<string, string>} */
	const range = { since: new Date(since).toISOString().slice(0, 10), until: new Date(today).toISOString().slice(0, 10) };
	if (agent) range.agent = agent;
	meta.textContent = "Loading…";
	/** @param {Record<string, string>} params */
	const read = (params) => api("/v1/usage?" + new URLSearchParams({ ...range, ...params }), { signal });
	/** @param {UsageDay} u @returns {UsageCell} */
	const cellOf = (u) => ({ day: Date.parse(u.day), agent: u.agent, ...usageOf(u) });
	// What the view shows, summed by the index: the fleet's days (7 rows), its busiest agents (8) and
	// their days (56 at most), and the table's agent-days a page at a time as it draws them. It read
	// every agent's day before (a week of 1,000 agents: 7 pages of 1,000 rows, 1.3 MB).
	/** @type {Map<number, UsageTotalCell>} */
	const totals = new Map();
	/** The busiest agents' days, by day and agent. @type {Map<string, UsageCell>} */
	const cells = new Map();
	/** @type {string[]} */
	let busiest = [];
	let others = 0;
	/** @type {UsageCell[]} */
	const rows = [];
	/** @type {string | null} */
	let cursor = null;
	/** The table's next page of `limit` rows. @param {number} limit */
	const readRows = async (limit) => {
		/** @type {Record<string, string>} */
		const q = { limit: String(limit) };
		if (cursor) q.cursor = cursor;
		/** @type {UsagePage} */
		const page = await read(q);
		rows.push(...page.days.map(cellOf));
		cursor = page.next_cursor;
	};
	const readTotals = async () => {
		/** @type {string | null} */
		let after = null;
		do {
			/** @type {Record<string, string>} */
			const q = { group: "day", limit: String(periodDays) };
			if (after) q.cursor = after;
			/** @type {UsageTotalPage} */
			const page = await read(q);
			for (const u of page.days) totals.set(Date.parse(u.day), { agents: u.agents, ...usageOf(u) });
			after = page.next_cursor;
		} while (after);
	};
	const readBusiest = async () => {
		/** @type {UsageAgentTotalPage} */
		const page = await read({ group: "agent", limit: String(USAGE_SERIES) });
		// Busiest first: an agent without tokens among them has none after it with any either.
		const ranked = page.agents.filter((a) => totalOf(usageOf(a)) > 0);
		busiest = ranked.map((a) => a.agent);
		others = ranked.length < page.agents.length ? 0 : page.total - ranked.length;
		if (!busiest.length) return;
		/** @type {UsagePage} */
		const days = await read({ agent: busiest.join(","), limit: String(USAGE_SERIES * periodDays) });
		for (const u of days.days) cells.set(Date.parse(u.day) + "|" + u.agent, cellOf(u));
	};
	// A failed page is shown by the caller's notice; "Loading…" must not stay beside it.
	try {
		await Promise.all([readTotals(), readBusiest(), readRows(USAGE_ROWS)]);
	} catch (err) {
		if (current()) meta.textContent = "";
		throw err;
	}
	if (!current()) return;
	let jobs = 0;
	let rowCount = 0;
	const spent = { cost: 0, priced: 0, jobs: 0 };
	let costed = false;
	for (const t of totals.values()) {
		jobs += t.jobs;
		rowCount += t.agents;
		spent.cost += t.cost;
		spent.priced += t.priced;
		costed = costed || t.costed === 1;
	}
	spent.jobs = jobs;
	// To a millionth of a dollar, as the API rounds each day.
	spent.cost = Math.round(spent.cost * 1e6) / 1e6;
	// Eight colours tell agents apart; a larger fleet's other agents share one grey segment a day,
	// instead of colours repeating down a bar of hundreds of slivers.
	/** @param {string} agent */
	const series = (agent) => "series-" + busiest.indexOf(agent);
	meta.textContent = "Last " + periodDays + " days (UTC)" + (agent ? " of " + printable(agent) : "") + " · " + num(jobs) + (jobs === 1 ? " ended job" : " ended jobs") + (costed ? " · " + costText(spent) : "");

	const days = Array.from({ length: periodDays }, (_, i) => since + i * DAY);
	const W = 1200, H = 320, left = 64, right = 16, top = 16, bottom = 32;
	const dayTotals = days.map((d) => {
		const t = totals.get(d);
		return t ? totalOf(t) : 0;
	});
	const { max, step } = niceAxis(Math.max(...dayTotals), 4);
	/** @param {number} v */
	const y = (v) => top + (H - top - bottom) * (1 - v / max);
	const band = (W - left - right) / days.length;
	const barW = Math.min(band * 0.6, 90);
	// A month's or a quarter's days are too narrow for a label each: every few days, counted back
	// from today's (always labelled), without the weekday; and no total above bars that narrow.
	const labelEvery = Math.ceil(80 / band);
	const dayLabel = labelEvery === 1 ? { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" } : { day: "numeric", month: "short", timeZone: "UTC" };
	const barTotals = band >= 36;
	// One image, named by what it shows and where its figures are (WAI's complex images: a short
	// description that says where the long one is); the table below is that, a row an agent's day.
	const root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", class: "usage-chart",
		"aria-label": "Bar chart of the tokens used each day of the last " + periodDays + " days (UTC)" + (agent ? " by " + printable(agent.split(",").join(", ")) : "") + (agent && !agent.includes(",") ? "" : ", each bar stacked by agent") + "; the table below gives its figures, a row for each agent's day" });
	// The value axis, pinned (drawPinned): a phone opens at the newest days. Hidden, as in the image.
	/** @type {SVGElement[]} */
	const axis = [];
	for (let v = 0; v <= max; v += step) {
		root.append(svg("line", { class: "grid-line", x1: left, x2: W - right, y1: y(v), y2: y(v) }));
		axis.push(svg("text", { x: left - 8, y: y(v) + 4, "text-anchor": "end", text: compact(v) }));
	}
	days.forEach((d, i) => {
		const cx = left + band * i + band / 2;
		if ((days.length - 1 - i) % labelEvery === 0) root.append(svg("text", { class: "day-label", x: cx, y: H - 10, "text-anchor": "middle", text: new Date(d).toLocaleDateString("en-GB", /** @type {Intl.DateTimeFormatOptions} */ (dayLabel)) }));
		let acc = 0;
		/** @param {Usage} c @param {string} label @param {Attrs} attrs */
		const bar = (c, label, attrs) => {
			const v = totalOf(c);
			const tip = label + " · " + new Date(d).toISOString().slice(0, 10) + "\n" + num(v) + " tokens in " + num(c.jobs) + (c.jobs === 1 ? " job" : " jobs") +
				"\ninput " + num(c.input) + " · output " + num(c.output) + " · cache write " + num(c.cacheWrite) + " · cache read " + num(c.cacheRead) +
				(c.costed ? "\n" + costText(c) : "");
			root.append(svg("rect", { ...attrs, x: cx - barW / 2, y: y(acc + v), width: barW, height: Math.max(y(acc) - y(acc + v), 1) }, svg("title", { text: tip })));
			acc += v;
		};
		for (const agent of busiest) {
			const c = cells.get(d + "|" + agent);
			if (c && totalOf(c) > 0) bar(c, agent, { class: "bar " + series(agent), "data-agent": agent });
		}
		// The others: the day's total less the busiest agents' days.
		const t = totals.get(d);
		if (t) {
			const rest = { ...t };
			let restAgents = t.agents;
			let busiestCosted = 0;
			for (const agent of busiest) {
				const c = cells.get(d + "|" + agent);
				if (!c) continue;
				restAgents--;
				busiestCosted += c.costed;
				for (const k of USAGE_SUMS) rest[k] -= c[k];
			}
			// To a millionth of a dollar, as the API rounds. The day's cost is another agent's too if none
			// of the busiest has one that day, or if theirs do not make all of it.
			rest.cost = Math.round(rest.cost * 1e6) / 1e6;
			rest.costed = t.costed && (!busiestCosted || rest.cost > 0) ? 1 : 0;
			if (totalOf(rest) > 0) bar(rest, restAgents + (restAgents === 1 ? " other agent" : " other agents"), { class: "bar series-other", "data-others": restAgents });
		}
		if (barTotals && dayTotals[i] > 0) root.append(svg("text", { x: cx, y: y(dayTotals[i]) - 6, "text-anchor": "middle", text: compact(dayTotals[i]) }));
	});
	root.append(svg("g", { class: "axis" }, svg("line", { x1: left, x2: W - right, y1: y(0), y2: y(0) })));
	const chart = $("#usage-chart");
	drawPinned(chart, root, left, H, axis);
	// On a phone the chart scrolls in its box: opened at its newest days, the ones a reader came for.
	chart.scrollLeft = chart.scrollWidth;
	const legend = busiest.map((a) => h("li", null, h("span", { class: "swatch " + series(a) }), a));
	if (others) legend.push(h("li", { "data-others": others }, h("span", { class: "swatch series-other" }), num(others) + (others === 1 ? " other agent" : " other agents")));
	$("#usage-legend").replaceChildren(...legend);
	const tbody = $("#usage-table tbody");
	const more = $("#usage-more");
	const everyone = $("#usage-all");
	/** @param {UsageCell} c */
	const row = (c) => h("tr", null,
		h("td", { class: "nowrap", text: new Date(c.day).toISOString().slice(0, 10) }),
		h("td", null, agentLink(c.agent)),
		h("td", { class: "num", text: num(c.jobs) }),
		h("td", { class: "num", text: num(c.input) }),
		h("td", { class: "num", text: num(c.output) }),
		h("td", { class: "num", text: num(c.cacheWrite) }),
		h("td", { class: "num", text: num(c.cacheRead) }),
		h("td", { class: "num", text: c.costed ? costText(c) : "—" }));
	/** Draws the rows read and not drawn yet, and says how many are shown: of the days' rows, or more if more came since. */
	const draw = () => {
		tbody.append(...rows.slice(tbody.rows.length).map(row));
		const shown = tbody.rows.length;
		more.hidden = everyone.hidden = cursor === null;
		$("#usage-rows").textContent = cursor !== null ? num(shown) + " of " + num(Math.max(rowCount, shown + 1)) + " rows shown" : "";
	};
	tbody.replaceChildren();
	draw();
	// The last rows hide both buttons: the first row added takes the focus.
	/** @param {number} from */
	const firstAdded = (from) => () => tbody.rows[from] && tbody.rows[from].querySelector("a");
	more.onclick = () =>
		act(more, async () => {
			await readRows(USAGE_ROWS);
			draw();
		}, undefined, firstAdded(tbody.rows.length));
	// Every agent-day of the period, as the API sums them, for a spreadsheet: read apart from the table's
	// pages, so that the table is not made to draw thousands of rows to be saved.
	$("#usage-csv").onclick = (/** @type {Click} */ e) => act(e.currentTarget, async () => {
		/** @type {UsageDay[]} */
		const all = [];
		/** @type {string | null} */
		let after = null;
		do {
			/** @type {Record<string, string>} */
			const q = { limit: String(USAGE_ALL_ROWS) };
			if (after) q.cursor = after;
			/** @type {UsagePage} */
			const page = await read(q);
			all.push(...page.days);
			after = page.next_cursor;
		} while (after);
		saveFile(new Blob([csvOf(USAGE_CSV_FIELDS, all)], { type: "text/csv" }), "drover-usage-" + range.since + "-to-" + range.until + (agent ? "-" + agent.replaceAll(",", "-") : "") + ".csv");
	});
	everyone.onclick = () =>
		act(everyone, async () => {
			while (cursor !== null) await readRows(USAGE_ALL_ROWS);
			draw();
		}, undefined, firstAdded(tbody.rows.length));
	$("#usage-csv").hidden = !rows.length;
	if (!rows.length) tbody.append(h("tr", null, h("td", { colspan: 8, class: "muted", text: agent ? await noUsageOf(agent, periodDays, signal) : "No jobs in the last " + periodDays + " days." })));
}

/**
 * What an agent filter with no usage is: an agent without jobs, or (as the API's usage answers a
 * mistyped name as an idle agent) no agent of that name, asked of its jobs route, as the jobs list asks.
 * @param {string} agent @param {number} periodDays @param {AbortSignal} signal @returns {Promise<string>}
 */
async function noUsageOf(agent, periodDays, signal) {
	const none = "No jobs of " + printable(agent) + " in the last " + periodDays + " days.";
	if (agent.includes(",")) return none;
	try {
		await api("/v1/agents/" + enc(agent) + "/jobs?limit=1", { signal });
		return none;
	} catch (err) {
		if (err instanceof ApiError && err.status === 404) return "No usage: " + printable(err.message) + ".";
		throw err;
	}
}
/** The CSV's columns: the API's fields, as `drover usage --csv` writes them. */
const USAGE_CSV_FIELDS = ["day", "agent", "jobs", "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "cost_usd", "priced_jobs"];
/** A cost, saying so when it is of only some of the jobs (the others ran on a model without a price), as the CLI does. @param {{ cost: number, priced: number, jobs: number }} c */
function costText(c) {
	return usd(c.cost) + (c.priced < c.jobs ? " (" + c.priced + " of " + c.jobs + " priced)" : "");
}
