// @ts-check
// ── Usage ──
const DAY = 86400e3;
const USAGE_DAYS = 7;
const USAGE_SERIES = 8;
/**
 * The table's rows drawn at first, and at each "Next": a week of a 1,000-agent fleet is 7,000 rows,
 * 70,000 nodes drawn in one go (2 s with the page frozen, Chromium) for a table read from its top.
 */
const USAGE_ROWS = 200;
/** @param {AbortSignal} signal */
async function usageView(signal) {
	const meta = $("#usage-meta");
	const today = Math.floor(Date.now() / DAY) * DAY;
	const since = today - (USAGE_DAYS - 1) * DAY;
	meta.textContent = "Loading…";
	// The index keeps each agent's ended jobs summed by day: a page of rows per request, however many jobs.
	/** @type {Map<string, UsageCell>} */
	const cells = new Map();
	/** @type {string | null} */
	let cursor = null;
	// A failed page is shown by the caller's notice; "Loading…" must not stay beside it.
	try {
		do {
			const q = new URLSearchParams({ since: new Date(since).toISOString().slice(0, 10), until: new Date(today).toISOString().slice(0, 10), limit: "1000" });
			if (cursor) q.set("cursor", cursor);
			/** @type {UsagePage} */
			const page = await api("/v1/usage?" + q, { signal });
			for (const u of page.days) {
				const day = Date.parse(u.day);
				cells.set(day + "|" + u.agent, {
					day,
					agent: u.agent,
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
			}
			cursor = page.next_cursor;
		} while (cursor);
	} catch (err) {
		meta.textContent = "";
		throw err;
	}
	const rows = [...cells.values()].sort((a, b) => b.day - a.day || (a.agent < b.agent ? -1 : 1));
	/** @param {Usage} c */
	const totalOf = (c) => c.input + c.output + c.cacheWrite + c.cacheRead;
	const byAgent = new Map();
	for (const c of rows) byAgent.set(c.agent, (byAgent.get(c.agent) || 0) + totalOf(c));
	const agents = [...byAgent.keys()].filter((a) => byAgent.get(a) > 0).sort((a, b) => byAgent.get(b) - byAgent.get(a) || (a < b ? -1 : 1));
	// Eight colours tell agents apart; a larger fleet's other agents share one grey segment a day,
	// instead of colours repeating down a bar of hundreds of slivers.
	const busiest = agents.slice(0, USAGE_SERIES);
	const others = agents.slice(USAGE_SERIES);
	/** @param {string} agent */
	const series = (agent) => "series-" + busiest.indexOf(agent);
	const jobs = rows.reduce((n, c) => n + c.jobs, 0);
	meta.textContent = "Last " + USAGE_DAYS + " days (UTC) · " + num(jobs) + (jobs === 1 ? " ended job" : " ended jobs");

	const days = Array.from({ length: USAGE_DAYS }, (_, i) => since + i * DAY);
	const W = 1200, H = 320, left = 64, right = 16, top = 16, bottom = 32;
	const dayTotals = days.map((d) => rows.filter((c) => c.day === d).reduce((n, c) => n + totalOf(c), 0));
	const { max, step } = niceAxis(Math.max(...dayTotals), 4);
	/** @param {number} v */
	const y = (v) => top + (H - top - bottom) * (1 - v / max);
	const band = (W - left - right) / days.length;
	const barW = Math.min(band * 0.6, 90);
	const root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "Tokens per agent per day", class: "usage-chart" });
	for (let v = 0; v <= max; v += step) {
		root.append(svg("line", { class: "grid-line", x1: left, x2: W - right, y1: y(v), y2: y(v) }));
		root.append(svg("text", { x: left - 8, y: y(v) + 4, "text-anchor": "end", text: compact(v) }));
	}
	days.forEach((d, i) => {
		const cx = left + band * i + band / 2;
		root.append(svg("text", { x: cx, y: H - 10, "text-anchor": "middle", text: new Date(d).toLocaleDateString("en-GB", { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" }) }));
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
		const rest = { jobs: 0, input: 0, output: 0, cacheWrite: 0, cacheRead: 0, cost: 0, priced: 0, costed: 0 };
		let restAgents = 0;
		for (const agent of others) {
			const c = cells.get(d + "|" + agent);
			if (!c || totalOf(c) === 0) continue;
			restAgents++;
			for (const k of /** @type {(keyof Usage)[]} */ (Object.keys(rest))) rest[k] += c[k];
		}
		if (restAgents) bar(rest, restAgents + (restAgents === 1 ? " other agent" : " other agents"), { class: "bar series-other", "data-others": restAgents });
		if (dayTotals[i] > 0) root.append(svg("text", { x: cx, y: y(dayTotals[i]) - 6, "text-anchor": "middle", text: compact(dayTotals[i]) }));
	});
	root.append(svg("g", { class: "axis" }, svg("line", { x1: left, x2: W - right, y1: y(0), y2: y(0) })));
	$("#usage-chart").replaceChildren(root);
	const legend = busiest.map((a) => h("li", null, h("span", { class: "swatch " + series(a) }), a));
	if (others.length) legend.push(h("li", { "data-others": others.length }, h("span", { class: "swatch series-other" }), num(others.length) + (others.length === 1 ? " other agent" : " other agents")));
	$("#usage-legend").replaceChildren(...legend);
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
	/** Draws rows up to `to` (of those not drawn yet), and says how many are shown. @param {number} to */
	const drawTo = (to) => {
		const from = tbody.rows.length;
		tbody.append(...rows.slice(from, to).map(row));
		const shown = tbody.rows.length;
		more.hidden = everyone.hidden = shown >= rows.length;
		$("#usage-rows").textContent = shown < rows.length ? num(shown) + " of " + num(rows.length) + " rows shown" : "";
	};
	tbody.replaceChildren();
	drawTo(USAGE_ROWS);
	// The last rows hide both buttons: the first row added takes the focus.
	/** @param {number} from */
	const firstAdded = (from) => () => tbody.rows[from] && tbody.rows[from].querySelector("a");
	more.onclick = () => act(more, async () => drawTo(tbody.rows.length + USAGE_ROWS), undefined, firstAdded(tbody.rows.length));
	everyone.onclick = () => act(everyone, async () => drawTo(rows.length), undefined, firstAdded(tbody.rows.length));
	if (!rows.length) tbody.append(h("tr", null, h("td", { colspan: 8, class: "muted", text: "No jobs in the last " + USAGE_DAYS + " days." })));
}

/** A cost, saying so when it is of only some of the jobs (the others ran on a model without a price), as the CLI does. @param {Usage} c */
function costText(c) {
	return "$" + c.cost.toFixed(4) + (c.priced < c.jobs ? " (" + c.priced + " of " + c.jobs + " priced)" : "");
}
