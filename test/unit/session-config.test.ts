import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { carryWindow, estimateTokens, sessionExpiry, sessionModeOf } from "../../durable-objects/agent/runner/persistent.ts";
import type { MessageParam } from "../../src/agent/contracts.ts";
import { definitionRevision, parseFleet } from "../../src/config/fleet.ts";
import { ConfigError } from "../../src/errors.ts";

function fleet(agent: Record<string, unknown>) {
	return parseFleet(stringify({ version: 1, agents: [{ name: "researcher", prompt: "Go on.", ...agent }] }));
}

function issues(agent: Record<string, unknown>): { path: string; message: string }[] {
	try {
		fleet(agent);
	} catch (error) {
		expect(error).toBeInstanceOf(ConfigError);
		return (error as ConfigError).issues;
	}
	throw new Error("expected the fleet to be refused");
}

describe("session settings in fleet.yaml", () => {
	it("take herdctl's modes, at the agent and per schedule, with max_context_tokens defaulted", () => {
		const agent = fleet({
			session: { mode: "persistent", idle_timeout: "24h", timeout: "7d" },
			schedules: { review: { cron: "0 9 * * 1", session: { mode: "fresh_per_job" } }, work: { interval: "30m" } },
		}).agents[0]!;
		expect(agent.session).toEqual({ mode: "persistent", idle_timeout: "24h", timeout: "7d", max_context_tokens: 50_000 });
		expect(sessionModeOf(agent, { trigger_type: "schedule", schedule: "review" })).toBe("fresh_per_job");
		expect(sessionModeOf(agent, { trigger_type: "schedule", schedule: "work" })).toBe("persistent");
		expect(sessionModeOf(agent, { trigger_type: "manual", schedule: null })).toBe("persistent");
		// A continue or fork names its own conversation.
		expect(sessionModeOf(agent, { trigger_type: "continue", schedule: null })).toBeNull();
		expect(sessionModeOf(fleet({}).agents[0]!, { trigger_type: "manual", schedule: null })).toBe("fresh_per_job");
	});

	it("leave an agent without them as it was: no session key, the same revision", async () => {
		const plain = fleet({}).agents[0]!;
		expect("session" in plain).toBe(false);
		expect(await definitionRevision(plain)).toBe(await definitionRevision(fleet({}).agents[0]!));
		expect(await definitionRevision(fleet({ session: { mode: "persistent" } }).agents[0]!)).not.toBe(await definitionRevision(plain));
	});

	it("refuse per_channel by name, typos, and durations out of range, each at its path", () => {
		expect(issues({ session: { mode: "per_channel" } })).toEqual([
			{ path: "agents[0].session.mode", message: "per_channel needs chat channels, which drover has no trigger for; use fresh_per_job or persistent" },
		]);
		expect(issues({ session: { mode: "forever" } })).toEqual([{ path: "agents[0].session.mode", message: 'session mode must be "fresh_per_job" or "persistent"' }]);
		expect(issues({ session: { mode: "persistent", idle_timout: "1h" } })).toEqual([{ path: "agents[0].session.idle_timout", message: 'unknown key (did you mean "idle_timeout"?)' }]);
		expect(issues({ session: { idle_timeout: "30s" } })).toEqual([{ path: "agents[0].session.idle_timeout", message: 'idle_timeout "30s" must be a duration from 1m to 365d, e.g. "24h" or "7d"' }]);
		expect(issues({ session: { timeout: "soon" } })).toEqual([{ path: "agents[0].session.timeout", message: 'timeout "soon" must be a duration from 1m to 365d, e.g. "24h" or "7d"' }]);
		expect(issues({ session: { max_context_tokens: 10 } }).map((i) => i.path)).toEqual(["agents[0].session.max_context_tokens"]);
		expect(issues({ schedules: { a: { interval: "1h", session: { mode: "persistent", timeout: "1h" } } } })).toEqual([
			{ path: "agents[0].schedules.a.session.timeout", message: "unknown key; allowed: mode" },
		]);
	});
});

describe("a persistent session's expiry", () => {
	const hour = 3_600_000;
	const session = { sessionId: "ses-x", jobId: "job-x", startedAt: 0, activeAt: 10 * hour, endedBy: null };
	it("is the earlier of timeout (from its start) and idle_timeout (from its last completed run)", () => {
		const agent = (s: Record<string, unknown>) => fleet({ session: { mode: "persistent", ...s } }).agents[0]!;
		expect(sessionExpiry(agent({}), session)).toBeNull();
		expect(sessionExpiry(agent({ idle_timeout: "2h" }), session)).toEqual({ at: 12 * hour, by: "idle_timeout 2h, from its last completed run" });
		expect(sessionExpiry(agent({ timeout: "11h", idle_timeout: "2h" }), session)).toEqual({ at: 11 * hour, by: "timeout 11h, from its first run's start" });
	});
});

describe("a message's estimated size", () => {
	it("is 4 ASCII characters a token, 2 Cyrillic (or Greek, Arabic…) ones, and 1 for CJK and emoji, so a session in any language stays within its bound", () => {
		expect(estimateTokens("word ".repeat(800))).toBe(1_000);
		expect(estimateTokens("слово".repeat(400))).toBe(1_000);
		expect(estimateTokens("東京都".repeat(333) + "!")).toBe(1_000);
		expect(estimateTokens("😀".repeat(1_000))).toBe(1_000);
		expect(estimateTokens([{ type: "text", text: "日本" }])).toBe(Math.ceil((JSON.stringify([{ type: "text", text: "" }]).length + 8) / 4));
	});
});

describe("the carried window", () => {
	const user = (chars: number): MessageParam => ({ role: "user", content: "u".repeat(chars) });
	const answer = (chars: number): MessageParam => ({ role: "assistant", content: [{ type: "text", text: "a".repeat(chars) }] });
	const toolUse: MessageParam = { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "http_fetch", input: {} }] };
	const toolResult: MessageParam = { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "r".repeat(400) }] };

	it("keeps everything that fits, the prompt to come included", () => {
		const messages = [user(400), answer(100)];
		const size = estimateTokens(messages[0]!.content) + estimateTokens(messages[1]!.content);
		expect(carryWindow(messages, size + 100, 100)).toEqual({ left: 0, results: 0, carried: messages });
		expect(carryWindow(messages, size + 99, 100)).toBeNull();
	});

	it("leaves out the oldest whole runs, never starting at a tool result", () => {
		// Run 1: prompt, tool call, its result, answer. Run 2: prompt, answer.
		const messages = [user(4000), toolUse, toolResult, answer(40), user(400), answer(40)];
		expect(carryWindow(messages, 10_000, 0)?.left).toBe(0);
		// Too big for run 1 whole: the tool result (a user turn) is passed over for run 2's prompt.
		expect(carryWindow(messages, 400, 0)).toEqual({ left: 4, results: 0, carried: messages.slice(4) });
		expect(carryWindow(messages, 20, 0)).toBeNull();
	});

	it("begins at a run whose prompt joined the tool results of a run that ended on an empty answer, with the prompt alone", () => {
		// Run 1: prompt, tool call, its result, an empty answer (left out). Run 2: its prompt joined
		// run 1's results (as a continue's does), then its answer.
		const prompt = { type: "text" as const, text: "Two." };
		const joined: MessageParam = { role: "user", content: [...(toolResult.content as object[]), prompt] as MessageParam["content"] };
		const messages = [user(4000), toolUse, joined, answer(40)];
		expect(carryWindow(messages, 10_000, 0)?.left).toBe(0);
		// The tool result cut from the first carried message is counted, as the messages before it are.
		expect(carryWindow(messages, 400, 0)).toEqual({ left: 2, results: 1, carried: [{ role: "user", content: [prompt] }, answer(40)] });
		expect(carryWindow(messages, 10, 0)).toBeNull();
	});
});
