// @ts-check
// ── Runs ──
const RUN_LABELS = { "on-time": "on time", late: "late", "catch-up": "catch-up", manual: "manual / webhook", skipped: "skipped", unknown: "unknown", failed: "failed" };
/** Each class's shape, around 0,0: pages.tsx's RUN_CLASSES, whose legend shows them, has the same. @type {Record<string, string>} */
const RUN_SHAPES = { "on-time": "M-7,0A7,7 0 1,0 7,0A7,7 0 1,0 -7,0Z", "late": "M0,-8L8,6L-8,6Z", "catch-up": "M0,-8L8,0L0,8L-8,0Z", "manual": "M-6,-6H6V6H-6Z", "skipped": "M-6,0A6,6 0 1,0 6,0A6,6 0 1,0 -6,0Z", "unknown": "M-5.5,-5.5H5.5V5.5H-5.5Z", "failed": "M3.8,-7.5L7.5,-3.8L3.7,0L7.5,3.8L3.8,7.5L0,3.7L-3.8,7.5L-7.5,3.8L-3.7,0L-7.5,-3.8L-3.8,-7.5L0,-3.7Z" };
/** The Dispatch column's words for the ledger's dispatch (`drover runs` prints the value itself). */
const DISPATCH_LABELS = { on_time: "on time", late: "late", catch_up: "catch-up", manual: "manual" };
/** @param {Occurrence} r */
function runClass(r) {
	if (r.status === "failed") return "failed";
	if (r.status === "skipped") return "skipped";
	if (r.status === "unknown") return "unknown";
	if (r.dispatch === "catch_up") return "catch-up";
	if (r.dispatch === "late") return "late";
	if (r.dispatch === "manual") return "manual";
	return "on-time";
}
/** A class's mark as the legend draws it (pages.tsx). @param {string} cls */
const dispatchMark = (cls) => svg("svg", { class: "legend-mark", viewBox: "-9 -9 18 18", "aria-hidden": "true" }, svg("path", { class: "mark run-" + cls, d: RUN_SHAPES[cls] || RUN_SHAPES.unknown }));
/** @param {Occurrence} r */
const runTime = (r) => Date.parse(r.scheduled_instant || r.claimed_at);
/** @param {Occurrence} r */
function runNote(r) {
	const parts = [];
	if (r.skip_reason) parts.push(r.skip_reason);
	if (r.skipped_count && r.skipped_count > 1) parts.push(r.skipped_count + " slots" + (r.skipped_from ? " from " + absText(Date.parse(r.skipped_from)) : ""));
	if (r.error) parts.push(r.error);
	return parts.join(" · ");
}
/**
 * The agent's persistent session above its runs: what its next run continues, and when that ends;
 * hidden for an agent whose runs each start afresh and that holds no such session.
 * @param {CurrentSession | null} s null for a deleted agent: its runs stay, it has no session to continue.
 */
function drawPersistentSession(s) {
	const box = $("#persistent-session");
	box.hidden = s === null || (s.mode !== "persistent" && s.session_id === null);
	if (s === null) return;
	const text = $("#persistent-session-text");
	const reset = $("#persistent-session-reset");
	reset.hidden = s.session_id === null;
	if (s.session_id === null || s.last_job === null) {
		text.replaceChildren("Persistent session: none yet. The next run starts one.");
		return;
	}
	const expiry = s.expires_at === null ? ["It does not expire."] : [when(s.expires_at, ["It expires ", "It expired "]), "."];
	text.replaceChildren(
		"Persistent session ", h("span", { class: "mono", text: s.session_id }), ": its last run ", jobLink(s.last_job), " completed ", when(s.active_at), ". ",
		...(s.continues ? ["The next run continues it. ", ...expiry] : [h("strong", { text: "The next run starts a new session" }), ": " + printable(s.not_continued_because || "not continued") + "."]));
}
/**
 * Fills `body` with what `read` draws each time `details` is opened (its text afresh: an apply, a
 * deploy or a notepad write changes it without a run); a failure is said in its place.
 * @param {HTMLDetailsElement} details @param {HTMLElement} body @param {() => Promise<(Node | string)[]>} read
 */
function readWhenOpened(details, body, read) {
	details.open = false;
	body.replaceChildren(h("p", { class: "muted", text: "Loading…" }));
	details.ontoggle = () => {
		if (!details.open) return;
		read().then(
			(shown) => body.replaceChildren(...shown),
			(err) => body.replaceChildren(h("p", { class: "muted", text: err instanceof ApiError ? printable(err.message) : "Could not be read: " + printable(String(err.message || err)) })),
		);
	};
}
/**
 * A notepad value's version, as the API's ETag and If-Match name it (src/shared/note-version.ts),
 * quoted. Null where the page has no crypto.subtle (served over plain HTTP off localhost): its writes
 * then go without a condition, the last one winning.
 * @param {string} value @returns {Promise<string | null>}
 */
async function noteVersion(value) {
	if (!globalThis.crypto || !crypto.subtle) return null;
	return '"' + (await noteVersionWeb(value)) + '"';
}
/**
 * The condition a write is made on: the value shown for its key, or (none shown) that it is still
 * unset, so a change someone made since the notepad was drawn is refused (412) rather than lost.
 * @param {Record<string, string>} shown @param {string} key @returns {Promise<Record<string, string>>}
 */
async function noteCondition(shown, key) {
	if (!Object.hasOwn(shown, key)) return { "if-none-match": "*" };
	const version = await noteVersion(shown[key]);
	return version ? { "if-match": version } : {};
}
/**
 * An agent's notepad: each key and its value, as its next prompts carry them, and for an operator
 * its writes, as `drover notepad` makes them: a key's Edit fills the form below with it, its Delete
 * is asked first, and the form sets a key. A write's answer (the notepad after it) is drawn in place.
 * Each write is made on the notepad as shown: one someone changed meanwhile is refused, the notepad
 * then drawn as it is now (the form keeping what was typed), and saving again writes over it.
 * @param {string} agent @param {Record<string, string>} notes @param {HTMLElement} body
 */
function notepadView(agent, notes, body) {
	const base = "/v1/agents/" + enc(agent) + "/notepad";
	let shown = notes;
	/** @param {Record<string, string>} fresh */
	const draw = (fresh) => body.replaceChildren(...notepadView(agent, fresh, body));
	const keyField = /** @type {HTMLInputElement} */ (h("input", { id: "notepad-key", type: "text", autocomplete: "off", spellcheck: "false", required: true }));
	const valueField = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: "notepad-value", rows: 3, "aria-describedby": "notepad-write-hint", "aria-keyshortcuts": MAC ? "Meta+Enter" : "Control+Enter" }));
	const message = h("p", { id: "notepad-error", class: "message error", role: "alert", hidden: true });
	/**
	 * Says the refusal (text set) in the form, tied to the fields it is about; null takes it away.
	 * @param {{ key?: boolean, value?: boolean, invalid?: boolean } | null} about
	 */
	const refusal = (about) => {
		message.hidden = about === null;
		tieError(keyField, message, !!about && !!about.key, !!about && about.invalid);
		tieError(valueField, message, !!about && !!about.value, !!about && about.invalid);
	};
	clearedByEdits(keyField);
	clearedByEdits(valueField);
	const save = /** @type {HTMLButtonElement} */ (h("button", { type: "submit", class: "primary small", text: "Save" }));
	const form = /** @type {HTMLFormElement} */ (h("form", { class: "notepad-write", "data-needs": "operate", "aria-label": "Write a notepad key" },
		h("label", { for: keyField.id, text: "Key" }), keyField,
		h("label", { for: valueField.id, text: "Value" }), valueField,
		h("p", { id: "notepad-write-hint", class: "hint" }, "Carried into its next prompts: up to 16 KiB a value and 64 KiB in all; a key of 1–128 characters on one line. ", h("kbd", { text: MAC ? "⌘ Enter" : "Ctrl+Enter" }), " saves."),
		message,
		h("div", { class: "buttons" }, save)));
	valueField.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
		if (e.key !== "Enter" || !(e.ctrlKey || e.metaKey)) return;
		e.preventDefault();
		form.requestSubmit();
	});
	form.addEventListener("submit", (e) => {
		e.preventDefault();
		// As the API stores it: the answer names the key so.
		const key = keyField.value.normalize("NFC");
		const value = valueField.value;
		refusal(null);
		keyField.readOnly = valueField.readOnly = true;
		act(save, async () => {
			/** @type {Record<string, string>} */
			let fresh;
			try {
				fresh = await api(base + "/" + enc(key), { method: "PUT", json: { value }, headers: await noteCondition(shown, key) });
			} catch (err) {
				// Said in the form, which keeps what was typed: a key or value the API refuses is mended there.
				const text = failMessage(err);
				if (text === null) throw err;
				keyField.readOnly = valueField.readOnly = false;
				if (err instanceof ApiError && err.status === 412) {
					// Changed since it was drawn: drawn as it is now above the form, so a second Save is made on what is seen.
					const before = Object.hasOwn(shown, key);
					shown = await api(base);
					list.replaceWith(list = listOf(shown));
					message.textContent = printable("Not saved: someone " + (Object.hasOwn(shown, key) ? (before ? "changed " : "set ") + key + " since the notepad was shown; it is shown above as it is now. Save again to replace it with yours, or Edit it to start from theirs." : "deleted " + key + " since the notepad was shown. Save again to set it."));
					// Of the key, whose value changed meanwhile: nothing typed is wrong.
					refusal({ key: true });
				} else {
					message.textContent = printable(text);
					// The field the API names (a key's characters, a value the scan refused), the value if it is too large
					// (413: it, or the notepad with it); a refusal of neither (a server's failure) is of the write, both fields.
					const named = err instanceof ApiError ? err.issues.map((i) => i.path) : [];
					const ofKey = named.includes("key"), ofValue = named.includes("value") || (err instanceof ApiError && err.status === 413);
					refusal(ofKey || ofValue ? { key: ofKey, value: ofValue, invalid: true } : { key: true, value: true });
				}
				return false;
			}
			draw(fresh);
			// Saved from the value's Ctrl+Enter, the focus was in the form just replaced: on to the new one's key.
			if (!document.activeElement || document.activeElement === document.body) /** @type {HTMLElement | null} */ (body.querySelector("#notepad-key"))?.focus();
			// Stored redacted and with invisible characters stripped: said, or it would differ from what was typed unannounced.
			const stored = fresh[key];
			notify(printable(stored === undefined || stored === value
				? "Saved " + key + " on " + agent + "'s notepad"
				: "Saved " + key + " on " + agent + "'s notepad, " + (stored.includes("[REDACTED]") && !value.includes("[REDACTED]") ? "redacted (it looked like a secret)" : "altered (invisible characters stripped)") + ": it is shown as stored"), true);
		}, undefined, () => body.querySelector("#notepad-key"));
	});
	/** @param {string} k */
	const remove = async (k) => {
		let condition = await noteCondition(shown, k);
		return ask({
			title: "Delete " + printable(k) + " from " + printable(agent) + "'s notepad",
			text: "Its next prompts no longer carry it.",
			submit: "Delete",
			danger: true,
			run: async (_text, control) => {
				try {
					return await api(base + "/" + enc(k), { method: "DELETE", headers: condition });
				} catch (err) {
					if (!(err instanceof ApiError) || err.status !== 412) throw err;
					// Changed since it was shown: its value now is said, and deleting it is asked again, on that value.
					const now = /** @type {{ key: string, value: string }} */ (await api(base + "/" + enc(k)));
					condition = await noteCondition({ [k]: now.value }, k);
					return control.question("Someone changed " + k + " since the notepad was shown; it now reads: " + headChars(now.value, 300) + " — delete it anyway?", "Delete anyway");
				}
			},
		});
	};
	/** @param {Record<string, string>} notepad */
	const listOf = (notepad) => {
		const keys = Object.keys(notepad);
		return keys.length
			? h("dl", { class: "facts notepad" }, keys.flatMap((k) => [
				h("dt", { class: "mono", text: printable(k) }),
				h("dd", null,
					h("pre", { class: "text", text: printable(notepad[k]) }),
					h("div", { class: "note-actions", "data-needs": "operate" },
						h("button", { type: "button", class: "small", text: "Edit", "aria-label": "Edit " + printable(k), onclick: () => {
							keyField.value = k;
							valueField.value = notepad[k];
							refusal(null);
							valueField.focus();
						} }),
						h("button", { type: "button", class: "small", text: "Delete", "aria-label": "Delete " + printable(k), onclick: (/** @type {Click} */ e) => act(e.currentTarget, async () => {
							if (!(await remove(k))) return false;
							draw(await api(base));
						}, "Deleted " + printable(k) + " from " + printable(agent) + "'s notepad", () => body.querySelector(".note-actions button") || body.querySelector("#notepad-key")) }))),
			]))
			: h("p", { class: "muted", text: "Empty: nothing is carried into its prompts." });
	};
	let list = listOf(shown);
	return [list, form];
}
/** @param {AbortSignal} signal */
async function runsView(signal) {
	const agent = SUBJECT;
	const sessionPath = "/v1/agents/" + enc(agent) + "/sessions/current";
	$("#persistent-session-reset").onclick = (/** @type {Click} */ e) => act(e.currentTarget, async () => {
		const forgotten = await ask({
			title: "Forget " + printable(agent) + "'s session",
			text: "Its next run starts a new session. The session's jobs stay, and can still be continued.",
			submit: "Forget session",
			danger: true,
			run: () => api(sessionPath, { method: "DELETE" }),
		});
		if (!forgotten) return false;
		await load();
	}, "Session forgotten: the next run starts a new one");
	const definitionBody = $("#agent-definition-body");
	// Closed and opened again while it is being edited, the editor stays as it was, the text typed in it.
	readWhenOpened($("#agent-definition"), definitionBody, async () => definitionBody.querySelector("form.definition-edit") ? [...definitionBody.childNodes] : definitionView(agent, definitionBody));
	readWhenOpened($("#agent-notepad"), $("#agent-notepad-body"), async () => notepadView(agent, await api("/v1/agents/" + enc(agent) + "/notepad", { signal }), $("#agent-notepad-body")));
	const load = newestWins(async (fresh) => {
		/** @type {[Occurrence[], CurrentSession | null]} */
		const [runs, session] = await Promise.all([
			all("/v1/agents/" + enc(agent) + "/runs", "runs", 400),
			// Beside the runs, not in their way: a session that cannot be read leaves the panel out.
			api(sessionPath, { signal }).catch((err) => (err instanceof ApiError && err.status === 401 ? Promise.reject(err) : null)),
		]);
		if (signal.aborted || !fresh()) return;
		keepingFocus($("#view"), () => drawAll(runs, session));
	});
	/** The runs the chart shows, and the session the panel says, as JSON. */
	let chartOf = "";
	let sessionOf = "";
	/** @param {Occurrence[]} runs @param {CurrentSession | null} session */
	const drawAll = (runs, session) => {
		// Redrawn only when it changed: a reader copying the session's id lost the selection at every poll.
		const sessionJson = JSON.stringify(session);
		if (sessionJson !== sessionOf) drawPersistentSession(session);
		sessionOf = sessionJson;
		$("#runs-meta").textContent = runs.length + (runs.length === 1 ? " occurrence" : " occurrences") + (runs.length >= 400 ? " (the newest; older ones not shown)" : "");
		$("#runs-empty").hidden = runs.length > 0;
		// The chart is drawn from the runs alone: redrawn only when they changed (a poll's mostly have not).
		const json = JSON.stringify(runs);
		if (json !== chartOf) drawRuns($("#runs-chart"), runs);
		chartOf = json;
		syncRows($("#runs-table tbody"), runs, (r) => r.id, (r) => h("tr", { "data-run": r.id, class: "run-row " + runClass(r) },
			h("td", null, r.scheduled_instant ? slotTime(r.scheduled_instant) : [h("span", { text: r.source }), h("span", { class: "sub nowrap" }, when(r.claimed_at))]),
			h("td", { text: r.schedule || "—" }),
			// How it was dispatched, whatever became of it: its class would say "failed" for a failed manual run.
			// Marked with the legend's shape for it (circle on time, square manual), not a square for every one.
			h("td", null, dispatchMark(r.dispatch.replace("_", "-")), " ", DISPATCH_LABELS[r.dispatch] || r.dispatch),
			h("td", null, badge(r.status)),
			h("td", null, when(r.claimed_at)),
			h("td", null, r.job_id ? jobLink(r.job_id) : h("span", { class: "muted", text: "—" })),
			h("td", null, r.delivery_outcome ? badge(r.delivery_outcome, "d-") : h("span", { class: "muted", text: "—" })),
			h("td", { class: "error-text", text: printable(runNote(r)) })));
	};
	try {
		await load();
	} catch (err) {
		// No such agent (or no such name): the notice says so, and no empty chart, legend or table remains.
		if (err instanceof ApiError && (err.status === 404 || err.status === 400)) {
			for (const el of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("#view > :not(.view-head)"))) el.hidden = true;
			$("#runs-meta").textContent = "";
			document.title = "Agent not found · drover";
		}
		throw err;
	}
	poll(load, LIVE_MS);
}
/** @param {Element} box @param {Occurrence[]} runs */
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
	const newest = t1;
	const pad = Math.max((t1 - t0) * 0.04, 30e3);
	t0 -= pad;
	t1 += pad;
	/** @param {number} t */
	const x = (t) => left + ((t - t0) / (t1 - t0)) * (W - left - right);
	/** @param {string} lane */
	const y = (lane) => top + lanes.indexOf(lane) * laneH + laneH / 2;
	// A group, not an image: its marks are links to their jobs, each named by what its tooltip says.
	// (Chromium gives the drawing a tab stop of its own, before its links': taken out.)
	const root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "group", "aria-label": "Occurrences of " + printable(SUBJECT) + " on a time axis", class: "runs-timeline", tabindex: -1 });
	const { ticks, step } = timeTicks(t0, t1, 10);
	const axisY = top + lanes.length * laneH;
	for (const t of ticks) {
		root.append(svg("line", { class: "grid-line", x1: x(t), x2: x(t), y1: top - 6, y2: axisY }));
		root.append(svg("text", { x: x(t), y: axisY + 18, "text-anchor": "middle", text: tickLabel(t, step) }));
	}
	root.append(svg("g", { class: "axis" }, svg("line", { x1: left, x2: W - right, y1: axisY, y2: axisY })));
	root.append(svg("text", { class: "zone", x: left - 12, y: axisY + 18, "text-anchor": "end", text: zoneName(t1) }));
	for (const lane of lanes) {
		root.append(svg("line", { class: "lane-line", x1: left, x2: W - right, y1: y(lane), y2: y(lane) }));
		// Cut to the margin, the whole name in its tooltip and to a screen reader.
		const shown = fitLabel(lane, left - 16);
		const cut = shown !== lane;
		root.append(svg("text", { class: "lane", x: left - 12, y: y(lane) + 4, "text-anchor": "end", "aria-label": cut ? lane : null, text: shown }, cut ? svg("title", { text: lane }) : null));
	}
	// Oldest first, so the newest mark is drawn on top where marks crowd.
	for (const r of [...runs].reverse()) {
		const cls = runClass(r);
		const lane = r.schedule || "(" + r.source + ")";
		const cx = x(runTime(r));
		const job = r.job_id ? "job " + r.job_id : "";
		const lines = [
			(r.schedule ? r.schedule + " · " : "") + RUN_LABELS[cls] + " · " + r.status,
			"slot " + absText(runTime(r)),
			"claimed " + absText(Date.parse(r.claimed_at)),
			printable(runNote(r)),
			job,
			r.delivery_outcome ? "delivery " + words(r.delivery_outcome) : "",
		].filter(Boolean);
		const tip = lines.join("\n");
		const open = r.status === "claimed" || r.status === "running";
		const g = svg("g", { class: "occurrence", "data-class": cls, "data-run": r.id });
		if (r.skipped_from && r.skipped_count && r.skipped_count > 1) {
			const x0 = x(Date.parse(r.skipped_from));
			g.append(svg("rect", { class: "range run-" + cls, x: x0, y: y(lane) - 4, width: Math.max(cx - x0, 2), height: 8, rx: 4 }));
		}
		g.append(svg("path", { class: "mark run-" + cls + (open ? " open" : ""), d: RUN_SHAPES[cls], transform: "translate(" + cx + " " + y(lane) + ")" }), svg("title", { text: tip }));
		if (r.job_id) {
			// Named by its job first, and once (the tooltip's job line is left out of the name).
			const label = [job, ...lines.filter((l) => l !== job)].join(" · ");
			root.append(svg("a", { href: "/jobs/" + enc(r.job_id), "aria-label": label, tabindex: -1 }, g));
		} else {
			g.setAttribute("role", "img");
			g.setAttribute("aria-label", lines.join(" · "));
			root.append(g);
		}
	}
	rovingMarks(root);
	const first = !box.querySelector(".plot");
	// The lanes and the time zone pinned at the left: copies, the chart's own kept for screen readers.
	drawPinned(box, root, left, H, [...root.querySelectorAll("text.lane, text.zone")].map((t) => /** @type {SVGElement} */ (t.cloneNode(true))));
	// On a phone the chart scrolls in its box: opened at its newest runs, as the usage chart opens at
	// its newest days; a poll's redraw leaves it where the reader scrolled it.
	if (first) {
		box.scrollLeft = box.scrollWidth;
		// Unless the newest run is short of the end: the axis is padded 30 s each side, so a new agent's
		// one run sits at its middle (runs a minute or two apart short of the end too), and a phone was
		// shown lanes with no run on them. Such a run is brought to the middle of what shows right of
		// the pinned labels.
		const scale = root.getBoundingClientRect().width / W;
		const mark = x(newest) * scale;
		const shownFrom = box.scrollLeft + left * scale;
		if (mark - 8 * scale < shownFrom) box.scrollLeft = mark - (left * scale + box.clientWidth) / 2;
	}
}
/**
 * The chart's links are one tab stop, the newest to start with, and the arrow keys go from mark to
 * mark (Home, End: the oldest, the newest): a link each put up to 400 tab stops before the runs
 * table, which links the same jobs. @param {SVGElement} root
 */
function rovingMarks(root) {
	const marks = [...root.children].filter((c) => c instanceof SVGAElement);
	if (!marks.length) return;
	/** @param {SVGAElement} mark */
	const current = (mark) => {
		for (const m of marks) m.setAttribute("tabindex", m === mark ? "0" : "-1");
	};
	current(marks[marks.length - 1]);
	// Focused any way (a click, a poll's redraw giving the focus back): the one Tab comes back to.
	root.addEventListener("focusin", (e) => {
		if (e.target instanceof SVGAElement) current(e.target);
	});
	root.addEventListener("keydown", (e) => {
		const k = /** @type {KeyboardEvent} */ (e);
		const at = marks.indexOf(/** @type {SVGAElement} */ (k.target));
		const to = { ArrowLeft: at - 1, ArrowUp: at - 1, ArrowRight: at + 1, ArrowDown: at + 1, Home: 0, End: marks.length - 1 }[k.key];
		if (at < 0 || to === undefined) return;
		k.preventDefault();
		const next = marks[Math.max(0, Math.min(marks.length - 1, to))];
		if (next) next.focus();
	});
}
