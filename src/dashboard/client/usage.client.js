// @ts-check
// ── Usage ──
const DAY = 86400e3;
const USAGE_DAYS = 7;
/**
 * The table's rows read and drawn at first, and at each "Next": a week of a 1,000-agent fleet is 7,000
 * rows, 70,000 nodes drawn in one go (2 s with the page frozen, Chromium) for a table read from its top.
 */
const USAGE_ROWS = 200;
/** @param {AbortSignal} signal */
async function usageView(signal) {
	const meta = $("#usage-meta");
	const today = Math.floor(Date.now() / DAY) * DAY;
	const since = today - (USAGE_DAYS - 1) * DAY;
	const range = { since: new Date(since).toISOString().slice(0, 10), until: new Date(today).toISOString().slice(0, 10) };
	meta.textContent = "Loading…";
	/** @param {{ jobs: number, input_tokens: number, output_tokens: number, cache_creation_input_tokens: number, cache_read_input_tokens: number, cost_usd: number | null, priced_jobs: number }} u @returns {Usage} */
	const usageOf = (u) => ({
		jobs: u.jobs,
		input: u.input_tokens,
		output: u.output_tokens,
		cacheWrite: u.cache_creation_input_tokens,
		cacheRead: u.cache_read_input_tokens,
		cost: u.cost_usd ?? 0,
		priced: u.priced_jobs,
		// Null when no job that used tokens was priced (those that made no call are, at $0): "—", not $0.
		costed: u.cost_usd === null ? 0 : 1,
	});
	/** @param {UsageDay} u @returns {UsageCell} */
	const cellOf = (u) => ({ day: Date.parse(u.day), agent: u.agent, ...usageOf(u) });
	// The chart is of the fleet's days, summed by the index (group=day: 7 rows); the table reads its
	// agents' days a page at a time as it draws them. Both read every 1,000 rows of a week of a 1,000-agent
	// fleet (7 pages, 1.3 MB) before.
	/** @type {Map<number, UsageTotalCell>} */
	const totals = new Map();
	/** @type {UsageCell[]} */
	const rows = [];
	/** @type {string | null} */
	let cursor = null;
	/** The table's next page of `limit` rows. @param {number} limit */
	const readRows = async (limit) => {
		const q = new URLSearchParams({ ...range, limit: String(limit) });
		if (cursor) q.set("cursor", cursor);
		/** @type {UsagePage} */
		const page = await api("/v1/usage?" + q, { signal });
		rows.push(...page.days.map(cellOf));
		cursor = page.next_cursor;
	};
	// A failed page is shown by the caller's notice; "Loading…" must not stay beside it.
	try {
		const readTotals = async () => {
			/** @type {string | null} */
			let after = null;
			do {
				const q = new URLSearchParams({ ...range, group: "day", limit: String(USAGE_DAYS) });
				if (after) q.set("cursor", after);
				/** @type {UsageTotalPage} */
				const page = await api("/v1/usage?" + q, { signal });
				for (const u of page.days) totals.set(Date.parse(u.day), { agents: u.agents, ...usageOf(u) });
				after = page.next_cursor;
			} while (after);
		};
		await Promise.all([readTotals(), readRows(USAGE_ROWS)]);
	} catch (err) {
		meta.textContent = "";
		throw err;
	}
	/** @param {Usage} c */
	const totalOf = (c) => c.input + c.output + c.cacheWrite + c.cacheRead;
	let jobs = 0;
	let rowCount = 0;
	for (const t of totals.values()) {
		jobs += t.jobs;
		rowCount += t.agents;
	}
	meta.textContent = "Last " + USAGE_DAYS + " days (UTC) · " + num(jobs) + (jobs === 1 ? " ended job" : " ended jobs");

	const days = Array.from({ length: USAGE_DAYS }, (_, i) => since + i * DAY);
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
	const root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "Tokens per day, all agents", class: "usage-chart" });
	for (let v = 0; v <= max; v += step) {
		root.append(svg("line", { class: "grid-line", x1: left, x2: W - right, y1: y(v), y2: y(v) }));
		root.append(svg("text", { x: left - 8, y: y(v) + 4, "text-anchor": "end", text: compact(v) }));
	}
	days.forEach((d, i) => {
		const cx = left + band * i + band / 2;
		root.append(svg("text", { x: cx, y: H - 10, "text-anchor": "middle", text: new Date(d).toLocaleDateString("en-GB", { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" }) }));
		const t = totals.get(d);
		const v = dayTotals[i];
		if (!t || v === 0) return;
		const tip = num(t.agents) + (t.agents === 1 ? " agent" : " agents") + " · " + new Date(d).toISOString().slice(0, 10) + "\n" + num(v) + " tokens in " + num(t.jobs) + (t.jobs === 1 ? " job" : " jobs") +
			"\ninput " + num(t.input) + " · output " + num(t.output) + " · cache write " + num(t.cacheWrite) + " · cache read " + num(t.cacheRead) +
			(t.costed ? "\n" + costText(t) : "");
		root.append(svg("rect", { class: "bar series-0", "data-agents": t.agents, x: cx - barW / 2, y: y(v), width: barW, height: Math.max(y(0) - y(v), 1) }, svg("title", { text: tip })));
		root.append(svg("text", { x: cx, y: y(v) - 6, "text-anchor": "middle", text: compact(v) }));
	});
	root.append(svg("g", { class: "axis" }, svg("line", { x1: left, x2: W - right, y1: y(0), y2: y(0) })));
	$("#usage-chart").replaceChildren(root);
	const tbody = $("#usage-table tbody");
	const more = $("#usage-more");
	const everyone = $("#usage-all");
	/** @param {UsageCell} c */
	const row = (c) => h("tr", null,
		h("td", { text: new Date(c.day).toISOString().slice(0, 10) }),
		h("td", null, agentLink(c.agent)),
		h("td", { class: "num", text: num(c.jobs) }),
		h("td", { class: "num", text: num(c.input) }),
		h("td", { class: "num", text: num(c.output) }),
		h("td", { class: "num", text: num(c.cacheWrite) }),
		h("td", { class: "num", text: num(c.cacheRead) }),
		h("td", { class: "num", text: c.costed ? costText(c) : "—" }));
	/** Draws the rows read and not drawn yet, and says how many are shown. */
	const draw = () => {
		tbody.append(...rows.slice(tbody.rows.length).map(row));
		const shown = tbody.rows.length;
		// The days' agents count the rows; a row ended since the totals were read is one more than they say.
		const total = Math.max(rowCount, shown);
		more.hidden = everyone.hidden = cursor === null;
		$("#usage-rows").textContent = cursor !== null ? num(shown) + " of " + num(total) + " rows shown" : "";
	};
	tbody.replaceChildren();
	draw();
	// The last rows hide both buttons: the first row added takes the focus.
	/** @param {number} from */
	const firstAdded = (from) => () => tbody.rows[from] && tbody.rows[from].querySelector("a");
	more.onclick = () => act(more, async () => {
		if (cursor) await readRows(USAGE_ROWS);
		draw();
	}, undefined, firstAdded(tbody.rows.length));
	everyone.onclick = () => act(everyone, async () => {
		while (cursor) await readRows(1000);
		draw();
	}, undefined, firstAdded(tbody.rows.length));
	if (!rows.length) tbody.append(h("tr", null, h("td", { colspan: 8, class: "muted", text: "No jobs in the last " + USAGE_DAYS + " days." })));
}

/** A cost, saying so when it is of only some of the jobs (the others ran on a model without a price), as the CLI does. @param {Usage} c */
function costText(c) {
	return "$" + c.cost.toFixed(4) + (c.priced < c.jobs ? " (" + c.priced + " of " + c.jobs + " priced)" : "");
}
