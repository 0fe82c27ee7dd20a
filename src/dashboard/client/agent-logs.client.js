// @ts-check
// ── An agent's logs: its recent jobs' last lines, then every job it starts, live (the CLI's `logs <agent> --follow`) ──
/** How many of the newest jobs' lines the page opens with, across them. */
const AGENT_LOG_LINES = 200;
/**
 * Job sections kept on the page: a page left open for days on an agent that runs every minute would
 * otherwise grow without end. The oldest ended ones go first.
 */
const AGENT_LOG_JOBS = 30;
const ACTIVE_STATUSES = ["pending", "running", "approval_pending"];

/** @param {AbortSignal} signal */
async function agentLogsView(signal) {
	const agent = SUBJECT;
	const box = $("#agent-logs");
	/** @type {Set<string>} */
	const seen = new Set();
	/** @type {Set<string>} */
	const following = new Set();
	// Until the opening lines are drawn, a followed job's end leaves the asking to the poll, so that
	// no newer job's section lands above them.
	let ready = false;
	const drawMeta = () => {
		$("#agent-logs-meta").textContent = following.size
			? "following " + following.size + (following.size === 1 ? " live job" : " live jobs") + " · new jobs appear as they start"
			: "no job running · new jobs appear as they start";
		$("#agent-logs-empty").hidden = box.children.length > 0;
	};
	/** @returns {Promise<JobSummary[]>} */
	const list = async () => (await api("/v1/agents/" + enc(agent) + "/jobs?limit=20", { signal })).jobs;
	/**
	 * Follows a live (or just seen) job in its section from its first line; on its end the section
	 * says so, and the agent's jobs are asked for again at once, as the next queued run often starts then.
	 * @param {JobSummary} job @param {HTMLElement} section
	 */
	const follow = (job, section) => {
		following.add(job.id);
		drawMeta();
		const log = /** @type {HTMLElement} */ (section.querySelector("ol.log"));
		streamJob(job.id, signal, {
			line: (n, data) => {
				const stick = log.scrollTop + log.clientHeight >= log.scrollHeight - 8;
				log.querySelector(".placeholder")?.remove();
				log.append(logLine(n, data));
				if (stick) log.scrollTop = log.scrollHeight;
			},
		}).then((status) => {
			following.delete(job.id);
			if (status === null) return;
			setSectionStatus(section, status);
			if (!log.children.length) log.append(h("li", { class: "placeholder", text: "No output." }));
			drawMeta();
			if (ready) load().catch(fail);
		}, (err) => {
			following.delete(job.id);
			drawMeta();
			fail(err);
		});
	};
	/** Adds sections for the jobs not seen yet (oldest first, at the bottom) and follows each. */
	const load = newestWins(async (fresh) => {
		const jobs = await list();
		if (signal.aborted || !fresh()) return;
		for (const job of jobs.filter((j) => !seen.has(j.id)).reverse()) {
			seen.add(job.id);
			const section = jobSection(job);
			box.append(section);
			follow(job, section);
		}
		trim();
		drawMeta();
	});
	const trim = () => {
		const ended = [...box.children].filter((s) => !following.has(/** @type {HTMLElement} */ (s).dataset.job || ""));
		while (box.children.length > AGENT_LOG_JOBS && ended.length) ended.shift()?.remove();
	};

	// The page opens with the last lines of the newest jobs (the live ones whole), oldest first.
	let jobs;
	try {
		jobs = await list();
	} catch (err) {
		// No such agent: the notice says so, and no empty log remains.
		if (err instanceof ApiError && (err.status === 404 || err.status === 400)) {
			box.hidden = true;
			$("#agent-logs-meta").textContent = "";
		}
		throw err;
	}
	if (signal.aborted) return;
	let remaining = AGENT_LOG_LINES;
	/** @type {HTMLElement[]} */
	const sections = [];
	// Every listed job counts as seen (the poll adds only newer ones); a live one is followed wherever it is in the list.
	for (const job of jobs) seen.add(job.id);
	for (const job of jobs) {
		const live = ACTIVE_STATUSES.includes(job.status);
		if (!live && remaining === 0) continue;
		const section = jobSection(job);
		if (live) {
			follow(job, section);
		} else {
			const asked = remaining;
			const res = await request("/v1/jobs/" + enc(job.id) + "/output?lines=" + asked, { signal });
			const lines = (await res.text()).split("\n").filter((l) => l.trim() !== "");
			if (!lines.length) continue;
			remaining -= lines.length;
			const log = /** @type {HTMLElement} */ (section.querySelector("ol.log"));
			// Fewer lines than asked for are the whole output, numbered from 1; otherwise ?lines= gave the
			// last ones, whose numbers it does not say.
			const whole = lines.length < asked;
			log.replaceChildren(...lines.map((raw, i) => logLine(whole ? i + 1 : 0, raw)));
			if (!whole) for (const n of log.querySelectorAll(".n")) n.textContent = "";
		}
		sections.unshift(section);
	}
	if (signal.aborted) return;
	box.append(...sections);
	ready = true;
	drawMeta();
	poll(load, LIVE_MS);
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
