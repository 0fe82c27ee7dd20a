// @ts-check
// ── Job output: the job's log, live over Server-Sent Events ──
/** Characters of a stream parsed in one task: some tens of log lines. */
const SSE_SLICE = 16384;
/**
 * Lines the job page keeps, its newest: a job may write 100 MB of output, more lines than a page
 * can hold (20,000 lines were 107,000 nodes) or should download to draw. The whole output is the
 * JSONL download.
 */
const JOB_LOG_LINES = 10_000;
/** Resolves in a task of its own, after what the page has waiting (a paint, a click); unlike a 0 ms timeout, a page's faked clock does not hold it. */
const nextTask = () => new Promise((resolve) => {
	const channel = new MessageChannel();
	channel.port1.onmessage = () => resolve(undefined);
	channel.port2.postMessage(null);
});
/**
 * Reads a Server-Sent Events body with the project's one parser (SseParser, src/shared/sse.ts, put
 * before these files by index.ts). EventSource cannot send an Authorization header, so the stream
 * is read with fetch(). Resolves true when the server sent "end", false when the connection closed
 * without it.
 * @param {ReadableStream} body @param {AbortSignal} signal @param {SseHandlers} on
 */
async function readSse(body, signal, on) {
	const reader = body.pipeThrough(new TextDecoderStream()).getReader();
	const stop = () => reader.cancel().catch(() => {});
	signal.addEventListener("abort", stop, { once: true });
	let ended = false;
	const parser = new SseParser((ev) => {
		if (!ended && on.event(ev) === "end") ended = true;
	}, on.retry);
	try {
		while (!ended) {
			const { value, done } = await reader.read();
			if (done) return false;
			// A stored log is replayed faster than it is drawn, and reads resolve without giving the page
			// a turn: fed a slice at a time, a task apart, so the page paints the lines as they come and
			// answers the reader meanwhile (a 20,000-line log held it frozen until the last was drawn).
			for (let at = 0; at < value.length && !ended; at += SSE_SLICE) {
				parser.feed(value.slice(at, at + SSE_SLICE));
				await nextTask();
			}
		}
		stop();
		return true;
	} finally {
		signal.removeEventListener("abort", stop);
	}
}

/**
 * The line after which a log showing a job's newest `keep` lines opens its stream: all but the last
 * `keep`, found by a one-line tail (its header names that line's number), so a large output is not
 * replayed to be thrown away. 0, from the first line, when the job has no more than `keep` lines or
 * the answer does not say; a failed ask is left to the stream, which says what is wrong.
 * @param {string} id @param {number} keep @param {AbortSignal} signal @returns {Promise<number>}
 */
async function linesBefore(id, keep, signal) {
	try {
		const res = await request("/v1/jobs/" + enc(id) + "/output?lines=1", { signal });
		const tail = await res.text();
		const first = Number(res.headers.get("x-drover-first-line"));
		if (!Number.isSafeInteger(first) || first < 1) return 0;
		// An empty tail names the number the job's next line will take.
		const last = tail.trim() ? first : first - 1;
		return Math.max(0, last - keep);
	} catch (err) {
		return 0;
	}
}

/** Lines the earlier-lines reader shows at a time. */
const HISTORY_PAGE = 1_000;
/**
 * The lines the live log does not keep (1 to `notShown()`, a number that grows as newer lines push
 * older ones out), a page at a time, read by their numbers (?after=&lines=), so a large output is
 * read in the page without being downloaded: Earlier, Later, or from a line typed.
 * @param {string} id @param {AbortSignal} signal @param {() => number} notShown
 */
function earlierLines(id, signal, notShown) {
	const section = $("#log-history");
	const list = $("#log-history-lines");
	const from = /** @type {HTMLInputElement} */ ($("#log-history-from"));
	const earlier = /** @type {HTMLButtonElement} */ ($("#log-history-earlier"));
	const later = /** @type {HTMLButtonElement} */ ($("#log-history-later"));
	let first = 1;
	let last = 0;
	/** @param {number} start */
	const show = async (start) => {
		const end = notShown();
		const at = Math.min(Math.max(1, Math.floor(start) || 1), Math.max(1, end - HISTORY_PAGE + 1));
		const count = Math.max(1, Math.min(HISTORY_PAGE, end - at + 1));
		const res = await request("/v1/jobs/" + enc(id) + "/output?after=" + (at - 1) + "&lines=" + count, { signal });
		// JSONL: one object a line, none empty.
		const lines = (await res.text()).split("\n").filter((l) => l !== "");
		first = at;
		last = at + lines.length - 1;
		list.replaceChildren(...lines.map((raw, i) => logLine(at + i, raw)));
		fitLineNumbers(list, last);
		list.scrollTop = 0;
		from.value = String(at);
		from.max = String(end);
		$("#log-history-range").textContent = lines.length
			? "Lines " + num(at) + "–" + num(last) + " of the " + num(end) + " not shown below"
			: "No lines";
	};
	/** Earlier and Later as far as there are lines; the focus kept on the form when its button goes. */
	const bound = () => {
		earlier.disabled = first <= 1;
		later.disabled = last >= notShown();
		const focused = document.activeElement;
		if (focused instanceof HTMLButtonElement && focused.disabled) (earlier.disabled ? later.disabled ? from : later : earlier).focus();
	};
	/** @param {HTMLButtonElement} button @param {() => number} start */
	const go = (button, start) => act(button, () => show(start())).then(bound);
	$("#log-earlier-read").onclick = (/** @type {Click} */ e) => act(e.currentTarget, async () => {
		section.hidden = false;
		// The page just before the lines the live log shows.
		await show(notShown() - HISTORY_PAGE + 1);
		bound();
		/** @type {HTMLElement} */ ($("#log-history-title")).scrollIntoView({ block: "nearest" });
		earlier.disabled ? from.focus() : earlier.focus();
	});
	earlier.onclick = () => go(earlier, () => first - HISTORY_PAGE);
	later.onclick = () => go(later, () => first + HISTORY_PAGE);
	$("#log-history-nav").onsubmit = (/** @type {SubmitEvent} */ e) => {
		e.preventDefault();
		const submit = /** @type {HTMLButtonElement} */ (e.submitter || $("#log-history-nav button[type=submit]"));
		go(submit, () => Number(from.value));
	};
	$("#log-history-close").onclick = () => {
		section.hidden = true;
		list.replaceChildren();
		/** @type {HTMLElement} */ ($("#log-earlier-read")).focus();
	};
	signal.addEventListener("abort", () => {
		section.hidden = true;
		list.replaceChildren();
	}, { once: true });
}

/**
 * The job's output, live, its newest JOB_LOG_LINES lines: reconnects after a drop with
 * Last-Event-ID, so no line is lost or shown twice.
 * @param {string} id @param {AbortSignal} signal @param {{ status: () => void, end: () => void }} on
 */
async function followOutput(id, signal, on) {
	const log = $("#job-log");
	const state = $("#log-state");
	/** @param {string} cls @param {string} text */
	const setState = (cls, text) => {
		state.className = "pill " + cls;
		state.textContent = text;
	};
	// New lines are announced (#log-announce), a batch at a time; the stored ones the stream replays
	// first are not. The server sends the job's status once it has sent every stored line: lines after
	// the first status event are new.
	const announce = $("#log-announce");
	let caughtUp = false;
	/** @type {string[]} */
	let fresh = [];
	// Lines arrive in bursts (a replay from line 1 is the whole log at once): they are added a
	// batch at a time, reading the layout (is the reader at the bottom?) once a batch, not once a
	// line, which made a 6,000-line log take 20 s with the page frozen.
	/** @type {DocumentFragment | null} */
	let batch = null;
	// Each batch costs a layout of the log, which grows with it: batches come at most a few times as
	// often as one takes, so a long replay spends most of its time drawing lines, not laying them out.
	let flushMs = 0;
	// Lines not shown: those before the stream's first, and those dropped since as newer ones came.
	let hidden = 0;
	const earlier = $("#log-earlier");
	const drawHidden = () => {
		earlier.hidden = hidden === 0;
		$("#log-earlier-text").textContent = (hidden === 1 ? "Line 1 is" : "Lines 1–" + num(hidden) + " are") + " not shown: the page keeps the newest " + num(JOB_LOG_LINES) + ". The JSONL download has them all.";
	};
	const flush = () => {
		if (!batch) return;
		const began = performance.now();
		const stick = log.scrollTop + log.clientHeight >= log.scrollHeight - 8;
		log.append(batch);
		batch = null;
		const over = log.childElementCount - JOB_LOG_LINES;
		if (over > 0) {
			const oldest = document.createRange();
			oldest.setStartBefore(/** @type {Node} */ (log.firstChild));
			oldest.setEndBefore(log.children[over]);
			oldest.deleteContents();
			hidden += over;
			drawHidden();
		}
		if (fresh.length) {
			const more = fresh.length - 3;
			announce.textContent = "New output: " + fresh.slice(0, 3).map((t) => headChars(t, 160)).join(" · ") + (more > 0 ? " · and " + more + " more lines" : "");
		}
		fresh = [];
		if (stick) log.scrollTop = log.scrollHeight;
		flushMs = performance.now() - began;
	};
	log.replaceChildren(h("li", { class: "placeholder", text: "Waiting for output…" }));
	delete log.dataset.digits;
	drawHidden();
	earlierLines(id, signal, () => hidden);
	$("#log-zone").textContent = "times " + zoneName();
	let empty = true;
	setState("", "connecting…");
	try {
		hidden = await linesBefore(id, JOB_LOG_LINES, signal);
		drawHidden();
		const status = await streamJob(id, signal, {
			open: () => setState("live", "live"),
			line: (n, data) => {
				if (empty) {
					log.replaceChildren();
					empty = false;
				}
				if (!batch) {
					batch = document.createDocumentFragment();
					setTimeout(flush, Math.max(16, flushMs * 4));
				}
				const line = logLine(n, data);
				batch.append(line);
				fitLineNumbers(log, n);
				// The line's text, without its usage ("[in 27 · out 6 · model]"), which read as noise.
				if (caughtUp) fresh.push((line.querySelector(".type")?.textContent || "") + ": " + (line.querySelector(".body")?.firstChild?.textContent || ""));
			},
			status: () => {
				caughtUp = true;
				on.status();
			},
			settle: flush,
			dropped: () => setState("reconnecting", "reconnecting…"),
		}, hidden);
		if (status === null) return;
		setState("", "ended");
		if (empty) log.replaceChildren(h("li", { class: "placeholder", text: "No output." }));
		on.end();
	} catch (err) {
		setState("", "unavailable");
		fail(err);
	}
}

/** The longest a refusal's Retry-After is waited (as the CLI's): a proxy's odd value must not stall the page for hours. */
const MAX_RETRY_AFTER_MS = 5 * 60_000;

/**
 * Follows a job's stream to its end, from the line after `after`: reconnects after a drop with
 * Last-Event-ID (waiting what the server's `retry` asks), so no line is lost or shown twice.
 * Resolves with the job's final status, or null once `signal` aborts; a 4xx other than 429 (bad id,
 * no such job, signed out) will not fix itself by retrying and is thrown.
 * @param {string} id @param {AbortSignal} signal
 * @param {{ line: (n: number, data: string) => void, open?: () => void, status?: () => void, settle?: () => void, dropped?: () => void }} on
 *   settle: after each connection's events, whether it ended or broke; dropped: before waiting to reconnect.
 * @param {number} [after]
 * @returns {Promise<string | null>}
 */
async function streamJob(id, signal, on, after = 0) {
	let lastLine = after;
	let retry = 2000;
	while (!signal.aborted) {
		/** @type {string | null} */
		let final = null;
		// A refusal's Retry-After (a job's streams at their cap ask 30 s): sooner is refused again.
		let retryAfter = 0;
		try {
			/** @type {Record<string, string>} */
			const headers = { accept: "text/event-stream" };
			if (lastLine > 0) headers["last-event-id"] = String(lastLine);
			const res = await request("/v1/jobs/" + enc(id) + "/stream", { headers, signal });
			if (on.open) on.open();
			const ended = await readSse(/** @type {ReadableStream} */ (res.body), signal, {
				retry: (ms) => { retry = Math.min(Math.max(ms, 500), 30000); },
				event: (ev) => {
					if (ev.event === "line") {
						const n = Number(ev.id);
						if (!(n > lastLine)) return;
						lastLine = n;
						on.line(n, ev.data);
					} else if (ev.event === "status") {
						if (on.status) on.status();
					} else if (ev.event === "end") {
						try {
							final = String(JSON.parse(ev.data).status || "");
						} catch (e) {}
						return "end";
					}
				},
			});
			if (on.settle) on.settle();
			if (ended) return final || "ended";
		} catch (err) {
			if (on.settle) on.settle();
			if (signal.aborted) return null;
			if (err instanceof ApiError && err.status < 500 && err.status !== 429) throw err;
			if (err instanceof ApiError && err.retryAfterMs !== null) retryAfter = Math.min(err.retryAfterMs, MAX_RETRY_AFTER_MS);
		}
		if (on.dropped) on.dropped();
		await sleep(Math.max(retry, retryAfter), signal);
	}
	return null;
}

/**
 * Widens a log's number column for a line numbered `n` past five digits (styles.ts: data-digits):
 * set once a width, so the log's layout is not redone a line at a time.
 * @param {HTMLElement} log @param {number} n
 */
function fitLineNumbers(log, n) {
	if (n < 100_000) return;
	const digits = String(Math.min(String(n).length, 9));
	if (log.dataset.digits !== digits) log.dataset.digits = digits;
}

/** @param {number} n @param {string} raw */
function logLine(n, raw) {
	/** @type {OutputLine | null} */
	let o = null;
	try {
		o = JSON.parse(raw);
	} catch (e) {}
	const type = o && typeof o.type === "string" ? o.type : "raw";
	let label = type;
	let text = raw;
	/** @type {string | null} */
	let extra = null;
	if (o && type === "system") {
		label = o.subtype ? words(o.subtype) : "system";
		text = o.content || (o.status ? words(o.status) : "");
		// An approval made with edited input shows what was sent in place of the model's.
		if (o.tool_input) text += " " + JSON.stringify(o.tool_input);
		// A refused answer was billed: its retry line carries what it cost.
		if (o.usage) extra = "in " + num(o.usage.input_tokens) + " · out " + num(o.usage.output_tokens) + (o.model ? " · " + o.model : "");
	} else if (o && type === "assistant") {
		text = o.content || "";
		if (o.usage) extra = "in " + num(o.usage.input_tokens) + " · out " + num(o.usage.output_tokens) + (o.model ? " · " + o.model : "");
	} else if (o && type === "tool_use") {
		label = "tool use";
		text = o.tool_name + " " + JSON.stringify(o.input);
	} else if (o && type === "tool_result") {
		label = o.success ? "tool result" : "tool error";
		text = String((o.success ? o.result : o.error) || "");
	} else if (o && type === "error") {
		text = o.message + (o.code ? " (" + o.code + ")" : "");
	}
	return h("li", { class: "t-" + type, "data-line": n },
		h("span", { class: "n", text: n }),
		h("span", { class: "ts", text: o && o.timestamp ? clock(o.timestamp) : "", title: o && o.timestamp ? absText(Date.parse(o.timestamp)) : null }),
		h("span", { class: "type", text: printable(label) }),
		h("span", { class: "body" }, printable(text), extra ? h("span", { class: "ts", text: "  [" + printable(extra) + "]" }) : null,
			// Cut to fit a storage row: what is shown is not the whole line.
			o && o.truncated && typeof o.truncated === "object"
				? h("span", { class: "muted small cut", title: "The line's " + String(o.truncated.field || "text") + " was cut to fit storage", text: "  [cut to fit: the line was " + num(o.truncated.bytes) + " bytes]" })
				: null));
}
