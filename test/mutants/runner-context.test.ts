// Clearing old tool results from the conversation (durable-objects/agent/runner/context.ts), where a
// mutation walk found the suite blind: a result shorter than the note that would replace it is kept
// as it is (the note would only make the conversation longer), while the large ones around it go; and
// clearing stops once the results are down to half the budget, inside a turn's results as between turns.
import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { outputOf, runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";

describe("a small tool result among large ones past the conversation's budget", () => {
	it("is sent to the model whole while the large ones before it are cleared", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", (req) => new Response(new URL(req.url).pathname === "/small" ? "ok" : "x".repeat(150_000)));
		emulator.enqueue({ tool_use: { name: "http_fetch", input: { url: "https://status.example.test/small" } } });
		for (let i = 0; i < 4; i++) emulator.enqueue({ tool_use: { name: "http_fetch", input: { url: `https://status.example.test/big${i}` } } });
		emulator.enqueue({ text: "Read them all." });
		await createAgent({ name: "small-kept", max_turns: 10, tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"] }] });
		const job = await runToRest("small-kept");
		expect(job.status).toBe("completed");
		const results = emulator.requests
			.at(-1)!
			.messages!.flatMap((m) => (Array.isArray(m.content) ? (m.content as { type: string; content: string }[]) : []))
			.filter((b) => b.type === "tool_result");
		expect(results.map((b) => b.content.startsWith("[drover: tool result cleared"))).toEqual([false, true, true, true, false]);
		const small = (await outputOf("small-kept", job.id)).find((l) => l.type === "tool_result")!;
		expect(results[0]!.content).toBe(small.result);
		expect((await outputOf("small-kept", job.id)).find((l) => l.subtype === "context_cleared")).toMatchObject({ results: 3 });
	});
});

describe("a turn's results, clearing which gets the conversation under half its budget partway", () => {
	it("clears that turn's results only up to there: the later ones are sent to the model whole", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", (req) => new Response("x".repeat(90_000)));
		const fetch = (path: string) => ({ name: "http_fetch", input: { url: `https://status.example.test/${path}` } });
		// 360,000 characters of results after the second turn, within the 400,000 budget; the third's pass
		// it. a, b and c cleared leave about 180,000, under half of it: d stays.
		emulator.enqueue({ tool_use: [fetch("a"), fetch("b")] }, { tool_use: [fetch("c"), fetch("d")] }, { tool_use: fetch("e") }, { text: "Read them all." });
		await createAgent({ name: "half-within-turn", max_turns: 10, tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"] }] });
		const job = await runToRest("half-within-turn");
		expect(job.status).toBe("completed");
		const results = emulator.requests
			.at(-1)!
			.messages!.flatMap((m) => (Array.isArray(m.content) ? (m.content as { type: string; content: string }[]) : []))
			.filter((b) => b.type === "tool_result");
		expect(results.map((b) => b.content.startsWith("[drover: tool result cleared"))).toEqual([true, true, true, false, false]);
		expect((await outputOf("half-within-turn", job.id)).find((l) => l.subtype === "context_cleared")).toMatchObject({ results: 3 });
	});
});
