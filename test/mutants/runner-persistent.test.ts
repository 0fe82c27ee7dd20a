// A persistent run's decision to carry its session on or start afresh (durable-objects/agent/runner/
// persistent.ts), where a mutation walk found the suite blind: a session is over at its expires_at
// itself, not only past it (GET …/sessions/current already says expired then, and a run there starts
// a new one); and a prompt over max_context_tokens by itself is said to be, not blamed on the session.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { outputOf, runToRest } from "../helpers/jobs.ts";

afterEach(() => vi.useRealTimers());

const sessionLine = async (agent: string, jobId: string) => (await outputOf(agent, jobId)).find((l) => l.type === "system" && l.subtype === "session");

describe("a persistent session at the very millisecond its timeout ends", () => {
	it("is expired: a run then starts a new session", async () => {
		const START = Date.parse("2031-06-02T08:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: START });
		const emulator = useEmulator();
		emulator.enqueue({ text: "One." }, { text: "Two." });
		await createAgent({ name: "expires-on-the-dot", session: { mode: "persistent", timeout: "2h" } });
		const first = await runToRest("expires-on-the-dot", "First.");
		vi.setSystemTime(Date.parse(first.started_at!) + 2 * 3600_000);
		const now = (await (await call("/v1/agents/expires-on-the-dot/sessions/current")).json()) as Record<string, unknown>;
		expect(now).toMatchObject({ expires_at: new Date(Date.now()).toISOString(), expired: true, continues: false });
		const second = await runToRest("expires-on-the-dot", "Second.");
		expect(second).toMatchObject({ status: "completed", session_id: `ses-${second.id}`, continued_from: null });
		expect(emulator.requests.at(-1)!.messages).toHaveLength(1);
		expect((await sessionLine("expires-on-the-dot", second.id))?.content).toContain(`not continued: it expired at ${new Date(Date.now()).toISOString()}`);
	});
});

describe("a persistent run whose prompt alone is over max_context_tokens", () => {
	it("starts a new session, saying its prompt is too large by itself", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "A." }, { text: "B." });
		await createAgent({ name: "prompt-alone-over", session: { mode: "persistent", max_context_tokens: 1000 } });
		await runToRest("prompt-alone-over", "Short.");
		// 4 characters a token: 1,200 tokens.
		const second = await runToRest("prompt-alone-over", "4".repeat(4800));
		expect(second).toMatchObject({ status: "completed", session_id: `ses-${second.id}`, continued_from: null });
		expect((await sessionLine("prompt-alone-over", second.id))?.content).toMatch(/not continued: this run's prompt alone \(about \d+ tokens\) is over max_context_tokens \(1000\); this run starts a new one$/);
	});
});
