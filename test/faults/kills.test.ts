import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import type { JobRecord } from "../../src/jobs/model.ts";
import { createAgent, runsOf, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { killDuring, killSwitch, recover, type KillSwitch } from "../helpers/kill.ts";
import { call } from "../helpers/http.ts";
import { fake } from "../helpers/outbound.ts";
import { dayFromToday, minuteOn, tick } from "../helpers/ticks.ts";

// Each case kills the agent's object (ctx.abort: memory gone, work in flight failed) at one point of
// a scheduled job, then lets a fresh instance and a retried tick of the same minute do what they do
// after a crash, and checks what a user would: the occurrence fired once, the job's final status by
// the rules, every JSONL line in R2 exactly once, and the D1 index equal to the agent's record.

// A minute no fleet.yaml schedule falls on (daily-digest runs at 08:00Z, site-watch every quarter
// hour): a file agent claimed here would run by its own alarm, into this file's scripted model answers.
// Yesterday's, not a literal day's: the days a shard deals job ids for are counted from the real clock.
const MINUTE = new Date(minuteOn(dayFromToday(-1), "08:07")).toISOString();

/** Claims the agent's occurrence at MINUTE and lets its alarm run until the kill fires. */
async function runUntilKilled(agent: string, killed: KillSwitch): Promise<string> {
	await tick(MINUTE);
	const [run] = await runsOf(agent);
	expect(run).toMatchObject({ source: "cron", status: "claimed" });
	await settle(agent).catch((err: unknown) => expect(String(err)).toMatch(/killed by the test/));
	expect(killed.fired).toBe(1);
	return run!.job_id!;
}

/** After the crash: the minute's tick retried, the heartbeat alarm fired, alarm work run to rest. */
async function afterCrash(agent: string): Promise<void> {
	await tick(MINUTE);
	await runDurableObjectAlarm(env.AGENT.getByName(agent));
	await recover(agent);
}

interface Outcome {
	job: JobRecord;
	types: string[];
	indexed: { status: string; revision: number } | null;
	leftInSqlite: number;
}

async function outcome(agent: string, jobId: string): Promise<Outcome> {
	const runs = await runsOf(agent);
	// Never fired twice: one occurrence for the minute, one job, and nothing else claimed.
	expect(runs.map((r) => [r.source, r.scheduled_instant, r.job_id])).toEqual([["cron", MINUTE, jobId]]);
	const { job, jobs, leftInSqlite } = await runInDurableObject(env.AGENT.getByName(agent), async (instance: AgentDO, state) => ({
		job: (await instance.getJob(jobId))!,
		jobs: state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM jobs").one().n,
		leftInSqlite: state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM output_lines").one().n,
	}));
	expect(jobs).toBe(1);
	const object = await env.OUTPUT.get(job.output_file!);
	expect(object, "the consolidated output in R2").not.toBeNull();
	const types = (await object!.text())
		.trimEnd()
		.split("\n")
		.map((l) => {
			const line = JSON.parse(l) as { type: string; subtype?: string };
			return line.subtype ? `${line.type}:${line.subtype}` : line.type;
		});
	const indexed = await env.DB.prepare("SELECT status, revision FROM jobs WHERE id = ?").bind(jobId).first<{ status: string; revision: number }>();
	return { job, types, indexed, leftInSqlite };
}

/** The D1 index converged to the agent's record, and no line was left behind in SQLite. */
function converged(o: Outcome): void {
	expect(o.indexed).toMatchObject({ status: o.job.status, revision: o.job.revision });
	expect(o.leftInSqlite).toBe(0);
}

describe("the agent's object killed at each point of a job", () => {
	it("before the model answers: wakes on its heartbeat, repeats the call once, completes", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "Done after the crash." });
		await createAgent({ name: "k-call", schedules: { m: { interval: "1m" } } });
		const killed = await killSwitch("k-call");
		let calls = 0;
		fake("https://api.anthropic.com", (req) => (++calls === 1 ? killed.kill() : emulator.handle(req)));
		const jobId = await runUntilKilled("k-call", killed);
		await afterCrash("k-call");
		const o = await outcome("k-call", jobId);
		expect(o.job).toMatchObject({ status: "completed", summary: "Done after the crash." });
		expect(o.job.usage.num_turns).toBe(1);
		expect(calls).toBe(2);
		expect(o.types).toEqual(["system:init", "assistant", "system:result"]);
		converged(o);
	});

	it("mid-stream: the half-streamed answer is dropped, the call repeated, nothing written twice", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "A long answer, streamed in pieces." }, { text: "The whole answer." });
		await createAgent({ name: "k-stream", schedules: { m: { interval: "1m" } } });
		const killed = await killSwitch("k-stream");
		let calls = 0;
		fake("https://api.anthropic.com", async (req) => {
			const res = await emulator.handle(req);
			if (++calls > 1) return res;
			// Three SSE events reach the object, then it dies while reading the fourth.
			let events = 0;
			const cut = new TransformStream<Uint8Array, Uint8Array>({
				async transform(chunk, controller) {
					events += new TextDecoder().decode(chunk).split("\n\n").length - 1;
					if (events > 3) await killed.kill();
					controller.enqueue(chunk);
				},
			});
			return new Response(res.body!.pipeThrough(cut), { status: res.status, headers: res.headers });
		});
		const jobId = await runUntilKilled("k-stream", killed);
		await afterCrash("k-stream");
		const o = await outcome("k-stream", jobId);
		expect(o.job).toMatchObject({ status: "completed", summary: "The whole answer." });
		expect(o.types).toEqual(["system:init", "assistant", "system:result"]);
		converged(o);
	});

	const ticketTool = { type: "webhook", name: "create_ticket", description: "Create a ticket.", url_secret: "TEST_TICKETS_URL" };

	it("with a tool executing: ends indeterminate and never runs the tool again", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "charge card" } } }, { text: "never reached" });
		await createAgent({ name: "k-tool", schedules: { m: { interval: "1m" } }, tools: [ticketTool] });
		const killed = await killSwitch("k-tool");
		let calls = 0;
		fake("https://tickets.example.test", () => {
			calls++;
			return killed.kill();
		});
		const jobId = await runUntilKilled("k-tool", killed);
		await afterCrash("k-tool");
		const o = await outcome("k-tool", jobId);
		expect(o.job.status).toBe("indeterminate");
		expect(o.job.error?.message).toMatch(/while tool create_ticket was executing/);
		expect(calls).toBe(1);
		expect(o.types).toEqual(["system:init", "assistant", "tool_use", "error", "system:result"]);
		converged(o);

		// Continued, the model is told the call's effect is unknown, not that it failed: told it
		// failed, it could charge the card again.
		const emulator = useEmulator();
		const res = await call(`/v1/jobs/${jobId}/continue`, { method: "POST", as: "operate", body: { prompt: "Was the card charged?" } });
		expect(res.status).toBe(201);
		await settle("k-tool");
		const last = emulator.requests.at(-1)!.messages!.at(-1)!;
		expect(last.content).toEqual([
			{
				type: "tool_result",
				tool_use_id: expect.any(String),
				content: "interrupted: the job stopped while this call ran, so whether it took effect is unknown; check before making it again",
				is_error: true,
			},
			{ type: "text", text: "Was the card charged?", cache_control: { type: "ephemeral" } },
		]);
		expect(calls).toBe(1);
	});

	// Hermes #108802: runs left unknown without an incident. The ledger says unknown, and the failure
	// is filed like any other, so the operator hears of it instead of finding it in the ledger.
	it("with a tool executing: its ledger row is unknown, not completed, and it files an incident", async () => {
		const alerts: unknown[] = [];
		fake("https://alerts.example.test", async (req) => {
			alerts.push(await req.json());
			return new Response("ok");
		});
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "charge card" } } }, { text: "never reached" });
		await createAgent({ name: "k-tool-ledger", schedules: { m: { interval: "1m" } }, tools: [ticketTool] });
		const killed = await killSwitch("k-tool-ledger");
		fake("https://tickets.example.test", () => killed.kill());
		const jobId = await runUntilKilled("k-tool-ledger", killed);
		await afterCrash("k-tool-ledger");
		expect(await runsOf("k-tool-ledger")).toEqual([expect.objectContaining({ source: "cron", job_id: jobId, status: "unknown" })]);
		const res = await call("/v1/incidents?agent=k-tool-ledger");
		const { incidents } = (await res.json()) as { incidents: { state: string; count: number; last_job_id: string }[] };
		expect(incidents).toEqual([expect.objectContaining({ count: 1, last_job_id: jobId, state: expect.stringMatching(/^(detected|alerted)$/) })]);
	});

	for (const [what, meanwhile] of [
		["cancelled", (agent: string, jobId: string) => env.AGENT.getByName(agent).cancel(jobId, "looks stuck", "ops").then(() => {})],
		[
			"past its deadline",
			(agent: string) =>
				runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => {
					state.storage.sql.exec("UPDATE job_setup SET deadline = 1");
				}),
		],
	] as const) {
		it(`with a tool executing, then ${what} before it recovers: still indeterminate, saying so`, async () => {
			const name = `k-tool-${what.split(" ")[0]}`;
			useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "charge card" } } }, { text: "never reached" });
			await createAgent({ name, schedules: { m: { interval: "1m" } }, tools: [ticketTool] });
			const killed = await killSwitch(name);
			let calls = 0;
			fake("https://tickets.example.test", () => {
				calls++;
				return killed.kill();
			});
			const jobId = await runUntilKilled(name, killed);
			// An operator sees it "running" and cancels it, or it outlives its timeout, before anything wakes it.
			await meanwhile(name, jobId);
			await afterCrash(name);
			const o = await outcome(name, jobId);
			expect(o.job.status).toBe("indeterminate");
			expect(o.job.error?.message).toMatch(/while tool create_ticket was executing/);
			expect(o.job.transitions.at(-1)?.reason).toMatch(what === "cancelled" ? /was interrupted; it is not re-run; cancelled by ops: looks stuck since$/ : /the job timed out since$/);
			expect(calls).toBe(1);
			converged(o);
		});
	}

	it("after the tool answered but before its result was committed: indeterminate, not re-run", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "charge card" } } }, { text: "never reached" });
		await createAgent({ name: "k-commit", schedules: { m: { interval: "1m" } }, tools: [ticketTool] });
		const killed = await killSwitch("k-commit");
		let calls = 0;
		fake("https://tickets.example.test", () => {
			calls++;
			// The target has done its work and answered; the object dies as it reads the answer's end.
			let sent = false;
			const body = new ReadableStream<Uint8Array>({
				async pull(controller) {
					if (sent) await killed.kill();
					sent = true;
					controller.enqueue(new TextEncoder().encode('{"ticket":"T-1"}'));
				},
			});
			return new Response(body, { headers: { "content-type": "application/json" } });
		});
		const jobId = await runUntilKilled("k-commit", killed);
		await afterCrash("k-commit");
		const o = await outcome("k-commit", jobId);
		expect(o.job.status).toBe("indeterminate");
		expect(calls).toBe(1);
		expect(o.types).toEqual(["system:init", "assistant", "tool_use", "error", "system:result"]);
		converged(o);
	});

	for (const when of ["before", "after"] as const) {
		it(`${when} an R2 write of the job's output: every line lands in R2 exactly once`, async () => {
			useEmulator().enqueue({ text: "Output kept." });
			const name = `k-r2-${when}`;
			await createAgent({ name, schedules: { m: { interval: "1m" } } });
			const killed = await killDuring(name, "OUTPUT", "put", when);
			const jobId = await runUntilKilled(name, killed);
			await afterCrash(name);
			const o = await outcome(name, jobId);
			expect(o.job).toMatchObject({ status: "completed", summary: "Output kept." });
			expect(o.types).toEqual(["system:init", "assistant", "system:result"]);
			converged(o);
		});

		it(`${when} a D1 outbox write: the index converges to the agent's record`, async () => {
			useEmulator().enqueue({ text: "Indexed." });
			const name = `k-d1-${when}`;
			await createAgent({ name, schedules: { m: { interval: "1m" } } });
			const killed = await killDuring(name, "DB", "batch", when);
			const jobId = await runUntilKilled(name, killed);
			await afterCrash(name);
			const o = await outcome(name, jobId);
			expect(o.job.status).toBe("completed");
			converged(o);
		});
	}

	it("during an R2 chunk flush of a running job: the final object has each line once, no chunk left", async () => {
		// Over a megabyte of lines is flushed as a chunk while the job waits for an approval.
		const big = "x".repeat(1_100_000);
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "t" } }, text: big }, { text: "Filed." });
		fake("https://tickets.example.test", () => Response.json({ ticket: "T-2" }));
		await createAgent({ name: "k-chunk", schedules: { m: { interval: "1m" } }, tools: [{ ...ticketTool, requires_approval: true }] });
		const killed = await killDuring("k-chunk", "OUTPUT", "put", "after");
		const jobId = await runUntilKilled("k-chunk", killed);
		await afterCrash("k-chunk");
		const approve = await call(`/v1/jobs/${jobId}/approval`, { method: "POST", as: "operate", body: { decision: "approve" } });
		expect(approve.status, await approve.clone().text()).toBe(200);
		await recover("k-chunk");
		const o = await outcome("k-chunk", jobId);
		expect(o.job).toMatchObject({ status: "completed", summary: "Filed." });
		expect(o.types).toEqual(["system:init", "assistant", "tool_use", "system:approval_requested", "system:approval_decided", "tool_result", "assistant", "system:result"]);
		expect((await env.OUTPUT.list({ prefix: `jobs/k-chunk/${jobId}/` })).objects).toEqual([]);
		converged(o);
	});

	it("during delivery: resent once with the same idempotency key, and recorded delivered", async () => {
		useEmulator().enqueue({ text: "Deliver me." });
		await createAgent({ name: "k-deliver", schedules: { m: { interval: "1m" } }, delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		const killed = await killSwitch("k-deliver");
		const keys: string[] = [];
		fake("https://deliver.example.test", (req) => {
			keys.push(req.headers.get("idempotency-key")!);
			return keys.length === 1 ? killed.kill() : Response.json({ ok: true });
		});
		const jobId = await runUntilKilled("k-deliver", killed);
		// The send was counted before it left; its retry waits out the backoff.
		await runInDurableObject(env.AGENT.getByName("k-deliver"), (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE deliveries SET next_at = 0");
		});
		await afterCrash("k-deliver");
		const o = await outcome("k-deliver", jobId);
		expect(o.job).toMatchObject({ status: "completed", delivery: { target: "webhook", outcome: "delivered" } });
		expect(keys).toEqual([`${jobId}:delivery`, `${jobId}:delivery`]);
		const served = (await (await call(`/v1/jobs/${jobId}`)).json()) as JobRecord;
		expect(served.delivery).toEqual({ target: "webhook", outcome: "delivered" });
		converged(o);
	});
});
