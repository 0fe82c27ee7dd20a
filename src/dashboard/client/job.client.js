// @ts-check
// ── Job ──
/** @param {AbortSignal} signal */
async function jobView(signal) {
	const id = SUBJECT;
	const path = "/v1/jobs/" + enc(id);
	// The id as the address gave it: shown through printable wherever the page says it.
	const shownId = printable(id);
	/** @type {JobRecord | null} The record shown. */
	let job = null;
	// Records come from GETs and from action responses over separate connections, so one may land
	// after a newer one: a lower revision than the shown record's is stale.
	// A rate limit's wait ends in a model call, and the record changes again only with its answer: at
	// the wait's end its fact goes, rather than read "… ago" for the length of that call.
	let waitEnds = 0;
	/** @param {JobRecord} j */
	const render = (j) => {
		if (job && j.revision < job.revision) return;
		clearTimeout(waitEnds);
		const left = j.rate_limited_until ? Date.parse(j.rate_limited_until) - Date.now() : 0;
		const shown = j.rate_limited_until && !(left > 0) ? { ...j, rate_limited_until: null } : j;
		if (left > 0) waitEnds = setTimeout(() => job === shown && !signal.aborted && render({ ...shown, rate_limited_until: null }), left);
		const was = job && job.status;
		job = shown;
		renderJob(shown);
		// Not the status the page opened with (the heading says it): each change after it.
		if (was && was !== shown.status) $("#job-status-said").textContent = "Job " + words(shown.status) + ".";
		followUps(shown);
	};
	// A deleted agent's jobs stay readable, but there is no agent to fork or continue them under (the
	// API refuses both): asked once, when the buttons would first be offered.
	/** @type {"unasked" | "asked" | "gone"} */
	let agentState = "unasked";
	/** @param {JobRecord} j */
	const followUps = (j) => {
		const gone = agentState === "gone";
		if (gone) $("#job-fork").hidden = $("#job-continue").hidden = true;
		$("#job-agent-gone").hidden = !gone;
		if (agentState !== "unasked" || $("#job-fork").hidden) return;
		agentState = "asked";
		api("/v1/agents/" + enc(j.agent), { signal }).then(() => {}, (err) => {
			if (!(err instanceof ApiError && err.status === 404)) return;
			agentState = "gone";
			if (job) followUps(job);
		});
	};
	/** @type {Promise<void> | null} */
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
		render(await firstRecord(id, path, signal));
	} catch (err) {
		// No such job (or no such id): the notice says so, and no empty record or live buttons remain.
		if (err instanceof ApiError && (err.status === 404 || err.status === 400)) {
			for (const el of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("#view > :not(.view-head), #job-actions"))) el.hidden = true;
			// What a screen reader says first, and browser history keeps: not the id as if it were a job.
			document.title = "Job not found · drover";
		}
		throw err;
	}

	// Read once, when first opened: it never changes once the job has started.
	const manifest = /** @type {HTMLDetailsElement} */ ($("#job-manifest"));
	let manifestShown = false;
	manifest.ontoggle = () => {
		if (!manifest.open || manifestShown) return;
		manifestShown = true;
		api(path + "/manifest", { signal }).then(
			(/** @type {JobManifest} */ m) => $("#job-manifest-body").replaceChildren(...manifestView(m)),
			(err) => {
				// Not started yet: asked again at the next opening.
				manifestShown = !(err instanceof ApiError && err.status === 409);
				const known = err instanceof ApiError && (err.status === 409 || err.status === 404);
				$("#job-manifest-body").replaceChildren(h("p", { class: "muted", text: known ? printable(err.message) : "Could not be read: " + printable(String(err.message || err)) }));
			},
		);
	};

	// Read at each opening while the job runs (its calls change), and once after it has ended.
	const toolCalls = /** @type {HTMLDetailsElement} */ ($("#job-tool-calls"));
	let toolCallsFinal = false;
	toolCalls.ontoggle = () => {
		if (!toolCalls.open || toolCallsFinal) return;
		readToolCalls(path, signal).then(
			(page) => {
				toolCallsFinal = FINAL.includes(page.status);
				$("#job-tool-calls-body").replaceChildren(toolCallsView(page));
			},
			(err) => $("#job-tool-calls-body").replaceChildren(h("p", { class: "muted", text: "Could not be read: " + printable(String(err.message || err)) })),
		);
	};

	// Said once the cancel is done: set by its answer (the button is disabled while one is under way).
	let cancelOutcome = "";
	$("#job-cancel").onclick = (/** @type {Click} */ e) => act(e.currentTarget, () => ask({
		title: "Cancel job " + shownId,
		text: "It stops at once, and a model call in flight is cut off; a tool call in flight is let finish first, so that its effect is recorded, unless forced.",
		field: { label: "Reason (optional)", hint: "Recorded in its transitions.", oneLine: true, maxLength: 500 },
		check: { label: "Force: cut off a tool call in flight too", hint: "Whether the call took effect is then unknown, and recorded so. Also after a cancel that waits for the call." },
		submit: "Cancel job",
		danger: true,
		dismiss: "Keep it",
		run: async (reason, _dialog, force) => {
			/** @type {JobRecord} */
			const after = await post(path + "/cancel", { ...(reason ? { reason } : {}), ...(force ? { force: true } : {}) });
			render(after);
			cancelOutcome = cancelNote(after);
		},
	}), () => cancelOutcome);
	/**
	 * Fork or Continue: a new job from this one's conversation, in a new session or in its own, asked
	 * in the dialog with a prompt (optional for a fork). An agent changed since this job ran is asked
	 * about there, and yes sends allow_definition_change. The new job's page opens.
	 * @param {"fork" | "continue"} kind
	 */
	const followUp = (kind) => {
		const verb = kind === "fork" ? "Fork" : "Continue";
		let allowChange = false;
		const keyOf = idempotencyKeys();
		return ask({
			title: verb + " " + shownId,
			text: kind === "fork"
				? "A new job starts at once from this job's conversation, in a new session, and calls the model as any run does."
				: "A new job starts at once in this job's session, its conversation carried on with your prompt, and calls the model as any run does.",
			field: kind === "fork"
				? { label: "Prompt (optional)", hint: "Empty: the model answers the conversation's last turn again. A prompt is added to the conversation as a new message.", placeholder: "(answer the last turn again)" }
				: { label: "Prompt", hint: "Added to the conversation as a new message: a continue needs one." },
			submit: verb,
			run: async (text, dialog) => {
				if (kind === "continue" && !text) return dialog.error("A prompt is needed to continue " + shownId + ".");
				/** @type {Record<string, unknown>} */
				const body = text ? { prompt: text } : {};
				if (allowChange) body.allow_definition_change = true;
				/** @type {JobRecord} */
				let started;
				try {
					started = await post(path + "/" + kind, body, keyOf(body));
				} catch (err) {
					// The agent was changed since this job ran: refused unless asked for anyway.
					if (allowChange || !definitionChanged(err)) throw err;
					allowChange = true;
					return dialog.question("The agent's definition changed since this job ran. " + verb + " under the new definition?", verb + " under the new definition");
				}
				location.href = "/jobs/" + enc(started.id);
			},
		});
	};
	$("#job-fork").onclick = () => followUp("fork");
	$("#job-continue").onclick = () => followUp("continue");
	/**
	 * Saves one of the job's files: fetched with the token (a plain link would go without it).
	 * @param {string} from @param {string} type @param {string} name
	 */
	const download = (from, type, name) => async () => {
		const res = await request(path + from);
		saveFile(new Blob([await res.blob()], { type }), name);
	};
	$("#job-download").onclick = $("#log-earlier-download").onclick = (/** @type {Click} */ e) => act(e.currentTarget, download("/output", "application/x-ndjson", shownId + ".jsonl"));
	$("#job-download-log").onclick = (/** @type {Click} */ e) => act(e.currentTarget, download("/output.log", "text/plain", shownId + ".log"));
	const approvalError = $("#approval-error");
	const approvalInput = $("#approval-input");
	/** Says what is wrong with the input, tied to it; null takes that away. @param {string | null} text */
	const inputError = (text) => {
		approvalError.textContent = text || "";
		approvalError.hidden = text === null;
		tieError(approvalInput, approvalError, text !== null, true);
	};
	// An edit may have fixed it: the error is not said of the new text.
	approvalInput.addEventListener("input", () => inputError(null), { signal });
	/** The tool the job waits to call. */
	const tool = () => (job && job.pending_approval ? job.pending_approval.tool_name : "the tool");
	/** The tool_use_id of the call the approval panel shows (set by render). */
	const shownCall = () => $("#job-approval").dataset.toolUseId;
	$("#approval-approve").onclick = (/** @type {Click} */ e) => act(e.currentTarget, async () => {
		inputError(null);
		let input;
		try {
			input = JSON.parse(approvalInput.value);
		} catch (err) {
			inputError("The input is not valid JSON: " + /** @type {SyntaxError} */ (err).message);
			return false;
		}
		if (!input || typeof input !== "object" || Array.isArray(input)) {
			inputError("The input must be a JSON object.");
			return false;
		}
		const asked = job && job.pending_approval ? job.pending_approval.input : null;
		const edited = JSON.stringify(input) !== JSON.stringify(asked);
		// The call the panel shows, named: if the model has asked for another since, the API refuses
		// the decision (409) rather than let it, and an edit, fall on a call nobody looked at.
		/** @type {Record<string, unknown>} */
		const body = { decision: "approve", tool_use_id: shownCall(), ...(edited ? { tool_input: input } : {}) };
		try {
			render(await post(path + "/approval", body));
		} catch (err) {
			// Input the tool's schema refuses is the panel's to say, beside the input, not the banner's.
			if (err instanceof ApiError && err.status === 400) {
				inputError(printable(err.message));
				return false;
			}
			// The agent was changed since this job started: as for a fork, approving is refused unless
			// asked for anyway. (Checked before the input is: a refused input is said in the dialog.)
			if (!definitionChanged(err)) throw err;
			return ask({
				title: "Approve under the new definition",
				text: "The agent's definition changed since this job started: the tool may no longer be what it was. Approve the call to " + tool() + " under the new definition?",
				submit: "Approve under the new definition",
				run: async () => {
					render(await post(path + "/approval", { ...body, allow_definition_change: true }));
				},
			});
		}
	}, "Approved");
	$("#approval-deny").onclick = (/** @type {Click} */ e) => act(e.currentTarget, () => ask({
		title: "Deny the call to " + tool(),
		text: "The call is not made, and the model is told it was refused.",
		field: { label: "Reason (optional)", hint: "Told the model with the refusal, so it can do otherwise." },
		submit: "Deny",
		danger: true,
		run: async (text) => {
			render(await post(path + "/approval", { decision: "deny", tool_use_id: shownCall(), ...(text ? { reason: text } : {}) }));
		},
	}), "Denied");

	// The stream ends with the job, but its delivery and hook calls are sent after it, and retried for
	// up to an hour: while one is pending, the record is read again at the other views' pace (a failed
	// read said as a poll's, and taken back by the next that succeeds).
	poll(() => (job && sendsPending(job) ? api(path, { signal }).then(render) : Promise.resolve()), LIVE_MS);
	followOutput(id, signal, { status: refresh, end: refresh });
}

/** An ended job whose delivery or a hook call is still queued, held or retried. @param {JobRecord} j */
function sendsPending(j) {
	if (!FINAL.includes(j.status)) return false;
	const hooks = /** @type {Partial<JobView>} */ (j).hooks || [];
	return (j.delivery ? j.delivery.outcome === "pending" : false) || hooks.some((k) => k.outcome === "pending");
}

/** Every page of a job's tool calls, as one. @param {string} path @param {AbortSignal} signal @returns {Promise<ToolCallPage>} */
async function readToolCalls(path, signal) {
	/** @type {ToolCallPage} */
	let page = await api(path + "/tool-calls?limit=200", { signal });
	const calls = [...page.tool_calls];
	while (page.next_cursor) {
		page = await api(path + "/tool-calls?limit=200&cursor=" + enc(page.next_cursor), { signal });
		calls.push(...page.tool_calls);
	}
	return { ...page, tool_calls: calls };
}

/** A job's tool calls, in the order made: what each was given, what became of it, what the model was told. @param {ToolCallPage} page */
function toolCallsView(page) {
	if (!page.tool_calls.length) return h("p", { class: "muted", text: page.status === "pending" ? "Not started yet." : "No tool calls." });
	const ended = FINAL.includes(page.status);
	/** @param {ToolCallView} t @returns {[string, string]} its words and badge colour */
	const state = (t) =>
		t.status === "executing" ? (ended ? ["effect unknown", "indeterminate"] : ["executing", "running"])
		: t.status === "interrupted" ? ["interrupted, effect unknown", "indeterminate"]
		: t.status === "denied" ? ["denied", "cancelled"]
		// Never run, and never will be: the job ended (cancelled, say, while it waited for approval).
		: t.status === "pending" && ended ? ["not run, the job " + words(page.status), "cancelled"]
		: t.status === "completed" && t.is_error ? ["failed", "failed"]
		: [t.status, t.status];
	/** @param {ToolCallView} t */
	const took = (t) => (t.started_at && t.finished_at ? dur((Date.parse(t.finished_at) - Date.parse(t.started_at)) / 1000) : "—");
	return h("div", { class: "table-wrap" }, h("table", { class: "grid compact tool-calls" },
		h("thead", null, h("tr", null, ["#", "Tool", "Status", "Approval", "Took", "Input", "Result"].map((t) => h("th", { text: t })))),
		h("tbody", null, page.tool_calls.map((t, i) => {
			const [text, colour] = state(t);
			const cut = t.result !== null && t.result_chars !== null && t.result_chars > t.result.length;
			return h("tr", null,
				h("td", { class: "num", text: String(i + 1) }),
				h("td", { class: "mono", text: printable(t.name) }),
				h("td", null, h("span", { class: "badge s-" + colour, text })),
				h("td", { text: t.decision ? printable((t.decision === "approve" ? "approved by " : "denied by ") + (t.decided_by || "?")) : "—" }),
				h("td", { class: "num", text: took(t) }),
				h("td", null, h("code", { class: "wrap", text: printable(JSON.stringify(t.input)) })),
				h("td", null, t.result === null ? h("span", { class: "muted", text: "—" }) : h("span", { class: "wrap", text: printable(t.result) + (cut ? " (" + num(t.result_chars) + " characters in all; the JSONL has it whole)" : "") })),
			);
		})),
	));
}

/** What a job runs with: its models, limits, tools and system prompt, as saved when it started. @param {JobManifest} m */
function manifestView(m) {
	const tools = m.tools.map((t) => String(t.name || t.type || "?"));
	const facts = /** @type {[string, Child][]} */ ([
		["Models", m.models.join(" → ")],
		["Max turns", String(m.definition.max_turns)],
		// The deadline is said only while the job runs (styles.ts hides it once the job has ended).
		["Timeout", [m.definition.timeout, h("span", { class: "deadline" }, ", deadline ", when(m.deadline))]],
		["Tools", tools.length ? tools.join(", ") : "none"],
		["Definition", h("span", { class: "mono", text: m.definition_revision })],
		m.persistent_from === null ? null
			: m.persistent_from !== "" && m.continued_from === m.persistent_from ? ["Session mode", ["persistent, carrying the session on from ", jobLink(m.persistent_from)]]
			: ["Session mode", m.persistent_from === "" ? "persistent, starting the session (there was none)" : ["persistent, starting a new session (it found the last one at ", jobLink(m.persistent_from), ", not continued)"]],
	].filter(Boolean));
	return [
		h("dl", { class: "facts" }, facts.flatMap(([k, v]) => [h("dt", { text: k }), h("dd", null, v)])),
		h("h3", { text: "System prompt" }),
		h("pre", { class: "text", text: printable(m.system.map((b) => b.text).join("\n\n")) }),
	];
}
/** @param {JobRecord} j */
function renderJob(j) {
	const final = FINAL.includes(j.status);
	$("#job-manifest").toggleAttribute("data-ended", final);
	$("#job-status").replaceChildren(badge(j.status));
	document.title = j.id + " · " + words(j.status) + " · drover";
	const facts = /** @type {[string, Child][]} */ ([
		["Agent", agentLink(j.agent)],
		["Status", badge(j.status)],
		["Exit reason", j.exit_reason ? words(j.exit_reason) : "—"],
		["Trigger", words(j.trigger_type) + (j.schedule ? " · " + j.schedule : "")],
		j.scheduled_instant ? ["Slot", [exactTime(j.scheduled_instant), j.dispatch ? " · " + words(j.dispatch) : ""]] : null,
		["Created", exactTime(j.created_at)],
		["Started", exactTime(j.started_at)],
		["Finished", exactTime(j.finished_at)],
		["Duration", dur(j.duration_seconds)],
		j.owner ? ["Owner", j.owner] : null,
		j.forked_from ? ["Forked from", jobLink(j.forked_from)] : null,
		j.continued_from ? ["Continued from", jobLink(j.continued_from)] : null,
		j.session_id ? ["Session", h("code", { text: j.session_id })] : null,
		j.rate_limited_until ? ["Rate limited", ["waiting: the next model call ", when(j.rate_limited_until)]] : null,
		j.cancel_requested ? ["Cancel requested", printable(j.cancel_requested) + " (once its tool call in flight returns; Cancel with Force cuts it off)"] : null,
		j.tool_calls && j.tool_calls.made ? ["Tool calls", [j.tool_calls.made + " ran", j.tool_calls.failed ? h("span", { class: "warn-text", text: ", " + j.tool_calls.failed + " " + failedCallsWord(j.status, j.tool_calls.failed) }) : ", none failed", " (listed below)"]] : null,
		// The record counts them as the job ends; until then the list below is read as it stands.
		!final && j.started_at ? ["Tool calls", h("span", { class: "muted", text: "counted when the job ends; any made so far are listed below" })] : null,
		j.error ? ["Error", h("span", { class: "error", text: printable(j.error.type + ": " + j.error.message + (j.error.request_id ? " (request " + j.error.request_id + ")" : "")) })] : null,
	].filter(Boolean));
	$("#job-facts").replaceChildren(...facts.flatMap(([k, v]) => [h("dt", { text: k }), h("dd", null, v)]));
	$("#job-prompt").textContent = j.prompt ? printable(j.prompt) : "(the agent's default prompt)";
	$("#job-summary").textContent = j.summary ? printable(j.summary) : final ? "(none)" : "(not yet)";

	const models = Object.entries(j.usage.per_model);
	const usage = $("#job-usage tbody");
	if (!models.length) usage.replaceChildren(h("tr", null, h("td", { colspan: 5, class: "muted", text: final ? "No model calls." : "No model calls yet." })));
	else {
		const total = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
		const keys = /** @type {(keyof ModelUsage)[]} */ (Object.keys(total));
		/** @param {string} label @param {ModelUsage} u @param {string} [cls] */
		const row = (label, u, cls) => h("tr", { class: cls || null }, h("td", { class: "mono", text: label }),
			keys.map((k) => h("td", { class: "num", text: num(u[k]) })));
		const rows = models.map(([model, u]) => {
			for (const k of keys) total[k] += u[k];
			return row(model, u);
		});
		if (models.length > 1) rows.push(row("total", total, "total"));
		usage.replaceChildren(...rows);
	}
	const cost = j.usage.total_cost_usd;
	// No model call, no spend: "not priced" would say its model has no price.
	const costText = !models.length ? "no cost" : cost === null ? "cost not priced" : usd(cost);
	$("#job-usage-meta").textContent = j.usage.num_turns + (j.usage.num_turns === 1 ? " turn" : " turns") + " · " + costText;

	const delivery = $("#job-delivery");
	if (j.delivery) {
		// Why it did not get through, as its last attempt met it (absent from older records). Spread, not
		// a null child: the DOM's replaceChildren, unlike h(), writes a null as the text "null".
		delivery.replaceChildren(badge(j.delivery.outcome, "d-"), " to ", h("code", { text: j.delivery.target }),
			...(j.delivery.error ? [h("span", { class: "error", text: ": " + printable(j.delivery.error) })] : []));
	}
	else delivery.replaceChildren(h("span", { class: "muted", text: final ? "Nothing delivered (no delivery target, or the job did not complete)." : "Delivery happens when the job completes." }));

	/**
	 * Where a hook call not delivered stands: what it waits for, or how many attempts it took. A call
	 * never sent said "0 attempts", which read as one stuck (a held one waits out the delivery's retries).
	 * @param {JobView["hooks"][number]} k
	 */
	const hookProgress = (k) => k.outcome === "delivered" ? null
		: k.waiting_for === "delivery" ? " · waiting for the job's delivery"
		: k.attempts === 0 ? (k.outcome === "pending" ? " · not sent yet" : " · nothing sent")
		: " · " + k.attempts + (k.attempts === 1 ? " attempt" : " attempts");
	// Absent from an older server's answers; none while the job runs.
	const hooks = /** @type {Partial<JobView>} */ (j).hooks || [];
	const hooksBox = $("#job-hooks");
	hooksBox.hidden = hooks.length === 0;
	hooksBox.replaceChildren(...(hooks.length ? [h("h3", { text: "Hooks" }), h("ul", { class: "hooks" }, hooks.map((k) => h("li", null,
		badge(k.outcome, "d-"), " ", h("code", { text: k.hook }), " to ", h("code", { text: printable(k.url_secret) }),
		hookProgress(k),
		k.error ? h("span", { class: "error", text: ": " + printable(k.error) }) : null,
		k.next_attempt_at ? [" · next ", when(k.next_attempt_at)] : null)))] : []));

	const transitions = $("#job-transitions");
	transitions.replaceChildren(...(j.transitions.length
		? j.transitions.map((t) => h("li", { class: "to-" + t.to },
			h("strong", { text: words(t.from) + " → " + words(t.to) }), " ",
			h("span", { class: "muted small" }, when(t.at)),
			h("span", { class: "reason-text", text: printable(t.reason) })))
		: [h("li", { class: "muted" }, "Created ", when(j.created_at), "; not started yet.")]));

	$("#job-cancel").hidden = final;
	// Kept when its schedule or agent sets output_to_file, and written once the job ends.
	$("#job-download-log").hidden = !final || !j.output_log;
	// A job that never started (cancelled while queued) has no conversation to go on from.
	$("#job-fork").hidden = !final || j.started_at === null;
	$("#job-continue").hidden = !final || j.started_at === null;
	const panel = $("#job-approval");
	const pa = j.status === "approval_pending" ? j.pending_approval : null;
	panel.hidden = !pa;
	// Re-rendering must not throw away an edit in progress: only a new request resets the input.
	if (pa && panel.dataset.toolUseId !== pa.tool_use_id) {
		panel.dataset.toolUseId = pa.tool_use_id;
		$("#approval-tool").textContent = pa.tool_name;
		// When no one decides, the call counts as denied (or the job times out) at expires_at.
		$("#approval-requested").replaceChildren(" (asked ", when(pa.requested_at), ...(pa.expires_at ? ["; ", when(pa.expires_at, ["expires ", "expired "])] : []), ")");
		// Editable for a token that may decide; text for one that may not (pages.tsx shows one of them).
		$("#approval-input").value = $("#approval-input-text").textContent = printableJson(pa.input);
		$("#approval-error").hidden = true;
		tieError($("#approval-input"), $("#approval-error"), false);
	}
}

/**
 * What a cancel came to, from its answer: most end the job at once, but one waiting on a tool call in
 * flight is only requested until the call returns, and "Cancel requested" said of a job already
 * cancelled read as if it still ran. A job that ended otherwise meanwhile (its forced cancel found
 * the call's effect unknown) is said as it ended.
 * @param {JobRecord} j
 */
function cancelNote(j) {
	if (j.status === "cancelled") return "Cancelled";
	return FINAL.includes(j.status) ? "Ended " + words(j.status) : "Cancel requested";
}

/** A 409 refusing a continue, fork or approval because the agent's definition changed: the API names the body field that overrides it. @param {unknown} err */
function definitionChanged(err) {
	return err instanceof ApiError && err.status === 409 && String(err.message).includes("allow_definition_change");
}

/** How long a job this tab just started is waited for while the API cannot find it yet. */
const STARTED_WAIT_MS = 120000;
const STARTED_KEY = "drover-started:";

/**
 * Notes that this tab has just started a job (Run now), for its page to wait for it. The API finds a
 * job by its D1 index row, which its agent writes before answering, but keeps and retries every 10 s
 * when D1 refuses it: until then the new job's page would say it does not exist.
 * @param {string} id
 */
function markStarted(id) {
	try {
		sessionStorage.setItem(STARTED_KEY + id, String(Date.now()));
	} catch (e) {}
}

/**
 * The job's record; a job this tab has just started is waited for while its GET is a 404 (a notice
 * says why), for up to STARTED_WAIT_MS from its start. Any other job's 404 is thrown at once.
 * @param {string} id @param {string} path @param {AbortSignal} signal @returns {Promise<JobRecord>}
 */
async function firstRecord(id, path, signal) {
	let started = 0;
	try {
		started = Number(sessionStorage.getItem(STARTED_KEY + id)) || 0;
		sessionStorage.removeItem(STARTED_KEY + id);
	} catch (e) {}
	for (let attempt = 0; ; attempt++) {
		try {
			const record = await api(path, { signal });
			if (attempt > 0) clearOkNotice();
			return record;
		} catch (err) {
			if (!(err instanceof ApiError && err.status === 404 && started && Date.now() - started < STARTED_WAIT_MS)) throw err;
			notify("Job " + printable(id) + " was started, and is not listed yet: its agent adds it to the index as soon as the database takes it. Waiting…", true);
			await sleep(Math.min(5000, 500 * 2 ** attempt), signal);
		}
	}
}
