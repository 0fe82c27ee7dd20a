// A cancel that lands while one of a turn's tool calls runs (durable-objects/agent/runner/tool-turn.ts),
// where a mutation walk found the suite blind: the call under way finishes (its effect is then known),
// but the turn's other calls are not made, and the job ends cancelled. A forced cancel cuts the call off
// instead, and the job's job.finished line still names who cancelled it (`by`), though the loop adds
// the call it cut off to the cancel's reason. A plain cancel asked while a call runs past the job's
// deadline ends it cancelled, as asked, not timed out.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAgent, settle } from "../helpers/agents.ts";
import { gate, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, trigger } from "../helpers/jobs.ts";
import { captureLogs } from "../helpers/logs.ts";
import { fake } from "../helpers/outbound.ts";

afterEach(() => {
	vi.restoreAllMocks();
	vi.useRealTimers();
});

describe("a plain cancel while the first of a turn's two calls runs", () => {
	it("lets that call finish and makes none of the others", async () => {
		const emulator = useEmulator();
		emulator.enqueue(
			{ tool_use: [{ name: "http_fetch", input: { url: "https://slow.example.test/first" } }, { name: "http_fetch", input: { url: "https://slow.example.test/second" } }] },
			{ text: "never asked" },
		);
		// The first call waits until the trigger has answered with the job's id, then the job is cancelled.
		const { promise: triggered, open } = gate();
		let jobId = "";
		const fetched: string[] = [];
		const cancels: number[] = [];
		fake("https://slow.example.test", async (req) => {
			fetched.push(new URL(req.url).pathname);
			if (fetched.length === 1) {
				await triggered;
				cancels.push((await call(`/v1/jobs/${jobId}/cancel`, { method: "POST", as: "operate", body: { reason: "enough" } })).status);
			}
			return new Response("a page");
		});
		await createAgent({ name: "cancel-mid-turn", tools: [{ type: "http_fetch", allow_hosts: ["slow.example.test"] }] });
		const job = await trigger("cancel-mid-turn");
		jobId = job.id;
		open();
		await settle("cancel-mid-turn");
		expect(cancels).toEqual([200]);
		expect(fetched).toEqual(["/first"]);
		expect(await jobOf("cancel-mid-turn", job.id)).toMatchObject({ status: "cancelled", tool_calls: { made: 1, failed: 0 } });
		expect(emulator.requests).toHaveLength(1);
	});
});

describe("a forced cancel that cuts off a tool call in flight", () => {
	it("ends the job cancelled, its job.finished naming who cancelled it", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "http_fetch", input: { url: "https://hung.example.test/" } } }, { text: "never asked" });
		const { promise: reached, open } = gate();
		fake("https://hung.example.test", (req) => {
			open();
			return new Promise<Response>((_resolve, reject) => req.signal.addEventListener("abort", () => reject(new Error("aborted"))));
		});
		await createAgent({ name: "forced-mid-call", tools: [{ type: "http_fetch", allow_hosts: ["hung.example.test"] }] });
		const logs = captureLogs();
		const job = await trigger("forced-mid-call");
		await reached;
		expect((await call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "operate", body: { reason: "gateway hung", force: true } })).status).toBe(200);
		await settle("forced-mid-call");
		expect(await jobOf("forced-mid-call", job.id)).toMatchObject({ status: "cancelled", tool_calls: { made: 1, failed: 1 } });
		expect(logs.filter((l) => l.event === "job.finished" && l.job_id === job.id)).toEqual([expect.objectContaining({ status: "cancelled", by: "operator" })]);
		expect(emulator.requests).toHaveLength(1);
	});
});

describe("a plain cancel asked while a tool call runs on past the job's deadline", () => {
	it("ends the job cancelled, as asked, not timed out", async () => {
		const start = Date.parse("2031-08-01T09:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: start });
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "http_fetch", input: { url: "https://slow.example.test/" } } }, { text: "never asked" });
		const { promise: triggered, open } = gate();
		let jobId = "";
		const cancels: number[] = [];
		fake("https://slow.example.test", async () => {
			await triggered;
			cancels.push((await call(`/v1/jobs/${jobId}/cancel`, { method: "POST", as: "operate", body: { reason: "enough" } })).status);
			// The call then takes the rest of the job's 10 minutes, and a millisecond more.
			vi.setSystemTime(start + 10 * 60_000 + 1);
			return new Response("a page");
		});
		await createAgent({ name: "cancel-then-deadline", timeout: "10m", tools: [{ type: "http_fetch", allow_hosts: ["slow.example.test"] }] });
		const job = await trigger("cancel-then-deadline");
		jobId = job.id;
		open();
		await settle("cancel-then-deadline");
		expect(cancels).toEqual([200]);
		expect(await jobOf("cancel-then-deadline", job.id)).toMatchObject({ status: "cancelled", exit_reason: "cancelled", tool_calls: { made: 1, failed: 0 } });
		expect(emulator.requests).toHaveLength(1);
	});
});
