import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { ALARM_BUDGET_MS } from "../../durable-objects/agent/pass-budget.ts";
import { TOOL_TIMEOUT_MS } from "../../src/agent/tools/http-common.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { jobOf, outputOf, trigger } from "../helpers/jobs.ts";
import { fake, outboundLog } from "../helpers/outbound.ts";
import { agentWithVars } from "../helpers/vars.ts";

type Internals = { passes: { working: Promise<void> | null } };

/** Waits for the pass the object is running (a trigger starts one at once), and only that one. */
async function passUnderWay(agent: string): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), async (instance: AgentDO) => {
		await (instance as unknown as Internals).passes.working;
	});
}

const alarmOf = (agent: string) => runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => state.storage.getAlarm());

afterEach(() => {
	vi.useRealTimers();
});

describe("an alarm run's budget", () => {
	it("ends a pass within its budget and one tool call; the next alarm run makes the turn's other calls, each once", async () => {
		// Far from the real clock, so the alarms the pass sets do not fire on their own mid-test.
		const start = Date.parse("2031-05-01T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: start });
		const calls = 40;
		const made = new Map<string, number>();
		// Each call takes the whole of its 30 s.
		fake("https://slow.example.test", (req) => {
			const path = new URL(req.url).pathname;
			made.set(path, (made.get(path) ?? 0) + 1);
			vi.setSystemTime(Date.now() + TOOL_TIMEOUT_MS);
			return new Response(`answer ${path}`);
		});
		const emulator = useEmulator();
		emulator.enqueue(
			{ tool_use: Array.from({ length: calls }, (_, i) => ({ name: "http_fetch", input: { url: `https://slow.example.test/${i}` } })) },
			{ text: "All checked." },
		);
		await createAgent({ name: "long-turn", tools: [{ type: "http_fetch", allow_hosts: ["slow.example.test"] }], timeout: "2h" });
		const job = await trigger("long-turn");
		await passUnderWay("long-turn");

		// The pass stopped starting calls once its budget was spent: it ended within the budget and one call.
		const ended = Date.now();
		expect(ended - start).toBeGreaterThanOrEqual(ALARM_BUDGET_MS);
		expect(ended - start).toBeLessThan(ALARM_BUDGET_MS + TOOL_TIMEOUT_MS);
		const first = made.size;
		expect(first).toBeLessThan(calls);
		expect((await jobOf("long-turn", job.id)).status).toBe("running");
		// The rest is due at once, for a fresh alarm run to take up.
		expect(await alarmOf("long-turn")).toBeLessThanOrEqual(ended);

		await settle("long-turn");
		const done = await jobOf("long-turn", job.id);
		expect(done).toMatchObject({ status: "completed", summary: "All checked.", tool_calls: { made: calls, failed: 0 } });
		// Every call made exactly once, and the model read each result once, in the order it asked.
		expect([...made.values()]).toEqual(Array(calls).fill(1));
		const results = emulator.requests[1]!.messages!.at(-1)!.content as { type: string; tool_use_id: string; content: string }[];
		expect(results.map((r) => r.content)).toEqual(Array.from({ length: calls }, (_, i) => expect.stringContaining(`answer /${i}`)));
		const lines = await outputOf("long-turn", job.id);
		expect(lines.filter((l) => l.type === "tool_result")).toHaveLength(calls);
		expect(emulator.requests).toHaveLength(2);
	});

	it("hands over to a fresh alarm run at 80 % of SUBREQUEST_LIMIT; the job still completes, each tool call made once", async () => {
		const start = Date.parse("2031-05-02T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: start });
		const made = new Map<string, number>();
		fake("https://status.example.test", (req) => {
			const path = new URL(req.url).pathname;
			made.set(path, (made.get(path) ?? 0) + 1);
			return new Response(`fine ${path}`);
		});
		const turns = 12;
		const emulator = useEmulator();
		emulator.enqueue(...Array.from({ length: turns }, (_, i) => ({ tool_use: { name: "http_fetch", input: { url: `https://status.example.test/${i}` } } })), { text: "All fine." });
		await createAgent({ name: "chatty", tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"] }], timeout: "1h" });
		await agentWithVars("chatty", { SUBREQUEST_LIMIT: "10" });
		const before = outboundLog.length;
		const job = await trigger("chatty");
		await passUnderWay("chatty");

		// 25 requests in all (13 model calls, 12 tool calls): the pass stopped at 8 of its 10.
		expect(outboundLog.length - before).toBeLessThanOrEqual(8);
		expect((await jobOf("chatty", job.id)).status).toBe("running");
		expect(await alarmOf("chatty")).toBeLessThanOrEqual(Date.now());

		await settle("chatty");
		expect(await jobOf("chatty", job.id)).toMatchObject({ status: "completed", summary: "All fine.", tool_calls: { made: turns, failed: 0 } });
		expect([...made.values()]).toEqual(Array(turns).fill(1));
		expect(emulator.requests).toHaveLength(turns + 1);
	});
});
