// A cancel that lands while one of a turn's tool calls runs (durable-objects/agent/runner/tool-turn.ts),
// where a mutation walk found the suite blind: the call under way finishes (its effect is then known),
// but the turn's other calls are not made, and the job ends cancelled.
import { describe, expect, it } from "vitest";
import { createAgent, settle } from "../helpers/agents.ts";
import { gate, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";

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
