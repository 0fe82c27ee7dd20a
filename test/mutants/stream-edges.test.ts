import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { serveStream } from "../../durable-objects/agent/output-http.ts";
import type { OutputLine } from "../../durable-objects/agent/runner/output.ts";
import { MAX_STREAMS_PER_JOB, StreamHub } from "../../durable-objects/agent/streams.ts";
import type { SseEvent } from "../../src/shared/sse.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { ticketTool } from "../helpers/tools.ts";
import { followEvents as follow } from "../helpers/sse.ts";

const note = (content: string): OutputLine => ({ type: "system", subtype: "note", content });

/** A job held open waiting for an approval, with its first 4 lines written. */
async function waitingJob(name: string) {
	useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
	fake("https://tickets.example.test", () => Response.json({ id: 7 }));
	await createAgent({ name, tools: [ticketTool] });
	const job = await runToRest(name);
	expect(job.status).toBe("approval_pending");
	return job;
}


const hasLine = (n: number) => (es: SseEvent[]) => es.some((e) => e.event === "line" && e.id === String(n));

// streams.ts: a status event is sent when the job's revision changes, not with every line.
describe("a live stream's status events", () => {
	it("come once a revision: lines written while the job's record stands still carry none", async () => {
		const name = "sse-status-once";
		const job = await waitingJob(name);
		const stream = follow(await call(`/v1/jobs/${job.id}/stream`));
		expect(await stream.until((es) => es.some((e) => e.event === "status"))).toBe(true);
		const seen = stream.events.length;
		for (const [n, text] of [[5, "fifth"], [6, "sixth"]] as const) {
			await runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO) => AgentDO.appendOutput(instance, job.id, [note(text)]));
			expect(await stream.until(hasLine(n))).toBe(true);
		}
		expect(stream.events.slice(seen).map((e) => e.event)).toEqual(["line", "line"]);
		await stream.cancel();
	});
});

// streams.ts / README: a stream refused at its job's cap says to come back in 30 s.
describe("a stream refused at the cap", () => {
	it("answers 429 with Retry-After: 30, as README says", async () => {
		const name = "sse-retry-30";
		const job = await waitingJob(name);
		await runInDurableObject(env.AGENT.getByName(name), async (_i: AgentDO, state) => {
			const hub = new StreamHub(state.storage.sql, () => null);
			const open = Array.from({ length: MAX_STREAMS_PER_JOB }, () => hub.subscribe(job.id, 0));
			const refused = serveStream(state.storage.sql, hub, job.id, new Request(`https://drover.test/v1/jobs/${job.id}/stream`));
			expect(refused.status).toBe(429);
			expect(refused.headers.get("retry-after")).toBe("30");
			await Promise.all(open.map((s) => s.cancel()));
		});
	});
});
