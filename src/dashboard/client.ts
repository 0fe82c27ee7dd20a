// The dashboard's only script, served at /ui/app.js. Plain browser JavaScript in a string: the pages
// are server-rendered shells, and this fills them from the JSON API with the signed-in token.
//
// Rules it keeps: the token lives in sessionStorage and leaves only as an Authorization header (never
// in a URL); text from the API reaches the page only through textContent/attributes, never as
// markup; no inline handlers or styles (the CSP forbids them). Written without template literals so
// it can sit inside this String.raw.

export const APP_JS = String.raw`"use strict";
(() => {
	const TOKEN_KEY = "drover.token";
	const VIEW = document.body.dataset.view;
	const SUBJECT = document.body.dataset.subject || "";
	const FINAL = ["completed", "failed", "cancelled", "indeterminate"];
	const enc = encodeURIComponent;
	const $ = (sel, root) => (root || document).querySelector(sel);

	// ── DOM building: strings always become text nodes or attribute values ──
	const SVG_NS = "http://www.w3.org/2000/svg";
	function setAttrs(el, attrs) {
		if (!attrs) return;
		for (const [k, v] of Object.entries(attrs)) {
			if (v === null || v === undefined || v === false) continue;
			if (k === "text") el.textContent = String(v);
			else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
			else el.setAttribute(k, v === true ? "" : String(v));
		}
	}
	function add(el, child) {
		if (child === null || child === undefined || child === false) return;
		if (Array.isArray(child)) {
			for (const c of child) add(el, c);
			return;
		}
		el.append(child instanceof Node ? child : document.createTextNode(String(child)));
	}
	function h(tag, attrs, ...children) {
		const el = document.createElement(tag);
		setAttrs(el, attrs);
		add(el, children);
		return el;
	}
	function svg(tag, attrs, ...children) {
		const el = document.createElementNS(SVG_NS, tag);
		setAttrs(el, attrs);
		add(el, children);
		return el;
	}

	// ── formatting ──
	const rtf = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
	const UNITS = [["year", 31536000], ["month", 2592000], ["week", 604800], ["day", 86400], ["hour", 3600], ["minute", 60], ["second", 1]];
	function relText(ms) {
		const d = (ms - Date.now()) / 1000;
		const a = Math.abs(d);
		if (a < 5) return "now";
		for (const [unit, sec] of UNITS) if (a >= sec) return rtf.format(Math.round(d / sec), unit);
		return "now";
	}
	const absText = (ms) => new Date(ms).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "medium" });
	/** A relative time that keeps itself current; the absolute one is its tooltip. */
	function when(iso) {
		if (!iso) return h("span", { class: "muted", text: "—" });
		const ms = Date.parse(iso);
		return h("time", { class: "rel", datetime: iso, title: absText(ms), text: relText(ms) });
	}
	function refreshTimes() {
		for (const t of document.querySelectorAll("time.rel")) t.textContent = relText(Date.parse(t.getAttribute("datetime")));
	}
	/** An absolute time (for ledgers, where the slot itself matters), with the relative one beneath. */
	const slotTime = (iso) =>
		iso
			? [h("span", { text: new Date(iso).toLocaleString("en-GB", { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", second: "2-digit" }) }), h("span", { class: "sub" }, when(iso))]
			: h("span", { class: "muted", text: "—" });
	const clock = (iso) => new Date(iso).toLocaleTimeString("en-GB", { hour12: false });
	function dur(sec) {
		if (sec === null || sec === undefined) return "—";
		if (sec < 10) return sec.toFixed(1) + " s";
		if (sec < 60) return Math.round(sec) + " s";
		const m = Math.floor(sec / 60);
		const s = Math.round(sec % 60);
		if (m < 60) return m + " min" + (s ? " " + s + " s" : "");
		return Math.floor(m / 60) + " h " + (m % 60) + " min";
	}
	const num = (n) => (n === null || n === undefined ? "—" : Number(n).toLocaleString("en"));
	const words = (s) => String(s).replace(/_/g, " ");
	const badge = (status, prefix) => h("span", { class: "badge " + (prefix || "s-") + status, text: words(status) });
	const jobLink = (id) => h("a", { href: "/jobs/" + enc(id), class: "mono", text: id });
	const agentLink = (name) => h("a", { href: "/agents/" + enc(name) + "/runs", text: name });
	const sleep = (ms, signal) =>
		new Promise((resolve) => {
			const t = setTimeout(resolve, ms);
			signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
		});

	// ── notices ──
	let noticeTimer = 0;
	function notify(message, ok) {
		const n = $("#notice");
		n.replaceChildren(h("span", { text: message }), h("button", { type: "button", class: "small", text: "Dismiss", onclick: () => { n.hidden = true; } }));
		n.className = ok ? "notice ok" : "notice";
		n.hidden = false;
		clearTimeout(noticeTimer);
		if (ok) noticeTimer = setTimeout(() => { n.hidden = true; }, 4000);
	}
	function fail(err) {
		if (!err || err.name === "AbortError") return;
		// A 401 has already put the sign-in form up with the API's message.
		if (err instanceof ApiError && err.status === 401) return;
		notify(err instanceof ApiError ? err.message : "Something went wrong: " + (err.message || String(err)));
	}

	// ── the API ──
	class ApiError extends Error {
		constructor(status, code, message) {
			super(message);
			this.status = status;
			this.code = code;
		}
	}
	/** The API's own message ({"error": {"code", "message"}}), or the status line if the body is not one. */
	async function errorFrom(res) {
		let code = "http_" + res.status;
		let message = "HTTP " + res.status + (res.statusText ? " " + res.statusText : "");
		try {
			const b = await res.json();
			if (b && b.error) {
				code = b.error.code || code;
				message = b.error.message || message;
			}
		} catch (e) {}
		return new ApiError(res.status, code, message);
	}
	const token = () => sessionStorage.getItem(TOKEN_KEY);
	async function request(path, opts) {
		opts = opts || {};
		const headers = new Headers(opts.headers || {});
		headers.set("authorization", "Bearer " + token());
		let body;
		if (opts.json !== undefined) {
			headers.set("content-type", "application/json");
			body = JSON.stringify(opts.json);
		}
		const res = await fetch(path, { method: opts.method || "GET", headers, body, signal: opts.signal, cache: "no-store" });
		if (!res.ok) {
			const err = await errorFrom(res);
			if (res.status === 401) signOut(err.message);
			throw err;
		}
		return res;
	}
	const api = async (path, opts) => (await request(path, opts)).json();
	const post = (path, json) => api(path, { method: "POST", json: json === undefined ? {} : json });
	/** Every page of a list endpoint, up to max items. */
	async function all(path, key, max) {
		const items = [];
		let cursor = null;
		do {
			const page = await api(path + (path.includes("?") ? "&" : "?") + "limit=200" + (cursor ? "&cursor=" + enc(cursor) : ""));
			items.push(...page[key]);
			cursor = page.next_cursor;
		} while (cursor && items.length < max);
		return items;
	}
	/** The first count pages of page(cursor) (fewer where the list ends): their key's rows, and the cursor after them. */
	async function firstPages(page, key, count) {
		const rows = [];
		let next = null;
		for (let i = 0; i < count; i++) {
			const p = await page(next);
			rows.push(...p[key]);
			next = p.next_cursor;
			if (!next) break;
		}
		return { rows, next };
	}
	/** Runs an action from a button: disabled while it runs, its error shown, an optional note on success. */
	async function act(button, fn, okMessage) {
		button.disabled = true;
		try {
			const done = await fn();
			if (okMessage && done !== false) notify(okMessage, true);
		} catch (err) {
			fail(err);
		} finally {
			button.disabled = false;
		}
	}

	// ── session ──
	let viewAbort = new AbortController();
	const POLL_STALL_MS = 120000;
	/** Calls fn every ms while the tab is shown: the next call is timed from the end of the last, so loads never overlap. */
	function poll(fn, ms) {
		const signal = viewAbort.signal;
		let t = 0;
		const again = async () => {
			if (!document.hidden && token()) {
				// A load that never answers (a half-open connection) must not end the polling for good:
				// past POLL_STALL_MS the next is set anyway, and whichever answers last is ignored.
				await Promise.race([fn().catch(fail), new Promise((resolve) => setTimeout(resolve, POLL_STALL_MS))]);
			}
			if (!signal.aborted) t = setTimeout(again, ms);
		};
		t = setTimeout(again, ms);
		signal.addEventListener("abort", () => clearTimeout(t));
	}
	/**
	 * A view's load where a poll, an action's reload or a filter change can overlap: the answer to an
	 * older request must not replace what a newer one already drew. load(fresh) calls fresh() once
	 * its data is in, and draws only if it answers true.
	 */
	function newestWins(load) {
		let started = 0;
		let drawn = 0;
		return () => {
			const n = ++started;
			return load(() => {
				if (n < drawn) return false;
				drawn = n;
				return true;
			});
		};
	}
	function showSignIn(message) {
		$("#view").hidden = true;
		$("#signin").hidden = false;
		$("#sign-out").hidden = true;
		$("#scheduler-pill").hidden = true;
		$("#notice").hidden = true;
		const err = $("#signin-error");
		err.textContent = message || "";
		err.hidden = !message;
		$("#token").focus();
	}
	function signOut(message) {
		sessionStorage.removeItem(TOKEN_KEY);
		viewAbort.abort();
		viewAbort = new AbortController();
		showSignIn(message);
	}
	function showScheduler(status) {
		const pill = $("#scheduler-pill");
		if (!status) return;
		const s = status.scheduler;
		pill.hidden = false;
		pill.className = s.stalled ? "pill bad" : "pill";
		pill.replaceChildren();
		if (!s.last_tick_at) pill.textContent = "scheduler: no tick yet";
		else add(pill, [s.stalled ? "scheduler stalled · last tick " : "last tick ", when(s.last_tick_at)]);
	}
	function start(status) {
		$("#signin").hidden = true;
		$("#view").hidden = false;
		$("#sign-out").hidden = false;
		showScheduler(status);
		const view = VIEWS[VIEW];
		if (view) view(viewAbort.signal).catch(fail);
	}
	$("#signin-form").addEventListener("submit", async (e) => {
		e.preventDefault();
		const input = $("#token");
		const button = $("#signin-form button");
		const tok = input.value.trim();
		button.disabled = true;
		let status = null;
		let statusError = null;
		try {
			// The token is checked on the job list: it needs only the read role, so any valid token
			// signs in, and it answers even when /v1/status cannot (an invalid fleet.yaml is a 500 there).
			const res = await fetch("/v1/jobs?limit=1", { headers: { authorization: "Bearer " + tok }, cache: "no-store" });
			if (!res.ok) throw await errorFrom(res);
			sessionStorage.setItem(TOKEN_KEY, tok);
			input.value = "";
		} catch (err) {
			showSignIn(err.message || String(err));
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
		if (statusError) notify("Signed in, but the scheduler's status is unavailable: " + (statusError.message || String(statusError)));
	});
	$("#sign-out").addEventListener("click", () => signOut());

	// ── Fleet ──
	const FLEET_PAGE = 100;
	/** Agents come a page at a time (each costs the API a status read per agent): the shown ones are counted as such. */
	async function fleetView(signal) {
		const tbody = $("#fleet-table tbody");
		const more = $("#fleet-more");
		const everyone = $("#fleet-all");
		let shown = [];
		let cursor = null; // next_cursor after the last shown agent: null when all are shown
		let pages = 1;
		let total = null; // from /v1/status: every agent, shown or not
		const page = (after) => api("/v1/agents?limit=" + FLEET_PAGE + (after ? "&cursor=" + enc(after) : ""), { signal });
		const drawMeta = () => {
			const running = shown.reduce((n, a) => n + a.running_jobs.length, 0);
			const paused = shown.filter((a) => a.paused).length;
			const counts = num(running) + " running · " + num(paused) + " paused";
			$("#fleet-meta").textContent = !cursor
				? num(shown.length) + (shown.length === 1 ? " agent · " : " agents · ") + counts
				: num(shown.length) + " of " + (total === null ? "more" : num(Math.max(total, shown.length))) + " agents shown · " + counts + " among those shown";
			more.hidden = everyone.hidden = !cursor;
		};
		const draw = () => {
			tbody.replaceChildren(...shown.map((a) => agentRow(a, load)));
			if (!shown.length) tbody.append(h("tr", null, h("td", { colspan: 6, class: "muted", text: "No agents." })));
			drawMeta();
		};
		// Reloads as many pages as are shown (a poll, an action), walking them afresh from the first.
		const load = newestWins(async (fresh) => {
			const status = api("/v1/status", { signal }).then((s) => s.agents.file + s.agents.api, () => null);
			const { rows, next } = await firstPages(page, "agents", pages);
			const count = await status;
			if (signal.aborted || !fresh()) return;
			total = count;
			// Pages added meanwhile by "Next" stay, after what this walk read.
			const kept = next ? shown.filter((a) => a.name > next) : [];
			shown = rows.concat(kept);
			if (!kept.length) cursor = next;
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
			tbody.append(...p.agents.map((a) => agentRow(a, load)));
			drawMeta();
		};
		more.onclick = () => act(more, loadNext);
		everyone.onclick = () => act(everyone, async () => {
			more.disabled = true;
			try {
				while (cursor && !signal.aborted) await loadNext();
			} finally {
				more.disabled = false;
			}
		});
		await load();
		poll(load, 10000);
	}
	function agentRow(a, reload) {
		const auto = !!a.paused && a.paused.by === "auto";
		let state;
		if (!a.enabled) state = badge("disabled", "");
		else if (a.paused) {
			state = [
				badge(auto ? "auto-paused" : "paused", ""),
				" ",
				h("span", { class: "muted small" }, "since ", when(a.paused.at)),
				// The badge already says "auto-paused"; an automatic reason starts "auto: " too.
				a.paused.reason ? h("span", { class: "reason", text: auto ? a.paused.reason.replace(/^auto: /, "") : a.paused.reason }) : null,
			];
		} else state = badge("active", "");
		const schedules = a.schedules.length
			? h("ul", { class: "plain" }, a.schedules.map((s) =>
				h("li", null,
					h("strong", { text: s.name }), " ",
					h("code", { text: s.expression + (s.timezone && s.timezone !== "UTC" ? " " + s.timezone : "") }), " · ",
					s.next_run ? ["next ", when(s.next_run)] : h("span", { class: "muted", text: s.enabled ? "no next run" : "disabled" }))))
			: h("span", { class: "muted", text: "manual / webhook only" });
		const running = a.running_jobs.length || a.queued_jobs
			? h("ul", { class: "plain" },
				a.running_jobs.map((j) => h("li", null, badge(j.status), " ", jobLink(j.id))),
				a.queued_jobs ? h("li", { class: "muted", text: a.queued_jobs + " queued" }) : null)
			: h("span", { class: "muted", text: "—" });
		const l = a.last_job;
		const last = l
			? [badge(l.status), " ", jobLink(l.id),
				h("span", { class: "sub" }, l.finished_at ? when(l.finished_at) : null, l.exit_reason && l.exit_reason !== "success" ? " · " + words(l.exit_reason) : null)]
			: h("span", { class: "muted", text: "never ran" });
		const path = "/v1/agents/" + enc(a.name);
		const actions = h("td", { class: "actions" },
			h("button", { type: "button", class: "small", text: "Run now", onclick: (e) => act(e.currentTarget, async () => {
				let body;
				if (!a.has_default_prompt) {
					// A manual- or webhook-only agent has no prompt of its own: the run needs one.
					const text = prompt("Run " + a.name + ": it has no default prompt. Prompt:", "");
					if (text === null) return false;
					if (!text.trim()) {
						notify("A prompt is needed to run " + a.name + ".");
						return false;
					}
					body = { prompt: text.trim() };
				}
				const job = await post(path + "/jobs", body);
				location.href = "/jobs/" + enc(job.id);
			}) }),
			a.paused
				? h("button", { type: "button", class: "small", text: "Resume", onclick: (e) => act(e.currentTarget, async () => {
					const after = await post(path + "/resume");
					await reload();
					// One that cannot run is refused (409, saying why); one that could not run by the time it
					// was next read is paused again, automatically: either way, not resumed.
					if (after.paused) {
						notify(a.name + " is still paused automatically: " + String(after.paused.reason || "").replace(/^auto: /, ""), false);
						return false;
					}
				}, "Resumed " + a.name) })
				: h("button", { type: "button", class: "small", text: "Pause", onclick: (e) => act(e.currentTarget, async () => {
					const reason = prompt("Pause " + a.name + ": its due runs are skipped until resumed. Reason (optional):", "");
					if (reason === null) return false;
					await post(path + "/pause", reason.trim() ? { reason: reason.trim() } : {});
					await reload();
				}, "Paused " + a.name) }));
		return h("tr", { class: auto ? "auto-paused" : null, "data-agent": a.name },
			h("td", null, h("strong", null, agentLink(a.name)), h("span", { class: "sub", text: a.model + " · " + (a.source === "file" ? "fleet.yaml" : "API") })),
			h("td", null, state),
			h("td", null, schedules),
			h("td", null, running),
			h("td", null, last),
			actions);
	}

	// ── Jobs ──
	const JOB_FILTERS = ["agent", "status", "trigger_type"];
	async function jobsView(signal) {
		const form = $("#jobs-filter");
		const tbody = $("#jobs-table tbody");
		const older = $("#jobs-older");
		const agentInput = form.elements.agent;
		const params = new URLSearchParams(location.search);
		for (const k of JOB_FILTERS) if (params.get(k)) form.elements[k].value = params.get(k);
		// The agent filter takes any name (a deleted agent's jobs stay listed); its suggestions are every
		// agent, read a page at a time in the background once it is first used, never holding up the list.
		const names = new Set();
		let suggesting = false;
		agentInput.addEventListener("focus", () => {
			if (suggesting) return;
			suggesting = true;
			(async () => {
				const list = $("#jobs-agents");
				let after = null;
				do {
					const page = await api("/v1/agents?limit=200" + (after ? "&cursor=" + enc(after) : ""), { signal });
					for (const a of page.agents) {
						names.add(a.name);
						list.append(h("option", { value: a.name }));
					}
					after = page.next_cursor;
				} while (after);
			})().catch((err) => {
				suggesting = false; // tried again at the next focus
				fail(err);
			});
		});
		let cursor = null;
		let shown = 0;
		let generation = 0;
		const query = () => {
			const q = new URLSearchParams();
			for (const k of JOB_FILTERS) if (form.elements[k].value.trim()) q.set(k, form.elements[k].value.trim());
			return q;
		};
		const load = async (reset) => {
			const mine = reset ? ++generation : generation;
			// Until the new filter's first page is in, "Older" would page it with the old list's cursor.
			if (reset) older.hidden = true;
			const q = query();
			q.set("limit", "25");
			if (!reset && cursor) q.set("cursor", cursor);
			const page = await api("/v1/jobs?" + q, { signal });
			if (mine !== generation) return; // a newer filter answered first
			if (reset) {
				tbody.replaceChildren();
				shown = 0;
			}
			tbody.append(...page.jobs.map(jobRow));
			shown += page.jobs.length;
			cursor = page.next_cursor;
			older.hidden = !cursor;
			$("#jobs-empty").hidden = shown > 0;
			$("#jobs-meta").textContent = shown + (cursor ? " shown, more older" : shown === 1 ? " job" : " jobs");
		};
		let applied = query().toString();
		const apply = () => {
			const q = query().toString();
			if (q === applied) return;
			applied = q;
			history.replaceState(null, "", "/jobs" + (q ? "?" + q : ""));
			load(true).catch(fail);
		};
		form.onchange = apply;
		form.onsubmit = (e) => {
			e.preventDefault();
			apply();
		};
		// A suggestion picked, or the name cleared, applies at once; other typing on Enter or leaving the field.
		agentInput.addEventListener("input", () => {
			if (!agentInput.value || names.has(agentInput.value)) apply();
		});
		older.onclick = () => act(older, () => load(false));
		await load(true);
	}
	function jobRow(j) {
		return h("tr", { "data-job": j.id },
			h("td", null, jobLink(j.id)),
			h("td", null, agentLink(j.agent)),
			h("td", null, badge(j.status)),
			h("td", null, words(j.trigger_type), j.schedule ? h("span", { class: "sub", text: j.schedule }) : null),
			h("td", null, j.started_at ? when(j.started_at) : h("span", { class: "muted" }, "created ", when(j.created_at))),
			h("td", { class: "num", text: dur(j.duration_seconds) }),
			h("td", { class: "summary", title: j.summary || "", text: j.summary || "" }));
	}

	// ── Job ──
	async function jobView(signal) {
		const id = SUBJECT;
		const path = "/v1/jobs/" + enc(id);
		let job = null;
		// Records come from GETs and from action responses over separate connections, so one may land
		// after a newer one: a lower revision than the shown record's is stale.
		const render = (j) => {
			if (job && j.revision < job.revision) return;
			job = j;
			renderJob(j);
		};
		let refreshing = null;
		let again = false;
		const refresh = () => {
			// Status events come in bursts: one fetch at a time, and one more after it when an event came
			// in meanwhile, since the fetch in flight may have read the job before that event's change.
			if (refreshing) {
				again = true;
				return refreshing;
			}
			refreshing = (async () => {
				do {
					again = false;
					render(await api(path, { signal }));
				} while (again && !signal.aborted);
			})().catch(fail).finally(() => { refreshing = null; });
			return refreshing;
		};
		try {
			render(await api(path, { signal }));
		} catch (err) {
			// No such job (or no such id): the notice says so, and no empty record or live buttons remain.
			if (err.status === 404 || err.status === 400) {
				for (const el of document.querySelectorAll("#view > :not(.view-head), #job-actions")) el.hidden = true;
			}
			throw err;
		}

		$("#job-cancel").onclick = (e) => act(e.currentTarget, async () => {
			if (!confirm("Cancel job " + id + "?")) return false;
			render(await post(path + "/cancel"));
		}, "Cancel requested");
		$("#job-fork").onclick = (e) => act(e.currentTarget, async () => {
			let forked;
			try {
				forked = await post(path + "/fork");
			} catch (err) {
				// The agent was changed since this job ran: forking is refused unless asked for anyway.
				if (!(err instanceof ApiError && err.status === 409 && String(err.message).includes("allow_definition_change"))) throw err;
				if (!confirm("The agent's definition changed since this job ran. Fork under the new definition?")) return false;
				forked = await post(path + "/fork", { allow_definition_change: true });
			}
			location.href = "/jobs/" + enc(forked.id);
		});
		$("#job-download").onclick = (e) => act(e.currentTarget, async () => {
			const res = await request(path + "/output");
			const url = URL.createObjectURL(new Blob([await res.blob()], { type: "application/x-ndjson" }));
			const a = h("a", { href: url, download: id + ".jsonl", hidden: true });
			document.body.append(a);
			a.click();
			a.remove();
			setTimeout(() => URL.revokeObjectURL(url), 60000);
		});
		const approvalError = $("#approval-error");
		$("#approval-approve").onclick = (e) => act(e.currentTarget, async () => {
			approvalError.hidden = true;
			let input;
			try {
				input = JSON.parse($("#approval-input").value);
			} catch (err) {
				approvalError.textContent = "The input is not valid JSON: " + err.message;
				approvalError.hidden = false;
				return false;
			}
			if (!input || typeof input !== "object" || Array.isArray(input)) {
				approvalError.textContent = "The input must be a JSON object.";
				approvalError.hidden = false;
				return false;
			}
			const asked = job && job.pending_approval ? job.pending_approval.input : null;
			const edited = JSON.stringify(input) !== JSON.stringify(asked);
			try {
				render(await post(path + "/approval", edited ? { decision: "approve", tool_input: input } : { decision: "approve" }));
			} catch (err) {
				// Input the tool's schema refuses is the panel's to say, beside the input, not the banner's.
				if (!(err instanceof ApiError && err.status === 400)) throw err;
				approvalError.textContent = err.message;
				approvalError.hidden = false;
				return false;
			}
		}, "Approved");
		$("#approval-deny").onclick = (e) => act(e.currentTarget, async () => {
			if (!confirm("Deny this tool call? The model is told it was refused.")) return false;
			render(await post(path + "/approval", { decision: "deny" }));
		}, "Denied");

		followOutput(id, signal, { status: refresh, end: refresh });
	}

	function renderJob(j) {
		const final = FINAL.includes(j.status);
		$("#job-status").replaceChildren(badge(j.status));
		document.title = j.id + " · " + words(j.status) + " · drover";
		const facts = [
			["Agent", agentLink(j.agent)],
			["Status", badge(j.status)],
			["Exit reason", j.exit_reason ? words(j.exit_reason) : "—"],
			["Trigger", words(j.trigger_type) + (j.schedule ? " · " + j.schedule : "")],
			j.scheduled_instant ? ["Slot", [when(j.scheduled_instant), j.dispatch ? " · " + words(j.dispatch) : ""]] : null,
			["Created", when(j.created_at)],
			["Started", when(j.started_at)],
			["Finished", when(j.finished_at)],
			["Duration", dur(j.duration_seconds)],
			j.owner ? ["Owner", j.owner] : null,
			j.forked_from ? ["Forked from", jobLink(j.forked_from)] : null,
			j.session_id ? ["Session", h("code", { text: j.session_id })] : null,
			j.error ? ["Error", h("span", { class: "error", text: j.error.type + ": " + j.error.message })] : null,
		].filter(Boolean);
		$("#job-facts").replaceChildren(...facts.flatMap(([k, v]) => [h("dt", { text: k }), h("dd", null, v)]));
		$("#job-prompt").textContent = j.prompt || "(the agent's default prompt)";
		$("#job-summary").textContent = j.summary || (final ? "(none)" : "(not yet)");

		const models = Object.entries(j.usage.per_model);
		const usage = $("#job-usage tbody");
		if (!models.length) usage.replaceChildren(h("tr", null, h("td", { colspan: 5, class: "muted", text: "No model calls yet." })));
		else {
			const total = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
			const row = (label, u, cls) => h("tr", { class: cls || null }, h("td", { class: "mono", text: label }),
				["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"].map((k) => h("td", { class: "num", text: num(u[k]) })));
			const rows = models.map(([model, u]) => {
				for (const k in total) total[k] += u[k];
				return row(model, u);
			});
			if (models.length > 1) rows.push(row("total", total, "total"));
			usage.replaceChildren(...rows);
		}
		const cost = j.usage.total_cost_usd;
		$("#job-usage-meta").textContent = j.usage.num_turns + (j.usage.num_turns === 1 ? " turn" : " turns") + " · " + (cost === null ? "cost not priced" : "$" + cost.toFixed(4));

		const delivery = $("#job-delivery");
		if (j.delivery) delivery.replaceChildren(badge(j.delivery.outcome, "d-"), " to ", h("code", { text: j.delivery.target }));
		else delivery.replaceChildren(h("span", { class: "muted", text: final ? "Nothing delivered (no delivery target, or the job did not complete)." : "Delivery happens when the job completes." }));

		const transitions = $("#job-transitions");
		transitions.replaceChildren(...(j.transitions.length
			? j.transitions.map((t) => h("li", { class: "to-" + t.to },
				h("strong", { text: words(t.from) + " → " + words(t.to) }), " ",
				h("span", { class: "muted small" }, when(t.at)),
				h("span", { class: "reason-text", text: t.reason })))
			: [h("li", { class: "muted", text: "Created " + relText(Date.parse(j.created_at)) + "; not started yet." })]));

		$("#job-cancel").hidden = final;
		$("#job-fork").hidden = !final;
		const panel = $("#job-approval");
		const pa = j.status === "approval_pending" ? j.pending_approval : null;
		panel.hidden = !pa;
		// Re-rendering must not throw away an edit in progress: only a new request resets the input.
		if (pa && panel.dataset.toolUseId !== pa.tool_use_id) {
			panel.dataset.toolUseId = pa.tool_use_id;
			$("#approval-tool").textContent = pa.tool_name;
			$("#approval-requested").replaceChildren(" (asked ", when(pa.requested_at), ")");
			$("#approval-input").value = JSON.stringify(pa.input, null, 2);
			$("#approval-error").hidden = true;
		}
	}

	/**
	 * Parses a Server-Sent Events body. EventSource cannot send an Authorization header, so the stream
	 * is read with fetch(); this is the part of the EventSource algorithm drover's stream needs.
	 * Resolves true when the server sent "end", false when the connection closed without it.
	 */
	async function readSse(body, signal, on) {
		const reader = body.pipeThrough(new TextDecoderStream()).getReader();
		const stop = () => reader.cancel().catch(() => {});
		signal.addEventListener("abort", stop, { once: true });
		let buffer = "";
		let data = [];
		let event = "";
		let id = null;
		try {
			for (;;) {
				const { value, done } = await reader.read();
				if (done) return false;
				buffer += value;
				let nl;
				while ((nl = buffer.indexOf("\n")) >= 0) {
					let line = buffer.slice(0, nl);
					buffer = buffer.slice(nl + 1);
					if (line.endsWith("\r")) line = line.slice(0, -1);
					if (line === "") {
						if (data.length) {
							const ev = { event: event || "message", data: data.join("\n"), id };
							data = [];
							event = "";
							if (on.event(ev) === "end") {
								stop();
								return true;
							}
						}
						event = "";
						continue;
					}
					if (line.startsWith(":")) continue;
					const colon = line.indexOf(":");
					const field = colon < 0 ? line : line.slice(0, colon);
					let val = colon < 0 ? "" : line.slice(colon + 1);
					if (val.startsWith(" ")) val = val.slice(1);
					if (field === "data") data.push(val);
					else if (field === "event") event = val;
					else if (field === "id") id = val;
					else if (field === "retry" && /^\d+$/.test(val)) on.retry(Number(val));
				}
			}
		} finally {
			signal.removeEventListener("abort", stop);
		}
	}

	/** The job's output, live: reconnects after a drop with Last-Event-ID, so no line is lost or shown twice. */
	async function followOutput(id, signal, on) {
		const log = $("#job-log");
		const state = $("#log-state");
		const setState = (cls, text) => {
			state.className = "pill " + cls;
			state.textContent = text;
		};
		let lastLine = 0;
		let retry = 2000;
		// Lines arrive in bursts (a replay from line 1 is the whole log at once): they are added a
		// batch at a time, reading the layout (is the reader at the bottom?) once a batch, not once a
		// line, which made a 6,000-line log take 20 s with the page frozen.
		let batch = null;
		const flush = () => {
			if (!batch) return;
			const stick = log.scrollTop + log.clientHeight >= log.scrollHeight - 8;
			log.append(batch);
			batch = null;
			if (stick) log.scrollTop = log.scrollHeight;
		};
		log.replaceChildren(h("li", { class: "placeholder", text: "Waiting for output…" }));
		let empty = true;
		setState("", "connecting…");
		while (!signal.aborted) {
			try {
				const headers = { accept: "text/event-stream" };
				if (lastLine > 0) headers["last-event-id"] = String(lastLine);
				const res = await request("/v1/jobs/" + enc(id) + "/stream", { headers, signal });
				setState("live", "live");
				const ended = await readSse(res.body, signal, {
					retry: (ms) => { retry = Math.min(Math.max(ms, 500), 30000); },
					event: (ev) => {
						if (ev.event === "line") {
							const n = Number(ev.id);
							if (!(n > lastLine)) return;
							lastLine = n;
							if (empty) {
								log.replaceChildren();
								empty = false;
							}
							if (!batch) {
								batch = document.createDocumentFragment();
								setTimeout(flush, 16);
							}
							batch.append(logLine(n, ev.data));
						} else if (ev.event === "status") on.status();
						else if (ev.event === "end") return "end";
					},
				});
				flush();
				if (ended) {
					setState("", "ended");
					if (empty) log.replaceChildren(h("li", { class: "placeholder", text: "No output." }));
					on.end();
					return;
				}
			} catch (err) {
				flush();
				if (signal.aborted) return;
				// A 4xx will not fix itself by retrying (bad id, no such job, signed out).
				if (err instanceof ApiError && err.status < 500 && err.status !== 429) {
					setState("", "unavailable");
					fail(err);
					return;
				}
			}
			setState("reconnecting", "reconnecting…");
			await sleep(retry, signal);
		}
	}

	function logLine(n, raw) {
		let o = null;
		try {
			o = JSON.parse(raw);
		} catch (e) {}
		const type = o && typeof o.type === "string" ? o.type : "raw";
		let label = type;
		let text = raw;
		let extra = null;
		if (type === "system") {
			label = o.subtype ? words(o.subtype) : "system";
			text = o.content || (o.status ? words(o.status) : "");
			// An approval made with edited input shows what was sent in place of the model's.
			if (o.tool_input) text += " " + JSON.stringify(o.tool_input);
			// A refused answer was billed: its retry line carries what it cost.
			if (o.usage) extra = "in " + num(o.usage.input_tokens) + " · out " + num(o.usage.output_tokens) + (o.model ? " · " + o.model : "");
		} else if (type === "assistant") {
			text = o.content || "";
			if (o.usage) extra = "in " + num(o.usage.input_tokens) + " · out " + num(o.usage.output_tokens) + (o.model ? " · " + o.model : "");
		} else if (type === "tool_use") {
			label = "tool use";
			text = o.tool_name + " " + JSON.stringify(o.input);
		} else if (type === "tool_result") {
			label = o.success ? "tool result" : "tool error";
			text = String((o.success ? o.result : o.error) || "");
		} else if (type === "error") {
			text = o.message + (o.code ? " (" + o.code + ")" : "");
		}
		return h("li", { class: "t-" + type, "data-line": n },
			h("span", { class: "n", text: n }),
			h("span", { class: "ts", text: o && o.timestamp ? clock(o.timestamp) : "" }),
			h("span", { class: "type", text: label }),
			h("span", { class: "body" }, text, extra ? h("span", { class: "ts", text: "  [" + extra + "]" }) : null,
				// Cut to fit a storage row: what is shown is not the whole line.
				o && o.truncated && typeof o.truncated === "object"
					? h("span", { class: "muted small cut", title: "The line's " + String(o.truncated.field || "text") + " was cut to fit storage", text: "  [cut to fit: the line was " + num(o.truncated.bytes) + " bytes]" })
					: null));
	}

	// ── charts ──
	const TICK_STEPS = [60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3, 7200e3, 10800e3, 21600e3, 43200e3, 86400e3, 172800e3, 604800e3];
	function timeTicks(t0, t1, max) {
		const step = TICK_STEPS.find((s) => (t1 - t0) / s <= max) || 604800e3;
		const ticks = [];
		for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) ticks.push(t);
		return { ticks, step };
	}
	function tickLabel(t, step) {
		const d = new Date(t);
		if (step < 86400e3) return d.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit" });
		return d.toLocaleDateString("en-GB", { day: "numeric", month: "short" });
	}
	function niceMax(v) {
		if (v <= 0) return 1;
		const p = Math.pow(10, Math.floor(Math.log10(v)));
		for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
		return 10 * p;
	}
	const compact = (n) => Intl.NumberFormat("en", { notation: "compact" }).format(n);

	// ── Runs ──
	const RUN_LABELS = { "on-time": "on time", late: "late", "catch-up": "catch-up", manual: "manual / webhook", skipped: "skipped", unknown: "unknown", failed: "failed" };
	function runClass(r) {
		if (r.status === "failed") return "failed";
		if (r.status === "skipped") return "skipped";
		if (r.status === "unknown") return "unknown";
		if (r.dispatch === "catch_up") return "catch-up";
		if (r.dispatch === "late") return "late";
		if (r.dispatch === "manual") return "manual";
		return "on-time";
	}
	const runTime = (r) => Date.parse(r.scheduled_instant || r.claimed_at);
	function runNote(r) {
		const parts = [];
		if (r.skip_reason) parts.push(r.skip_reason);
		if (r.skipped_count && r.skipped_count > 1) parts.push(r.skipped_count + " slots" + (r.skipped_from ? " from " + absText(Date.parse(r.skipped_from)) : ""));
		if (r.error) parts.push(r.error);
		return parts.join(" · ");
	}
	async function runsView(signal) {
		const agent = SUBJECT;
		const load = newestWins(async (fresh) => {
			const runs = await all("/v1/agents/" + enc(agent) + "/runs", "runs", 400);
			if (signal.aborted || !fresh()) return;
			$("#runs-meta").textContent = runs.length + (runs.length === 1 ? " occurrence" : " occurrences") + (runs.length >= 400 ? " (the newest; older ones not shown)" : "");
			$("#runs-empty").hidden = runs.length > 0;
			drawRuns($("#runs-chart"), runs);
			$("#runs-table tbody").replaceChildren(...runs.map((r) => h("tr", { "data-run": r.id, class: "run-row " + runClass(r) },
				h("td", null, r.scheduled_instant ? slotTime(r.scheduled_instant) : [h("span", { text: r.source }), h("span", { class: "sub" }, when(r.claimed_at))]),
				h("td", { text: r.schedule || "—" }),
				h("td", null, h("span", { class: "swatch run-" + runClass(r) }), " ", RUN_LABELS[runClass(r)]),
				h("td", null, badge(r.status)),
				h("td", null, when(r.claimed_at)),
				h("td", null, r.job_id ? jobLink(r.job_id) : h("span", { class: "muted", text: "—" })),
				h("td", { class: "error-text", text: runNote(r) }))));
		});
		await load();
		poll(load, 15000);
	}
	function drawRuns(box, runs) {
		if (!runs.length) {
			box.replaceChildren();
			return;
		}
		const lanes = [...new Set(runs.map((r) => r.schedule || "(" + r.source + ")"))].sort();
		const W = 1200, left = 150, right = 24, top = 16, laneH = 36, axisH = 34;
		const H = top + lanes.length * laneH + axisH;
		let t0 = Math.min(...runs.map((r) => (r.skipped_from ? Date.parse(r.skipped_from) : runTime(r))));
		let t1 = Math.max(...runs.map(runTime));
		const pad = Math.max((t1 - t0) * 0.04, 30e3);
		t0 -= pad;
		t1 += pad;
		const x = (t) => left + ((t - t0) / (t1 - t0)) * (W - left - right);
		const y = (lane) => top + lanes.indexOf(lane) * laneH + laneH / 2;
		const root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "Occurrences of " + SUBJECT + " on a time axis", class: "runs-timeline" });
		const { ticks, step } = timeTicks(t0, t1, 10);
		const axisY = top + lanes.length * laneH;
		for (const t of ticks) {
			root.append(svg("line", { class: "grid-line", x1: x(t), x2: x(t), y1: top - 6, y2: axisY }));
			root.append(svg("text", { x: x(t), y: axisY + 18, "text-anchor": "middle", text: tickLabel(t, step) }));
		}
		root.append(svg("g", { class: "axis" }, svg("line", { x1: left, x2: W - right, y1: axisY, y2: axisY })));
		for (const lane of lanes) {
			root.append(svg("line", { class: "lane-line", x1: left, x2: W - right, y1: y(lane), y2: y(lane) }));
			root.append(svg("text", { class: "lane", x: left - 12, y: y(lane) + 4, "text-anchor": "end", text: lane }));
		}
		// Oldest first, so the newest mark is drawn on top where marks crowd.
		for (const r of [...runs].reverse()) {
			const cls = runClass(r);
			const lane = r.schedule || "(" + r.source + ")";
			const cx = x(runTime(r));
			const tip = [
				(r.schedule ? r.schedule + " · " : "") + RUN_LABELS[cls] + " · " + r.status,
				"slot " + absText(runTime(r)),
				"claimed " + absText(Date.parse(r.claimed_at)),
				runNote(r),
				r.job_id ? "job " + r.job_id : "",
			].filter(Boolean).join("\n");
			const open = r.status === "claimed" || r.status === "running";
			const g = svg("g", { class: "occurrence", "data-class": cls, "data-run": r.id });
			if (r.skipped_from && r.skipped_count > 1) {
				const x0 = x(Date.parse(r.skipped_from));
				g.append(svg("rect", { class: "range run-" + cls, x: x0, y: y(lane) - 4, width: Math.max(cx - x0, 2), height: 8, rx: 4 }));
			}
			g.append(svg("circle", { class: "mark run-" + cls + (open ? " open" : ""), cx, cy: y(lane), r: 7 }), svg("title", { text: tip }));
			root.append(r.job_id ? svg("a", { href: "/jobs/" + enc(r.job_id) }, g) : g);
		}
		box.replaceChildren(root);
	}

	// ── Usage ──
	const DAY = 86400e3;
	const USAGE_DAYS = 7;
	const USAGE_SERIES = 8;
	async function usageView(signal) {
		const meta = $("#usage-meta");
		const today = Math.floor(Date.now() / DAY) * DAY;
		const since = today - (USAGE_DAYS - 1) * DAY;
		meta.textContent = "Loading…";
		// The index keeps each agent's ended jobs summed by day: a page of rows per request, however many jobs.
		const cells = new Map();
		let cursor = null;
		// A failed page is shown by the caller's notice; "Loading…" must not stay beside it.
		try {
			do {
				const q = new URLSearchParams({ since: new Date(since).toISOString().slice(0, 10), until: new Date(today).toISOString().slice(0, 10), limit: "1000" });
				if (cursor) q.set("cursor", cursor);
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
					});
				}
				cursor = page.next_cursor;
			} while (cursor);
		} catch (err) {
			meta.textContent = "";
			throw err;
		}
		const rows = [...cells.values()].sort((a, b) => b.day - a.day || (a.agent < b.agent ? -1 : 1));
		const totalOf = (c) => c.input + c.output + c.cacheWrite + c.cacheRead;
		const byAgent = new Map();
		for (const c of rows) byAgent.set(c.agent, (byAgent.get(c.agent) || 0) + totalOf(c));
		const agents = [...byAgent.keys()].filter((a) => byAgent.get(a) > 0).sort((a, b) => byAgent.get(b) - byAgent.get(a) || (a < b ? -1 : 1));
		// Eight colours tell agents apart; a larger fleet's other agents share one grey segment a day,
		// instead of colours repeating down a bar of hundreds of slivers.
		const busiest = agents.slice(0, USAGE_SERIES);
		const others = agents.slice(USAGE_SERIES);
		const series = (agent) => "series-" + busiest.indexOf(agent);
		const jobs = rows.reduce((n, c) => n + c.jobs, 0);
		meta.textContent = "Last " + USAGE_DAYS + " days (UTC) · " + num(jobs) + (jobs === 1 ? " ended job" : " ended jobs");

		const days = Array.from({ length: USAGE_DAYS }, (_, i) => since + i * DAY);
		const W = 1200, H = 320, left = 64, right = 16, top = 16, bottom = 32;
		const dayTotals = days.map((d) => rows.filter((c) => c.day === d).reduce((n, c) => n + totalOf(c), 0));
		const max = niceMax(Math.max(...dayTotals));
		const y = (v) => top + (H - top - bottom) * (1 - v / max);
		const band = (W - left - right) / days.length;
		const barW = Math.min(band * 0.6, 90);
		const root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "Tokens per agent per day", class: "usage-chart" });
		for (let i = 0; i <= 4; i++) {
			const v = (max / 4) * i;
			root.append(svg("line", { class: "grid-line", x1: left, x2: W - right, y1: y(v), y2: y(v) }));
			root.append(svg("text", { x: left - 8, y: y(v) + 4, "text-anchor": "end", text: compact(v) }));
		}
		days.forEach((d, i) => {
			const cx = left + band * i + band / 2;
			root.append(svg("text", { x: cx, y: H - 10, "text-anchor": "middle", text: new Date(d).toLocaleDateString("en-GB", { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" }) }));
			let acc = 0;
			const bar = (c, label, attrs) => {
				const v = totalOf(c);
				const tip = label + " · " + new Date(d).toISOString().slice(0, 10) + "\n" + num(v) + " tokens in " + num(c.jobs) + (c.jobs === 1 ? " job" : " jobs") +
					"\ninput " + num(c.input) + " · output " + num(c.output) + " · cache write " + num(c.cacheWrite) + " · cache read " + num(c.cacheRead) +
					(c.priced ? "\n$" + c.cost.toFixed(4) : "");
				root.append(svg("rect", { ...attrs, x: cx - barW / 2, y: y(acc + v), width: barW, height: Math.max(y(acc) - y(acc + v), 1) }, svg("title", { text: tip })));
				acc += v;
			};
			for (const agent of busiest) {
				const c = cells.get(d + "|" + agent);
				if (c && totalOf(c) > 0) bar(c, agent, { class: "bar " + series(agent), "data-agent": agent });
			}
			const rest = { jobs: 0, input: 0, output: 0, cacheWrite: 0, cacheRead: 0, cost: 0, priced: 0 };
			let restAgents = 0;
			for (const agent of others) {
				const c = cells.get(d + "|" + agent);
				if (!c || totalOf(c) === 0) continue;
				restAgents++;
				for (const k of Object.keys(rest)) rest[k] += c[k];
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
		tbody.replaceChildren(...rows.map((c) => h("tr", null,
			h("td", { text: new Date(c.day).toISOString().slice(0, 10) }),
			h("td", null, agentLink(c.agent)),
			h("td", { class: "num", text: num(c.jobs) }),
			h("td", { class: "num", text: num(c.input) }),
			h("td", { class: "num", text: num(c.output) }),
			h("td", { class: "num", text: num(c.cacheWrite) }),
			h("td", { class: "num", text: num(c.cacheRead) }),
			h("td", { class: "num", text: c.priced ? "$" + c.cost.toFixed(4) : "—" }))));
		if (!rows.length) tbody.append(h("tr", null, h("td", { colspan: 8, class: "muted", text: "No jobs in the last " + USAGE_DAYS + " days." })));
	}

	// ── Incidents ──
	const INCIDENT_PAGE = 200;
	async function incidentsView(signal) {
		const form = $("#incidents-filter");
		const select = form.elements.state;
		const tbody = $("#incidents-table tbody");
		const older = $("#incidents-older");
		const params = new URLSearchParams(location.search);
		if (params.get("state")) select.value = params.get("state");
		form.onsubmit = (e) => e.preventDefault();
		let cursor = null; // next_cursor after the oldest shown
		let pages = 1;
		let generation = 0;
		const page = (after) => {
			const q = new URLSearchParams({ limit: String(INCIDENT_PAGE) });
			if (select.value) q.set("state", select.value);
			if (after) q.set("cursor", after);
			return api("/v1/incidents?" + q, { signal });
		};
		const row = (i) => h("tr", { "data-incident": i.id },
			h("td", null, h("span", { class: "mono", text: i.id })),
			h("td", null, agentLink(i.agent)),
			h("td", { text: words(i.class) }),
			h("td", null, badge(i.state, "i-")),
			h("td", { class: "error-text", text: i.error }),
			h("td", { class: "num", text: num(i.count) }),
			h("td", null, when(i.last_seen_at), h("span", { class: "sub" }, "first ", when(i.first_seen_at))),
			h("td", null, i.last_job_id ? jobLink(i.last_job_id) : "—"),
			h("td", { class: "actions" }, i.state === "closed"
				? h("span", { class: "muted small", text: i.closed_by ? "closed by " + i.closed_by : "closed" })
				: h("button", { type: "button", class: "small", text: "Close", onclick: (e) => act(e.currentTarget, async () => {
					if (!confirm("Close incident " + i.id + "? The same error will not open it again.")) return false;
					await post("/v1/incidents/" + enc(i.id) + "/close");
					await load(false);
				}, "Closed " + i.id) })));
		const drawMeta = () => {
			const shown = tbody.rows.length;
			$("#incidents-empty").hidden = shown > 0;
			older.hidden = !cursor;
			$("#incidents-meta").textContent = num(shown) + (cursor ? " shown, more older" : shown === 1 ? " incident" : " incidents");
		};
		// A filter starts again from the newest page; a close rereads as many pages as are shown.
		const load = async (reset) => {
			if (reset) pages = 1;
			const mine = ++generation;
			const { rows, next } = await firstPages(page, "incidents", pages);
			if (mine !== generation) return; // a later filter or close has answered first
			tbody.replaceChildren(...rows.map(row));
			cursor = next;
			drawMeta();
		};
		older.onclick = () => act(older, async () => {
			const mine = generation;
			const p = await page(cursor);
			if (mine !== generation) return;
			tbody.append(...p.incidents.map(row));
			cursor = p.next_cursor;
			pages++;
			drawMeta();
		});
		form.onchange = () => {
			history.replaceState(null, "", "/incidents" + (select.value ? "?state=" + enc(select.value) : ""));
			load(true).catch(fail);
		};
		await load(true);
	}

	const VIEWS = { fleet: fleetView, jobs: jobsView, job: jobView, runs: runsView, usage: usageView, incidents: incidentsView };

	setInterval(refreshTimes, 15000);
	if (!token()) showSignIn();
	else {
		api("/v1/status").then(start, (err) => {
			// A wrong token was handled by request() (sign-in form); anything else still shows the view.
			if (!(err instanceof ApiError && err.status === 401)) {
				start(null);
				fail(err);
			}
		});
	}
})();
`;
