import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import type { OutputLine } from "../../durable-objects/agent/runner/output.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";
import { ticketTool } from "../helpers/tools.ts";

const note = (content: string): OutputLine => ({ type: "system", subtype: "note", content });

/** A live job (waiting for an approval) whose output gets `lines` notes of `size` characters after its first 4 lines. */
async function liveJob(name: string, lines: number, size: number) {
	useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
	await createAgent({ name, tools: [ticketTool] });
	const job = await runToRest(name);
	expect(job.status).toBe("approval_pending");
	await append(name, job.id, lines, (i) => `${i} ${"n".repeat(size)}`);
	return job;
}

async function append(name: string, jobId: string, n: number, text: (i: number) => string) {
	await runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO) => {
		for (let i = 0; i < n; i++) AgentDO.appendOutput(instance, jobId, [note(text(i))]);
	});
}

// output-http.ts sqliteBody: a live job's output is read from SQLite 500 lines at a time.
describe("a live job's output", () => {
	it("gives a Range starting past the first 500 lines' bytes from that byte, not from a later batch's start", async () => {
		const job = await liveJob("live-far-range", 1200, 100);
		const whole = new Uint8Array(await (await call(`/v1/jobs/${job.id}/output`)).arrayBuffer());
		const offset = 150_000;
		const length = 20_000;
		expect(whole.length).toBeGreaterThan(offset + length);
		// Past the first batch's bytes: the range starts in a later read.
		const firstBatch = new TextEncoder().encode(new TextDecoder().decode(whole).split("\n").slice(0, 500).join("\n") + "\n").length;
		expect(offset).toBeGreaterThan(firstBatch);
		const res = await call(`/v1/jobs/${job.id}/output`, { headers: { range: `bytes=${offset}-${offset + length - 1}` } });
		expect(res.status).toBe(206);
		// Its last byte's offset, inclusive (RFC 9110 §14.4), of the whole output's size.
		expect(res.headers.get("content-range")).toBe(`bytes ${offset}-${offset + length - 1}/${whole.length}`);
		expect(new TextDecoder().decode(await res.arrayBuffer())).toBe(new TextDecoder().decode(whole.subarray(offset, offset + length)));
	});

	it("gives ?after=A&lines=N as the lines there were when asked, not those written while the answer is read", async () => {
		// 20 lines of 500 KB: more than the answer's pipe holds before it is read.
		const job = await liveJob("live-after-moving", 20, 500_000);
		const res = await call(`/v1/jobs/${job.id}/output?after=2&lines=100000`);
		expect(res.headers.get("x-drover-first-line")).toBe("3");
		await append("live-after-moving", job.id, 3, (i) => `note ${i}`);
		// Lines 3-24: the 2 of the run after line 2, and the 20 notes.
		expect((await res.text()).split("\n").filter(Boolean)).toHaveLength(22);
	});
});

// output-http.ts sqliteBody: a live download that carries on from R2 once the job's output moved there
// reads it as required: an object gone (retention deleting it, or anything else) cuts the download.
describe("a live job's download whose output moves to R2 and is then gone from it", () => {
	it("is a broken transfer, not a clean end that looks like the whole output", async () => {
		const name = "moved-then-gone";
		const job = await liveJob(name, 1500, 4000);
		useEmulator().enqueue({ text: "Done." });
		const res = await call(`/v1/jobs/${job.id}/output`);
		const reader = res.body!.getReader();
		expect((await reader.read()).done).toBe(false);
		// The job ends meanwhile: its output is put to R2 and its lines leave SQLite; then the object goes.
		expect((await call(`/v1/jobs/${job.id}/approval`, { method: "POST", as: "operate", body: { decision: "deny" } })).status).toBe(200);
		await settle(name);
		const key = `jobs/${name}/${job.id}.jsonl`;
		expect(await env.OUTPUT.head(key)).not.toBeNull();
		await env.OUTPUT.delete(key);
		const rest = (async () => {
			for (;;) if ((await reader.read()).done) return "ended";
		})();
		await expect(rest).rejects.toThrow();
	});
});
