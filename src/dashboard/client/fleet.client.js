// @ts-check
// ── Fleet ──
const FLEET_PAGE = 100;
/**
 * Each agent a page shows costs the API a read of that agent's object: past two pages shown, the
 * poll comes less often, so a tab showing the whole of a 10,000-agent fleet reads two pages each
 * LIVE_MS on average, not 100. @param {number} pages
 */
const fleetPollMs = (pages) => LIVE_MS * Math.max(1, Math.ceil(pages / 2));
/** What a new agent's editor opens on: the fields most agents set, to change. */
const NEW_AGENT = "name: new-agent\nprompt: |\n  What the agent does at each run.\nschedules:\n  daily:\n    cron: \"0 9 * * *\"\n    timezone: UTC\n";
/** Agents come a page at a time (each costs the API a status read per agent): the shown ones are counted as such. @param {AbortSignal} signal */
async function fleetView(signal) {
	const tbody = $("#fleet-table tbody");
	const more = $("#fleet-more");
	const everyone = $("#fleet-all");
	/** @type {AgentView[]} */
	let shown = [];
	/** @type {string | null} */
	let cursor = null; // next_cursor after the last shown agent: null when all are shown
	let pages = 1;
	/** @type {?number} */
	let total = null; // from /v1/status: every agent, shown or not
	/** The agents whose greyed-out Run now was pressed: its reason stays said in their rows while it holds. @type {Set<string>} */
	const toldWhy = new Set();
	const creating = $("#new-agent");
	$("#fleet-new").onclick = () => {
		// Its button is gone while it is open: a second click would start it again, losing what was typed.
		$("#fleet-new").hidden = true;
		creating.hidden = false;
		creating.replaceChildren(...definitionEditor({
			agent: null,
			read: null,
			text: NEW_AGENT,
			back: () => {
				creating.hidden = true;
				creating.replaceChildren();
				$("#fleet-new").hidden = false;
				$("#fleet-new").focus();
			},
			saved: openCreated,
		}));
		$("#definition-text").focus();
	};
	const search = $("#fleet-filter");
	const prefixInput = search.elements.prefix;
	let prefix = new URLSearchParams(location.search).get("prefix") || "";
	prefixInput.value = prefix;
	/** @type {(after: string | null) => Promise<AgentPage>} */
	const page = (after) => api("/v1/agents?limit=" + FLEET_PAGE + (prefix ? "&prefix=" + enc(prefix) : "") + (after ? "&cursor=" + enc(after) : ""), { signal });
	const drawMeta = () => {
		const running = shown.reduce((n, a) => n + a.running_jobs.length, 0);
		const paused = shown.filter((a) => a.paused).length;
		const counts = num(running) + " running · " + num(paused) + " paused";
		const every = fleetPollMs(pages);
		const refreshed = every > LIVE_MS ? " · refreshed every " + dur(every / 1000) : "";
		$("#fleet-meta").textContent = (!cursor
			? num(shown.length) + (shown.length === 1 ? " agent · " : " agents · ") + counts
			: num(shown.length) + " of " + (total === null ? "more" : num(Math.max(total, shown.length))) + " agents shown · " + counts + " among those shown") + refreshed;
		more.hidden = everyone.hidden = !cursor;
	};
	const draw = () => keepingFocus(tbody, () => {
		syncRows(tbody, shown, (a) => a.name, (a) => agentRow(a, load, toldWhy));
		if (!shown.length) tbody.append(h("tr", null, h("td", { colspan: 6, class: "muted", text: !prefix ? "No agents." : nameStart(prefix) ? "No agents whose name starts with " + printable(prefix) + "." : "No agent's name starts with " + printable(prefix) + ": names are lowercase letters, digits and dashes, beginning with a letter or digit." })));
		drawMeta();
	});
	// Reloads as many pages as are shown (a poll, an action), walking them afresh from the first.
	const load = newestWins(async (fresh) => {
		// The same answer keeps the scheduler pill current: this view's poll reads it only here (the
		// first load, the page's start having just read it, takes that answer).
		const handed = takeStartStatus();
		const status = (handed ? Promise.resolve(handed) : api("/v1/status", { signal })).then((/** @type {Status} */ s) => {
			showScheduler(s);
			return s.agents.file + s.agents.api;
		}, () => null);
		// A search no name could match is not asked of the API (it would refuse it): the pill is still read.
		const { rows, next } = prefix && !nameStart(prefix) ? { rows: [], next: null } : await firstPages(page, "agents", pages);
		const count = await status;
		if (signal.aborted || !fresh()) return;
		// The status counts the whole fleet: of a search's agents, only the pages say how many.
		total = prefix ? null : count;
		// Pages added meanwhile by "Next" stay, after what this walk read.
		const kept = next ? shown.filter((a) => a.name > next) : [];
		shown = rows.concat(kept);
		if (!kept.length) {
			cursor = next;
			if (!next) pages = Math.max(1, Math.ceil(rows.length / FLEET_PAGE));
		}
		draw();
	});
	const loadNext = async () => {
		const after = cursor;
		if (!after) return;
		const p = await page(after);
		if (signal.aborted || cursor !== after) return; // a reload has redrawn the list since
		shown = shown.concat(p.agents);
		cursor = p.next_cursor;
		pages++;
		tbody.append(...p.agents.map((a) => rowFor(a.name, a, (x) => agentRow(x, load, toldWhy))));
		drawMeta();
	};
	// The last page hides both buttons: the first agent it added takes the focus.
	/** @param {number} from */
	const firstAdded = (from) => () => tbody.rows[from] && tbody.rows[from].querySelector("a");
	more.onclick = () => act(more, loadNext, undefined, firstAdded(tbody.rows.length));
	everyone.onclick = () => act(everyone, async () => {
		more.disabled = true;
		try {
			while (cursor && !signal.aborted) await loadNext();
		} finally {
			more.disabled = false;
		}
	}, undefined, firstAdded(tbody.rows.length));
	// A search, as it is typed (once the typing rests) or on Enter: from its first page, in the address.
	let settle = 0;
	const applySearch = () => {
		clearTimeout(settle);
		settle = 0;
		const wanted = prefixInput.value.trim();
		if (wanted === prefix) return;
		prefix = wanted;
		history.replaceState(null, "", "/" + (prefix ? "?prefix=" + enc(prefix) : ""));
		shown = [];
		cursor = null;
		pages = 1;
		// Not asked of the API, which would refuse it: said in the list's place at once.
		if (prefix && !nameStart(prefix)) return draw();
		load().then(pollSucceeded, pollFailed);
	};
	prefixInput.addEventListener("input", () => {
		clearTimeout(settle);
		settle = setTimeout(applySearch, FILTER_SETTLE_MS);
	}, { signal });
	signal.addEventListener("abort", () => clearTimeout(settle));
	search.onsubmit = (/** @type {Event} */ e) => {
		e.preventDefault();
		applySearch();
	};
	await load();
	poll(load, () => fleetPollMs(pages), true);
}
/** Whether `text` can begin an agent name: a name's start is a name (AGENT_NAME_PATTERN, the API's own). @param {string} text */
const nameStart = (text) => AGENT_NAME_PATTERN.test(text);
/** How long a status said again is left empty first: long enough for a screen reader to see it change. */
const SAY_AGAIN_MS = 150;
/**
 * A schedule's newest slot and what became of it (Hermes' last status): a skip's reason, and a
 * delivery that did not get through. Nothing before its first slot, or from a server before it.
 * @param {AgentView["schedules"][number]["last_run"]} l
 */
function lastRunLine(l) {
	if (!l) return null;
	const d = l.delivery_outcome;
	return h("div", { class: "sub" }, "last " + slotText(Date.parse(l.scheduled_instant)) + " ", badge(l.status),
		d === "failed" || d === "unknown" ? [" ", badge(d, "d-")] : null,
		l.status === "skipped" && l.skip_reason ? h("span", { class: "reason", text: printable(l.skip_reason) }) : null);
}
/**
 * @param {AgentView} a @param {() => Promise<void>} reload
 * @param {Set<string>} toldWhy the agents whose greyed-out Run now was pressed, its reason said in their rows
 */
function agentRow(a, reload, toldWhy) {
	const auto = !!a.paused && a.paused.by === "auto";
	let state;
	if (!a.enabled) state = badge("disabled", "");
	else if (a.paused) {
		state = [
			badge(auto ? "auto-paused" : "paused", ""),
			" ",
			h("span", { class: "muted small" }, "since ", exactTime(a.paused.at)),
			// The badge already says "auto-paused"; an automatic reason starts "auto: " too.
			a.paused.reason ? h("span", { class: "reason", text: printable(auto ? a.paused.reason.replace(/^auto: /, "") : a.paused.reason) }) : null,
		];
	} else state = badge("active", "");
	// What fails though the agent runs (a webhook trigger's or a hook's secret not set); absent from an older server.
	const warnings = (a.warnings || []).map((w) => h("div", { class: "reason", text: "⚠ " + printable(w) }));
	if (warnings.length) state = [state, ...warnings];
	const schedules = a.schedules.length
		? h("ul", { class: "plain" }, a.schedules.map((s) =>
			h("li", null,
				h("strong", { text: s.name }), " ",
				// Whole on a phone, as the times are: "0 9 * * 1-5" broken after its "0" reads as another cron.
				h("code", { class: "nowrap", text: s.expression + (s.timezone && s.timezone !== "UTC" ? " " + s.timezone : "") }), " · ",
				// A paused agent's due runs are skipped: its next slot is said as such, not as a run to come.
				s.next_run && a.paused ? h("span", { class: "muted", text: "next " + slotText(Date.parse(s.next_run)) + " — skipped while paused" })
				: s.next_run ? ["next ", slotTime(s.next_run)] : h("span", { class: "muted", text: s.enabled ? "no next run" : "disabled" }),
				lastRunLine(s.last_run))))
		: h("span", { class: "muted", text: "manual / webhook only" });
	const running = a.running_jobs.length || a.queued_jobs
		? h("ul", { class: "plain" },
			a.running_jobs.map((j) => h("li", null, badge(j.status), " ", jobLink(j.id))),
			a.queued_jobs ? h("li", { class: "muted", text: a.queued_jobs + " queued" }) : null)
		: h("span", { class: "muted", text: "—" });
	const l = a.last_job;
	const last = l
		? [badge(l.status), " ", jobLink(l.id),
			h("span", { class: "sub" }, l.finished_at ? exactTime(l.finished_at) : null, l.exit_reason && l.exit_reason !== "success" ? " · " + words(l.exit_reason) : null,
				// A completed run whose answer did not get through is not ok.
				l.delivery === "failed" || l.delivery === "unknown" ? " · delivery " + l.delivery : null,
				failedCalls(l.tool_calls, l.status) ? " · " + failedCalls(l.tool_calls, l.status) : null)]
		: h("span", { class: "muted", text: a.running_jobs.length || a.queued_jobs ? "none ended yet" : "never ran" });
	const path = "/v1/agents/" + enc(a.name);
	// The API refuses to run a paused or disabled agent: Run now is offered greyed, saying why. Not
	// disabled, which no keyboard, touch or screen reader reaches (nor keepingFocus, once a poll
	// greys the focused one): aria-disabled, described by the reason, which pressing it shows.
	const cannot = !a.enabled ? a.name + " is disabled: enable it in its definition to run it" : a.paused ? a.name + " is paused: resume it to run it" : null;
	const why = cannot ? h("span", { id: "cannot-run-" + a.name, class: "sr-only", text: cannot }) : null;
	// Said in the row when pressed: a status, so a screen reader reads it out. Still said in the row
	// a poll redraws (its jobs or its pause changed), while it still holds; gone once the agent can run.
	if (!cannot) toldWhy.delete(a.name);
	const said = cannot ? h("span", { class: "reason", role: "status", text: toldWhy.has(a.name) ? cannot : null }) : null;
	/**
	 * Says why, pressed again too: the same text set again is no change a screen reader reads out, so
	 * it is taken away and put back a moment later, a change it reads (as a live region's announcer does).
	 * @param {HTMLElement} el @param {string} text
	 */
	const sayWhy = (el, text) => {
		toldWhy.add(a.name);
		if (el.textContent !== text) el.textContent = text;
		else {
			el.textContent = "";
			setTimeout(() => { if (!el.textContent) el.textContent = text; }, SAY_AGAIN_MS);
		}
	};
	const actions = h("td", { class: "actions", "data-needs": "operate" },
		h("button", { type: "button", class: "small", "data-needs": "operate", text: "Run now", "aria-label": "Run now: " + a.name,
			"aria-disabled": cannot ? "true" : null, "aria-describedby": why ? why.id : null, title: cannot,
			onclick: () => (cannot && said ? sayWhy(said, cannot) : runNow(a)) }),
		a.paused
			? h("button", { type: "button", class: "small", "data-needs": "operate", text: "Resume", "aria-label": "Resume " + a.name, onclick: (e) => act(e.currentTarget, async () => {
				/** @type {AgentStatus} */
				const after = await post(path + "/resume");
				await reload();
				// One that cannot run is refused (409, saying why); one that could not run by the time it
				// was next read is paused again, automatically: either way, not resumed.
				if (after.paused) {
					notify(a.name + " is still paused automatically: " + String(after.paused.reason || "").replace(/^auto: /, ""), false);
					return false;
				}
			}, "Resumed " + a.name) })
			: h("button", { type: "button", class: "small", "data-needs": "operate", text: "Pause", "aria-label": "Pause " + a.name, onclick: (e) => act(e.currentTarget, async () => {
				const paused = await ask({
					title: "Pause " + a.name,
					text: "Its due runs are skipped and its queued ones held until it is resumed; manual runs, continues and forks are refused meanwhile.",
					field: { label: "Reason (optional)", hint: "Shown with its paused state.", oneLine: true, maxLength: 500 },
					submit: "Pause",
					run: (reason) => post(path + "/pause", reason ? { reason } : {}),
				});
				if (!paused) return false;
				await reload();
			}, "Paused " + a.name) }),
		why, said);
	return h("tr", { class: auto ? "auto-paused" : null, "data-agent": a.name },
		h("td", null, h("strong", null, agentLink(a.name)),
			// A model's name whole: broken at its dashes it read "claude- / sonnet-5- / 5" on a phone.
			h("span", { class: "sub" }, h("span", { class: "nowrap", text: a.model }), " · " + (a.source === "file" ? "fleet.yaml" : "API") + " · ", h("a", { href: "/agents/" + enc(a.name) + "/logs", "aria-label": "Logs of " + a.name, text: "logs" }))),
		h("td", null, state),
		h("td", null, schedules),
		h("td", null, running),
		h("td", null, last),
		actions);
}
/** Run now, asked first: the prompt is the agent's default one unless another is given (one has to be, for an agent with none). @param {AgentView} a */
function runNow(a) {
	const keyOf = idempotencyKeys();
	return ask({
		title: "Run " + a.name + " now",
		text: "A new job of " + a.name + " starts at once, outside its schedules, and calls the model as any run does.",
		field: {
			label: a.has_default_prompt ? "Prompt (optional)" : "Prompt",
			hint: a.has_default_prompt ? "Empty runs the agent's default prompt." : a.name + " has no default prompt: the run needs one.",
			placeholder: a.has_default_prompt ? "(the agent's default prompt)" : "",
		},
		submit: "Run",
		run: async (text, dialog) => {
			if (!text && !a.has_default_prompt) return dialog.error("A prompt is needed to run " + a.name + ": it has no default prompt.");
			const body = text ? { prompt: text } : {};
			/** @type {JobRecord} */
			const job = await post("/v1/agents/" + enc(a.name) + "/jobs", body, keyOf(body));
			markStarted(job.id);
			location.href = "/jobs/" + enc(job.id);
		},
	});
}
