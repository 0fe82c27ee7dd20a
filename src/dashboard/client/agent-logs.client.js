// @ts-check
// ── An agent's logs: its recent jobs' last lines, then every job it starts, live (the CLI's `logs <agent> --follow`) ──
/** How many of the newest jobs' lines the page opens with, across them. */
const AGENT_LOG_LINES = 200;
/**
 * Job sections kept on the page: a page left open for days on an agent that runs every minute would
 * otherwise grow without end. The oldest ended ones go first.
 */
const AGENT_LOG_JOBS = 30;
/** Lines a section keeps, its newest: the job's page shows more, and downloads the whole output. */
const AGENT_LOG_SECTION_LINES = 2000;
/**
 * Streams open at once. Over HTTP/1.1 (wrangler dev) a browser opens 6 connections to a host, and a
 * stream holds one for the job's life: more would leave the page's own reads and polls waiting
 * behind them. The jobs beyond wait their turn, oldest first; each stream starts at the first of
 * the lines its section keeps, so none of those is lost, only shown later.
 */
const AGENT_LOG_STREAMS = 4;
const ACTIVE_STATUSES = ["pending", "running", "approval_pending"];
/** Jobs a poll reads a page at a time, looking for new ones: the page opens knowing as many (its newest 20 shown). */
const AGENT_LOG_PAGE = 50;

/** @param {AbortSignal} signal */
async function agentLogsView(signal) {
	const agent = SUBJECT;
	const base = "/v1/agents/" + enc(agent) + "/jobs";
	const box = $("#agent-logs");
	// A view run again (signed out and in on this page) draws its jobs afresh.
	box.replaceChildren();
	/** @type {Set<string>} */
	const seen = new Set();
	/** @type {Set<string>} */
	const following = new Set();
	/** @type {{ job: JobSummary, section: HTMLElement }[]} */
	const waiting = [];
	// Until the opening lines are drawn, a followed job's end leaves the asking to the poll, so that
	// no newer job's section lands above them.
	let ready = false;
	const drawMeta = () => {
		const live = following.size + waiting.length;
		$("#agent-logs-meta").textContent = live
			? "following " + live + (live === 1 ? " live job" : " live jobs") + " · new jobs appear as they start"
			: "no job running · new jobs appear as they start";
		$("#agent-logs-empty").hidden = box.children.length > 0;
	};
	/** Follows a job in its section, now or when a stream is free. @param {JobSummary} job @param {HTMLElement} section */
	const follow = (job, section) => {
		if (following.size >= AGENT_LOG_STREAMS) waiting.push({ job, section });
		else stream(job, section);
		drawMeta();
	};
	/**
	 * One job's stream, from the first line its section keeps; on its end the section says so, the
	 * next waiting job gets the stream, and the agent's jobs are asked for again at once, as the next
	 * queued run often starts then.
	 * @param {JobSummary} job @param {HTMLElement} section
	 */
	const stream = (job, section) => {
		following.add(job.id);
		const lines = sectionLines(section);
		linesBefore(job.id, AGENT_LOG_SECTION_LINES, signal).then((after) => {
			lines.skip(after);
			return streamJob(job.id, signal, { line: lines.add, settle: lines.flush }, after);
		}).then((status) => {
			if (status === null) return;
			setSectionStatus(section, status);
			$("#agent-logs-announce").textContent = "Job " + job.id + " " + words(status) + ".";
			lines.ended();
			next(job);
			if (ready) load().catch(fail);
		}, (err) => {
			next(job);
			fail(err);
		});
	};
	/** @param {JobSummary} done */
	const next = (done) => {
		following.delete(done.id);
		const turn = waiting.shift();
		if (turn && !signal.aborted) stream(turn.job, turn.section);
		drawMeta();
	};
	/** Adds sections for the jobs not seen yet (oldest first, at the bottom) and follows each. */
	const load = newestWins(async (fresh) => {
		const jobs = await newJobs(base, seen, signal);
		if (signal.aborted || !fresh()) return;
		for (const job of jobs.reverse()) {
			if (seen.has(job.id)) continue;
			seen.add(job.id);
			const section = jobSection(job);
			box.append(section);
			follow(job, section);
			$("#agent-logs-announce").textContent = "Job " + job.id + " started (" + words(job.trigger_type) + ").";
		}
		trim();
		drawMeta();
	});
	const trim = () => {
		const busy = new Set([...following, ...waiting.map((w) => w.job.id)]);
		const ended = [...box.children].filter((s) => !busy.has(/** @type {HTMLElement} */ (s).dataset.job || ""));
		while (box.children.length > AGENT_LOG_JOBS && ended.length) ended.shift()?.remove();
	};

	// The page opens with the last lines of the newest jobs, oldest first, and every live job (the
	// newest 20 need not hold them all: a queue keeps its oldest, which run first, beyond them).
	/** @type {JobSummary[]} */
	let jobs;
	try {
		let known;
		({ jobs, known } = await recentAndLive(base, signal));
		// Not new at the first poll: the page had read them (its first poll added the 30 jobs after the
		// newest 20 as if just started, replaying each whole, and dropped the newest ones it had opened with).
		for (const job of known) seen.add(job.id);
	} catch (err) {
		// No such agent: the notice says so, and no empty log remains.
		if (err instanceof ApiError && (err.status === 404 || err.status === 400)) {
			box.hidden = true;
			$("#agent-logs-meta").textContent = "";
			document.title = "Agent not found · drover";
		}
		throw err;
	}
	if (signal.aborted) return;
	for (const job of jobs) seen.add(job.id);
	let remaining = AGENT_LOG_LINES;
	/** @type {{ job: JobSummary, section: HTMLElement, live: boolean }[]} */
	const shown = [];
	// The stored lines are read before any stream opens, so they do not wait behind the streams.
	for (const job of jobs) {
		const live = ACTIVE_STATUSES.includes(job.status);
		if (!live && remaining === 0) continue;
		const section = jobSection(job);
		if (!live) {
			const asked = remaining;
			const res = await request("/v1/jobs/" + enc(job.id) + "/output?lines=" + asked, { signal });
			const lines = (await res.text()).split("\n").filter((l) => l.trim() !== "");
			if (!lines.length) continue;
			remaining -= lines.length;
			// ?lines= names its first line's number; from a server too old to, fewer lines than asked
			// for are the whole output, numbered from 1, and a tail's numbers are left blank.
			const named = Number(res.headers.get("x-drover-first-line"));
			const first = Number.isSafeInteger(named) && named >= 1 ? named : lines.length < asked ? 1 : 0;
			const log = /** @type {HTMLElement} */ (section.querySelector("ol.log"));
			log.replaceChildren(...lines.map((raw, i) => logLine(first ? first + i : 0, raw)));
			if (first) fitLineNumbers(log, first + lines.length - 1);
			if (!first) for (const n of log.querySelectorAll(".n")) n.textContent = "";
		}
		shown.unshift({ job, section, live });
	}
	if (signal.aborted) return;
	box.append(...shown.map((s) => s.section));
	// Oldest first, so a queue's streams open in the order its jobs run.
	for (const s of shown) if (s.live) follow(s.job, s.section);
	ready = true;
	drawMeta();
	poll(load, LIVE_MS);
}

/**
 * The agent's newest 20 jobs and all its live ones, newest first (jobs); and the newest page a poll
 * reads (known), none of which is new to it.
 * @param {string} base @param {AbortSignal} signal @returns {Promise<{ jobs: JobSummary[], known: JobSummary[] }>}
 */
async function recentAndLive(base, signal) {
	/** @type {Map<string, JobSummary>} */
	const byId = new Map();
	/** @type {JobSummary[]} */
	const known = (await api(base + "?limit=" + AGENT_LOG_PAGE, { signal })).jobs;
	for (const j of known.slice(0, 20)) byId.set(j.id, j);
	for (const status of ACTIVE_STATUSES) {
		for (const j of await all(base + "?status=" + status, "jobs", 1000)) if (!byId.has(j.id)) byId.set(j.id, j);
	}
	return { jobs: [...byId.values()].sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id)), known };
}

/**
 * Jobs not seen yet, newest first: pages are read while a whole page is new (more than a page of jobs
 * can start between two polls), and the first whole, since a job's index row can land after a newer one's.
 * @param {string} base @param {Set<string>} seen @param {AbortSignal} signal @returns {Promise<JobSummary[]>}
 */
async function newJobs(base, seen, signal) {
	/** @type {JobSummary[]} */
	const fresh = [];
	/** @type {string | null} */
	let cursor = null;
	for (let page = 0; page < 40; page++) {
		/** @type {JobPage} */
		const answer = await api(base + "?limit=" + AGENT_LOG_PAGE + (cursor ? "&cursor=" + enc(cursor) : ""), { signal });
		const unseen = answer.jobs.filter((j) => !seen.has(j.id));
		fresh.push(...unseen);
		if (unseen.length < answer.jobs.length || !answer.next_cursor) break;
		cursor = answer.next_cursor;
	}
	return fresh;
}

/**
 * A section's log, fed a line at a time: lines are added a batch at a time, reading the layout (is
 * the reader at the bottom?) once a batch, as the job page does (once a line froze a long replay),
 * and only the newest AGENT_LOG_SECTION_LINES are kept.
 * @param {HTMLElement} section
 */
function sectionLines(section) {
	const log = /** @type {HTMLElement} */ (section.querySelector("ol.log"));
	/** @type {DocumentFragment | null} */
	let batch = null;
	let dropped = 0;
	const flush = () => {
		if (!batch) return;
		const stick = log.scrollTop + log.clientHeight >= log.scrollHeight - 8;
		log.querySelector(".placeholder:not(.cut-note)")?.remove();
		log.append(batch);
		batch = null;
		const lines = log.querySelectorAll("li[data-line]");
		for (let i = 0; i < lines.length - AGENT_LOG_SECTION_LINES; i++, dropped++) lines[i].remove();
		noteDropped();
		if (stick) log.scrollTop = log.scrollHeight;
	};
	const noteDropped = () => {
		if (!dropped) return;
		const note = log.querySelector(".cut-note") || h("li", { class: "placeholder cut-note" });
		note.textContent = num(dropped) + " earlier lines: the job's page shows more, and downloads them all";
		log.prepend(note);
	};
	return {
		flush,
		/** Lines before the stream's first, not asked for. @param {number} n */
		skip: (n) => {
			dropped += n;
			noteDropped();
		},
		/** @param {number} n @param {string} data */
		add: (n, data) => {
			if (!batch) {
				batch = document.createDocumentFragment();
				setTimeout(flush, 16);
			}
			batch.append(logLine(n, data));
			fitLineNumbers(log, n);
		},
		ended: () => {
			flush();
			if (!log.querySelector("li[data-line]")) log.replaceChildren(h("li", { class: "placeholder", text: "No output." }));
		},
	};
}

/** A job's section: its link, trigger and status over its own log. @param {JobSummary} job */
function jobSection(job) {
	const live = ACTIVE_STATUSES.includes(job.status);
	return h("section", { class: "panel agent-log-job", "data-job": job.id },
		h("div", { class: "panel-head" },
			h("h2", null, jobLink(job.id), " ", h("span", { class: "muted small" }, words(job.trigger_type) + " · ", when(job.created_at))),
			h("span", { class: "job-state" }, live ? h("span", { class: "pill live", text: "live" }) : badge(job.status))),
		h("ol", { class: "log", "aria-label": "Output of " + job.id }, live ? h("li", { class: "placeholder", text: "Waiting for output…" }) : null));
}

/** @param {Element} section @param {string} status */
function setSectionStatus(section, status) {
	section.querySelector(".job-state")?.replaceChildren(badge(status));
}
