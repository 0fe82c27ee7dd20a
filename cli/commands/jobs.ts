import { Option, type Command } from "commander";
import { parseDocument } from "yaml";
import { CliError, JSONL } from "../client.ts";
import { act, isoInstant, jobIdArg, nextPageCommand, positiveInt, requireKnownAgent, type Context } from "../context.ts";
import { BIDI, cancelReason, duration, exitNote, stamp, fields, printable, printableDeep, printableYaml, relTime, renderLine, shellWord, statusStyle, table, truncate, when } from "../format.ts";
import type { HookCall, JobRecord, JobSummary, ToolCallView } from "../types.ts";
import { shapes } from "../shapes.ts";
import { failedCallsWord } from "../../src/jobs/tool-call-words.ts";
import { usd } from "../../src/shared/usd.ts";

const FINAL_STATUSES = ["completed", "failed", "cancelled", "indeterminate"];
const JOB_STATUSES = ["pending", "running", "approval_pending", ...FINAL_STATUSES];
const TRIGGER_TYPES = ["schedule", "manual", "webhook", "fork", "continue"];

interface JobsOptions {
	agent?: string;
	status?: string;
	trigger?: string;
	since?: string;
	until?: string;
	limit: number;
	cursor?: string;
	json?: boolean;
}

interface JobOptions {
	logs?: boolean;
	manifest?: boolean;
	outputLog?: boolean;
	toolCalls?: boolean;
	json?: boolean;
	yaml?: boolean;
}

export function registerJobs(program: Command): void {
	program
		.command("jobs")
		.description("list jobs, newest first")
		.option("-a, --agent <agent>", "only this agent's jobs")
		.addOption(new Option("-s, --status <status>", "only jobs in this status").choices(JOB_STATUSES))
		.addOption(new Option("--trigger <type>", "only jobs started this way").choices(TRIGGER_TYPES))
		.option("--since <time>", "jobs created at or after this ISO 8601 time, with its offset (a date alone: its start, UTC)", isoInstant)
		.option("--until <time>", "jobs created before this ISO 8601 time, with its offset (a date alone: its start, UTC)", isoInstant)
		.option("-n, --limit <n>", "how many (1-200)", positiveInt(200), 20)
		.option("--cursor <cursor>", "the next page (printed after a full page)")
		.option("--json", "print the API's JSON")
		.action(act(listJobs));

	program
		.command("job")
		.description("one job: its record, usage per model and, with --logs, its output")
		.argument("<id>", "job id (job-YYYY-MM-DD-xxxxxx)", jobIdArg)
		.addOption(new Option("-l, --logs", "also print the job's output (not with --yaml)").conflicts("manifest"))
		.addOption(new Option("-m, --manifest", "what the job runs with instead: the definition, system prompt, tools, models and deadline saved as it started").conflicts(["yaml", "logs"]))
		.addOption(
			new Option("--output-log", "print the job's plain-text log instead, as R2 keeps it (herdctl's output.log: kept when its schedule or agent sets output_to_file)").conflicts([
				"logs",
				"manifest",
				"json",
				"yaml",
			]),
		)
		.addOption(
			new Option("-t, --tool-calls", "list the job's tool calls instead, in the order made: input, status, approval, what the model was told, how long each took").conflicts([
				"logs",
				"manifest",
				"outputLog",
				"yaml",
			]),
		)
		.addOption(new Option("--json", "print the API's JSON (with --logs: {job, output}; with --tool-calls: every page's calls in one)").conflicts("yaml"))
		.addOption(new Option("--yaml", "print herdctl's YAML job layout (Accept: application/yaml)").conflicts("json"))
		.action(act(showJob));
}

async function listJobs(ctx: Context, opts: JobsOptions): Promise<number> {
	if (opts.since !== undefined && opts.until !== undefined && Date.parse(opts.since) >= Date.parse(opts.until)) {
		throw new CliError("--since must be before --until", 2);
	}
	const page = await ctx.client.json("/v1/jobs", shapes.jobPage, {
		query: { agent: opts.agent, status: opts.status, trigger_type: opts.trigger, since: opts.since, until: opts.until, limit: opts.limit, cursor: opts.cursor },
	});
	// A mistyped agent lists nothing, as an agent with no jobs yet does: an unknown one is an error,
	// for a script reading --json as for a person.
	if (page.jobs.length === 0 && opts.agent !== undefined && opts.cursor === undefined) await requireKnownAgent(ctx, opts.agent);
	if (opts.json) {
		ctx.json(page);
		return 0;
	}
	if (page.jobs.length === 0) {
		ctx.out(ctx.p.dim("no jobs"));
		return 0;
	}
	const now = Date.now();
	ctx.out(
		table<JobSummary>(
			page.jobs,
			[
				{ header: "ID", value: (j) => j.id },
				{ header: "AGENT", value: (j) => j.agent, shrink: "name" },
				// completed says the run ended with an answer, not that every call it made succeeded.
				{ header: "STATUS", value: (j) => (j.tool_calls?.failed ? `${j.status} (${j.tool_calls.failed}/${j.tool_calls.made} calls ${failedCallsWord(j.status, j.tool_calls.failed)})` : j.status), style: (j) => (j.status === "completed" && j.tool_calls?.failed ? ctx.p.yellow : statusStyle(ctx.p, j.status)), shrink: "note", keep: (j) => j.status },
				{ header: "TRIGGER", value: (j) => (j.schedule ? `${j.trigger_type}:${j.schedule}` : j.trigger_type), shrink: "name", optional: 1 },
				{ header: "STARTED", value: (j) => relTime(j.started_at, now) },
				{ header: "DURATION", value: (j) => (j.duration_seconds !== null ? duration(j.duration_seconds) : j.started_at ? duration((now - Date.parse(j.started_at)) / 1000) : "-") },
				// A failed job has no answer to show: what ended it instead.
				{ header: "SUMMARY", value: (j) => listedSummary(j), style: (j) => (shownError(j) ? ctx.p.red : (s: string) => s), shrink: "text", max: 60 },
			],
			ctx.p,
			ctx.width,
		),
	);
	if (page.next_cursor) {
		const filters = [["--agent", opts.agent], ["--status", opts.status], ["--trigger", opts.trigger], ["--since", opts.since], ["--until", opts.until], ["--limit", opts.limit]] as const;
		ctx.err(ctx.ep.dim(printable(`more: ${nextPageCommand(ctx, ["jobs"], filters, page.next_cursor)}`)));
	}
	return 0;
}

async function showJob(ctx: Context, id: string, opts: JobOptions): Promise<number> {
	const path = `/v1/jobs/${encodeURIComponent(id)}`;
	// The output is JSONL, neither YAML nor (unrendered) for a person: after the YAML it made the
	// whole neither a YAML document nor safe on a terminal.
	if (opts.yaml && opts.logs) {
		throw new CliError("--logs does not go with --yaml: a job's output is JSONL lines, not YAML", 2, `drover job ${shellWord(id)} --yaml for the job; drover logs --job ${shellWord(id)} for its output (--json: the raw JSONL)`);
	}
	if (opts.manifest) return showManifest(ctx, id, opts);
	if (opts.toolCalls) return showToolCalls(ctx, id, opts);
	if (opts.outputLog) {
		// The server writes it printable (src/jobs/output-text.ts); printable again costs nothing there
		// and keeps another server's text off the terminal's controls.
		process.stdout.write(printable(await ctx.client.text(`${path}/output.log`, "text/plain")));
		return 0;
	}
	if (opts.yaml) {
		// For a person to read as much as for a program: printable. drover's YAML escapes C0 controls
		// itself and double-quotes a string holding DEL or a C1 control, where printable's "\x9b" is
		// YAML's own escape for it: the document means the same. A string holding a bidirectional
		// control may be plain, where "\u202e" would be six characters of text: such a document is
		// written again with those strings double-quoted (printableYaml).
		const text = await ctx.client.text(path, "application/yaml");
		const doc = BIDI.test(text) ? parseDocument(text) : null;
		const yaml = doc && doc.errors.length === 0 ? printableYaml(doc) : printable(text);
		process.stdout.write(yaml.endsWith("\n") ? yaml : `${yaml}\n`);
		return 0;
	}
	const job = await ctx.client.json(path, shapes.job);
	if (opts.json) {
		if (!opts.logs) ctx.json(job);
		else {
			const text = await ctx.client.text(`${path}/output`, JSONL);
			ctx.json({ job, output: parseJsonl(text) });
		}
		return 0;
	}
	ctx.out(describeJob(ctx, job));
	if (opts.logs) {
		ctx.out("");
		await printOutput(ctx, id);
	}
	return 0;
}

function parseJsonl(text: string): unknown[] {
	return text
		.split("\n")
		.filter((l) => l.trim() !== "")
		.map((l) => {
			try {
				return JSON.parse(l) as unknown;
			} catch {
				return l;
			}
		});
}

/** The job's output rendered for a person (renderLine: printable, then styled). */
async function printOutput(ctx: Context, id: string): Promise<void> {
	const text = await ctx.client.text(`/v1/jobs/${encodeURIComponent(id)}/output`, JSONL);
	for (const raw of text.split("\n")) {
		if (raw.trim() === "") continue;
		const shown = renderLine(raw, ctx.p, Math.max(40, (ctx.width ?? 160) - 20));
		if (shown !== null) ctx.out(shown);
	}
}

/** What ended a job that has no answer to show (`error` is absent from an older server's rows). */
function shownError(j: JobSummary): JobSummary["error"] {
	return j.summary === null || j.summary.trim() === "" ? (j.error ?? null) : null;
}

function listedSummary(j: JobSummary): string {
	const error = shownError(j);
	return error ? `${error.type}: ${error.message}` : (j.summary ?? "");
}

/**
 * A hook call: `after_run (HOOK_URL): delivered`, or what its last attempt met, and when a retried one
 * goes next; one held for the job's delivery says so (a bare `pending` read as stuck).
 */
function hookText(ctx: Context, h: HookCall, now: number): string {
	const attempts = h.waiting_for === "delivery" ? "waiting for the job's delivery" : h.attempts > 0 ? `${h.attempts} attempt${h.attempts === 1 ? "" : "s"}` : h.outcome === "pending" ? "not sent yet" : null;
	const more = h.outcome === "delivered" ? "" : [attempts, h.error ?? null, h.next_attempt_at ? `next ${when(h.next_attempt_at, now)}` : null].filter(Boolean).join(", ");
	return `${h.hook} (${h.url_secret}): ${statusStyle(ctx.p, h.outcome)(h.outcome)}${more ? ` (${more})` : ""}`;
}

function describeJob(ctx: Context, record: JobRecord & { hooks?: HookCall[] }): string {
	const { p } = ctx;
	// Its prompt, summary and error are the model's, a webhook's or a tool's text.
	const job = printableDeep(record);
	const now = Date.now();
	const status = statusStyle(p, job.status)(job.status) + exitNote(job);
	const trigger = [job.trigger_type, job.schedule ? `schedule ${job.schedule}` : null, job.dispatch]
		.filter(Boolean)
		.join(", ");
	const approval = job.pending_approval
		? `${job.pending_approval.tool_name} ${printable(JSON.stringify(record.pending_approval!.input))} (asked ${relTime(job.pending_approval.requested_at, now)}${job.pending_approval.expires_at ? `, ${Date.parse(job.pending_approval.expires_at) > now ? "expires" : "expired"} ${relTime(job.pending_approval.expires_at, now)}` : ""}; drover approve|deny ${job.id} --call ${printable(job.pending_approval.tool_use_id)})`
		: null;
	const head = fields(
		[
			["job", p.bold(job.id)],
			["agent", job.agent],
			["status", status],
			["cancelled", cancelReason(job)],
			// Absent from an older server's records.
			["cancel requested", job.cancel_requested ? p.yellow(`${job.cancel_requested} (once its tool call in flight returns)`) : null],
			// Absent from an older server's records too.
			["rate limited", job.rate_limited_until ? p.yellow(`waiting: the next model call at ${when(job.rate_limited_until, now)}`) : null],
			["trigger", trigger],
			["scheduled", job.scheduled_instant ? when(job.scheduled_instant, now) : null],
			["created", when(job.created_at, now)],
			["started", job.started_at ? when(job.started_at, now) : null],
			["finished", job.finished_at ? when(job.finished_at, now) : null],
			["duration", job.duration_seconds !== null ? duration(job.duration_seconds) : null],
			["session", job.session_id],
			["forked from", job.forked_from],
			// Absent from an older server's records.
			["continued from", job.continued_from ?? null],
			["owner", job.owner],
			["prompt", job.prompt === null ? null : oneLine(job.prompt)],
			// An empty summary is no summary: a blank row would only look like a display fault.
			["summary", job.summary === null || job.summary.trim() === "" ? null : oneLine(job.summary)],
			["tool calls", toolCallsText(ctx, job)],
			// A failed model call's request id is what Anthropic's support asks for.
			["error", job.error ? p.red(`${job.error.type}: ${job.error.message}${job.error.request_id ? ` (request ${job.error.request_id})` : ""}`) : null],
			["approval", approval ? p.yellow(approval) : null],
			// Why one that did not get through did not (absent from an older server's records).
			["delivery", job.delivery ? `${job.delivery.target}: ${statusStyle(p, job.delivery.outcome)(job.delivery.outcome)}${job.delivery.error ? ` (${job.delivery.error})` : ""}` : null],
			// Absent from an older server's answers, and none (an empty list) while the job runs.
			["hooks", job.hooks && job.hooks.length > 0 ? job.hooks.map((h) => hookText(ctx, h, now)).join(" · ") : null],
			["output", job.output_file],
			["plain-text log", job.output_log ? `${job.output_log} (drover job ${job.id} --output-log)` : null],
			["usage", `${job.usage.num_turns} turn${job.usage.num_turns === 1 ? "" : "s"}${job.usage.total_cost_usd !== null ? `, ${usd(job.usage.total_cost_usd)}` : Object.keys(job.usage.per_model).length > 0 ? ", cost not priced" : ""}`],
		],
		p,
		ctx.width,
	);
	const models = Object.entries(job.usage.per_model);
	if (models.length === 0) return head;
	const usage = table(
		models,
		[
			{ header: "MODEL", value: ([m]) => m },
			{ header: "INPUT", value: ([, u]) => String(u.input_tokens) },
			{ header: "OUTPUT", value: ([, u]) => String(u.output_tokens) },
			{ header: "CACHE WRITE", value: ([, u]) => String(u.cache_creation_input_tokens) },
			{ header: "CACHE READ", value: ([, u]) => String(u.cache_read_input_tokens) },
		],
		p,
	);
	return `${head}\n\n${usage}`;
}

/** `text` (printable already) on what its field's line leaves of the terminal, cut between characters and outside escapes. */
function oneLine(text: string): (room: number) => string {
	return (room) => truncate(text, room);
}

/** `drover job <id> --manifest`: GET /v1/jobs/:id/manifest, for a person or (--json) as it is. */
async function showManifest(ctx: Context, id: string, opts: JobOptions): Promise<number> {
	const answer = await ctx.client.json(`/v1/jobs/${encodeURIComponent(id)}/manifest`, shapes.manifest);
	if (opts.json) {
		ctx.json(answer);
		return 0;
	}
	const m = printableDeep(answer);
	const d = m.definition;
	const limits = Object.entries(d.usage_limits ?? {}).map(([k, v]) => `${k} ${v}`);
	ctx.out(
		fields(
			[
				["job", `${m.job_id} (${m.agent}, ${m.status})`],
				["session", m.session_id],
				["revision", m.definition_revision],
				["models", m.models.join(" → ")],
				["max tokens", String(m.max_tokens)],
				["max turns", String(d.max_turns)],
				// An ended job's deadline is history: "(in 14m)" would read as if it still ran.
				["timeout", `${d.timeout}, deadline ${isFinal(m.status) ? stamp(m.deadline) : when(m.deadline)}`],
				["limits", limits.length > 0 ? limits.join(", ") : null],
				["tools", m.tools.length > 0 ? m.tools.map((t) => String(t.name ?? t.type ?? "?")).join(", ") : ctx.p.dim("none")],
				["session mode", persistentText(m)],
			],
			ctx.p,
		),
	);
	ctx.out("");
	ctx.out(ctx.p.bold("system prompt"));
	ctx.out(m.system.map((b) => b.text).join("\n\n"));
	return 0;
}

/** How many calls the job ran and how many failed, once it has ended (none: no row). */
function toolCallsText(ctx: Context, job: JobRecord): string | null {
	const t = job.tool_calls ?? null;
	if (t === null || t.made === 0) return null;
	const failed = t.failed === 0 ? "none failed" : ctx.p.yellow(`${t.failed} ${failedCallsWord(job.status, t.failed)}`);
	return `${t.made} ran, ${failed} (drover job ${job.id} --tool-calls)`;
}


/** `drover job <id> --tool-calls`: every page of GET /v1/jobs/:id/tool-calls, as a table or (--json) as one page. */
async function showToolCalls(ctx: Context, id: string, opts: JobOptions): Promise<number> {
	const path = `/v1/jobs/${encodeURIComponent(id)}/tool-calls`;
	let page = await ctx.client.json(path, shapes.toolCallPage, { query: { limit: 200 } });
	const calls = [...page.tool_calls];
	while (page.next_cursor) {
		page = await ctx.client.json(path, shapes.toolCallPage, { query: { limit: 200, cursor: page.next_cursor } });
		calls.push(...page.tool_calls);
	}
	if (opts.json) {
		ctx.json({ job_id: page.job_id, agent: page.agent, status: page.status, tool_calls: calls, next_cursor: null });
		return 0;
	}
	const shown = calls;
	if (shown.length === 0) {
		ctx.out(ctx.p.dim(page.status === "pending" ? `no tool calls: job ${id} has not started` : `no tool calls in job ${id} (${page.status})`));
		return 0;
	}
	const { p } = ctx;
	const style = (t: ToolCallView) => (t.status === "completed" ? p.green : t.status === "pending" ? p.dim : t.status === "executing" && isFinal(page.status) ? p.red : p.yellow);
	const order = new Map(shown.map((t, i) => [t, i + 1]));
	ctx.out(
		table<ToolCallView>(
			shown,
			[
				{ header: "#", value: (t) => String(order.get(t)) },
				{ header: "TOOL", value: (t) => printable(t.name) },
				{ header: "STATUS", value: (t) => toolCallStatus(t, page.status), style },
				{ header: "APPROVAL", value: (t) => (t.decision ? printable(`${t.decision === "approve" ? "approved" : "denied"} by ${t.decided_by ?? "?"}`) : "-") },
				{ header: "TOOK", value: (t) => (t.started_at && t.finished_at ? duration((Date.parse(t.finished_at) - Date.parse(t.started_at)) / 1000) : "-") },
				// Inputs and results are the model's and the tools' text: printable (JSON already escapes an input's controls).
				{ header: "INPUT → RESULT", value: (t) => printable(`${JSON.stringify(t.input)}${t.result === null ? "" : ` → ${t.result.replace(/\s+/g, " ")}`}`), shrink: "text", max: 200 },
			],
			p,
			ctx.width,
		),
	);
	return 0;
}

/**
 * A call left executing when its job ended was cut off: its effect is unknown. One left pending (an
 * approval the job was cancelled waiting for) never ran and never will: "pending" read as still waiting.
 */
function toolCallStatus(t: ToolCallView, jobStatus: string): string {
	if (t.status === "executing" && isFinal(jobStatus)) return "effect unknown";
	if (t.status === "pending" && isFinal(jobStatus)) return `not run (job ${printable(jobStatus)})`;
	return t.status === "failed" || (t.status === "completed" && t.is_error) ? "failed" : t.status;
}

const isFinal = (status: string): boolean => FINAL_STATUSES.includes(status);

/** How a run in persistent mode started: carrying the session on, or starting a new one. */
function persistentText(m: { persistent_from: string | null; continued_from?: string | null }): string | null {
	if (m.persistent_from === null) return null;
	if (m.persistent_from !== "" && m.continued_from === m.persistent_from) return `persistent, carrying the session on from ${m.persistent_from}`;
	return m.persistent_from === "" ? "persistent, starting the session (there was none)" : `persistent, starting a new session (it found the last one at ${m.persistent_from}, not continued)`;
}
