import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import type { JobRecord } from "../../src/jobs/model.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { jobOf, outputOf, runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { tick } from "../helpers/ticks.ts";
import { ticketTool } from "../helpers/tools.ts";

interface CurrentSession {
	agent: string;
	mode: string;
	session_id: string | null;
	last_job: string | null;
	started_at: string | null;
	active_at: string | null;
	expires_at: string | null;
	expired: boolean;
	max_context_tokens: number;
}

afterEach(() => vi.useRealTimers());

const persistent = (name: string, session: Record<string, unknown> = {}, more: Record<string, unknown> = {}) =>
	createAgent({ name, session: { mode: "persistent", ...session }, ...more });

async function current(agent: string): Promise<CurrentSession> {
	const res = await call(`/v1/agents/${agent}/sessions/current`);
	expect(res.status, await res.clone().text()).toBe(200);
	return res.json();
}

/** The texts of a model request's messages, role first: what the model was shown of earlier runs. */
function shown(emulator: ReturnType<typeof useEmulator>, request = -1): string[] {
	const messages = emulator.requests.at(request)?.messages ?? [];
	return messages.map((m) => {
		const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
		return `${m.role}: ${blocks.map((b) => (b.type === "text" ? (b as { text: string }).text : `[${b.type}]`)).join(" | ")}`;
	});
}

async function sessionLine(agent: string, job: JobRecord): Promise<Record<string, unknown> | undefined> {
	return (await outputOf(agent, job.id)).find((l) => l.type === "system" && l.subtype === "session");
}

describe("session.mode: persistent", () => {
	it("a run continues the last completed run's conversation, in its session", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "Noted: the API has 3 endpoints." }, { text: "Now 4: one was added." });
		await persistent("keeper", { idle_timeout: "24h" });
		const first = await runToRest("keeper", "Count the endpoints.");
		expect(first).toMatchObject({ status: "completed", session_id: `ses-${first.id}`, continued_from: null });
		expect(await sessionLine("keeper", first)).toMatchObject({ content: "persistent session: none yet, so this run starts one", session_id: `ses-${first.id}` });
		const after1 = await current("keeper");
		expect(after1).toMatchObject({ agent: "keeper", mode: "persistent", session_id: `ses-${first.id}`, last_job: first.id, expired: false, continues: true, max_context_tokens: 50_000 });
		expect(Date.parse(after1.expires_at!) - Date.parse(after1.active_at!)).toBe(24 * 3_600_000);

		const second = await runToRest("keeper", "Count them again.");
		expect(second).toMatchObject({ status: "completed", session_id: first.session_id, continued_from: first.id, trigger_type: "manual" });
		// The model saw the first run whole, then the new prompt.
		expect(shown(emulator)).toEqual(["user: Count the endpoints.", "assistant: Noted: the API has 3 endpoints.", "user: Count them again."]);
		expect(await sessionLine("keeper", second)).toMatchObject({
			content: `persistent session ${first.session_id} continued from ${first.id} (2 messages carried)`,
			continued_from: first.id,
		});
		expect(await current("keeper")).toMatchObject({ session_id: first.session_id, last_job: second.id, started_at: after1.started_at });

		// The agent's list marks it; its jobs' session lists both runs.
		const listed = (await (await call("/v1/agents/keeper/sessions")).json()) as { sessions: { session_id: string; persistent: boolean }[] };
		expect(listed.sessions).toMatchObject([{ session_id: first.session_id, persistent: true }]);
		const session = (await (await call(`/v1/sessions/${first.session_id}`)).json()) as { job_count: number; jobs: { id: string; continued_from: string | null }[] };
		expect(session.jobs.map((j) => [j.id, j.continued_from])).toEqual([
			[first.id, null],
			[second.id, first.id],
		]);
	});

	it("a run that fails leaves the session at the last completed run", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "First answer." }, { error: 400 }, { text: "Third answer." });
		await persistent("keeper-fail");
		const first = await runToRest("keeper-fail", "One.");
		const failed = await runToRest("keeper-fail", "Two.");
		expect(failed).toMatchObject({ status: "failed", session_id: first.session_id, continued_from: first.id });
		expect((await current("keeper-fail")).last_job).toBe(first.id);

		const third = await runToRest("keeper-fail", "Three.");
		expect(third).toMatchObject({ status: "completed", continued_from: first.id });
		expect(shown(emulator)).toEqual(["user: One.", "assistant: First answer.", "user: Three."]);
	});

	it("carries a run's tool calls and results, and a continue of the session moves it on; a fork does not", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response("all green"));
		emulator.enqueue(
			{ tool_use: { name: "http_fetch", input: { url: "https://status.example.test/" } } },
			{ text: "Green." },
			{ text: "Still green." },
			{ text: "A fork's answer." },
			{ text: "Third run." },
		);
		await persistent("keeper-tools", {}, { tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"] }] });
		const first = await runToRest("keeper-tools", "Check.");
		const res = await call(`/v1/jobs/${first.id}/continue`, { method: "POST", as: "operate", body: { prompt: "And now?" } });
		const next = (await res.json()) as JobRecord;
		await settle("keeper-tools");
		expect((await current("keeper-tools")).last_job).toBe(next.id);
		const fork = (await (await call(`/v1/jobs/${next.id}/fork`, { method: "POST", as: "operate", body: { prompt: "Elsewhere?" } })).json()) as JobRecord;
		await settle("keeper-tools");
		expect(await jobOf("keeper-tools", fork.id)).toMatchObject({ status: "completed", session_id: `ses-${fork.id}` });
		expect((await current("keeper-tools")).last_job).toBe(next.id);

		const third = await runToRest("keeper-tools", "Again.");
		expect(third).toMatchObject({ status: "completed", session_id: first.session_id, continued_from: next.id });
		expect(shown(emulator)).toEqual([
			"user: Check.",
			"assistant: [tool_use]",
			"user: [tool_result]",
			"assistant: Green.",
			"user: And now?",
			"assistant: Still green.",
			"user: Again.",
		]);
	});

	it("starts a fresh session once the last one expires, saying why", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "One." }, { text: "Two." });
		await persistent("keeper-idle", { idle_timeout: "1h" });
		const first = await runToRest("keeper-idle", "First.");
		await runInDurableObject(env.AGENT.getByName("keeper-idle"), (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE persistent_session SET active_at = active_at - 3600001");
		});
		const stale = await current("keeper-idle");
		expect(stale.expired).toBe(true);

		const second = await runToRest("keeper-idle", "Second.");
		expect(second).toMatchObject({ status: "completed", session_id: `ses-${second.id}`, continued_from: null });
		expect(shown(emulator)).toEqual(["user: Second."]);
		expect(await sessionLine("keeper-idle", second)).toMatchObject({
			content: `persistent session ${first.session_id} not continued: it expired at ${stale.expires_at} (idle_timeout 1h, from its last completed run); this run starts a new one`,
		});
		expect(await current("keeper-idle")).toMatchObject({ session_id: second.session_id, last_job: second.id, expired: false });
	});

	it("ends a session at its timeout counted from its first run's start, however recently a run moved it on", async () => {
		// herdctl's session expiry: timeout is the session's whole life, idle_timeout its quiet spell. A
		// run 90 minutes in continues the session and moves it on; a run at 130 minutes, 40 after it,
		// finds it past its 2 h and starts a new one.
		const START = Date.parse("2025-05-06T08:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: START });
		const emulator = useEmulator();
		emulator.enqueue({ text: "One." }, { text: "Two." }, { text: "Three." });
		await persistent("keeper-lifetime", { timeout: "2h" });
		const first = await runToRest("keeper-lifetime", "First.");
		vi.setSystemTime(START + 90 * 60_000);
		const second = await runToRest("keeper-lifetime", "Second.");
		expect(second).toMatchObject({ status: "completed", session_id: first.session_id, continued_from: first.id });
		expect(await current("keeper-lifetime")).toMatchObject({ last_job: second.id, started_at: first.started_at, expires_at: "2025-05-06T10:00:00.000Z", expired: false });

		vi.setSystemTime(START + 130 * 60_000);
		expect(await current("keeper-lifetime")).toMatchObject({ expired: true, continues: false });
		const third = await runToRest("keeper-lifetime", "Third.");
		expect(third).toMatchObject({ status: "completed", session_id: `ses-${third.id}`, continued_from: null });
		expect(shown(emulator)).toEqual(["user: Third."]);
		expect(await sessionLine("keeper-lifetime", third)).toMatchObject({
			content: `persistent session ${first.session_id} not continued: it expired at 2025-05-06T10:00:00.000Z (timeout 2h, from its first run's start); this run starts a new one`,
		});
	});

	it("starts fresh when the system prompt changed, but carries on through other changes", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "A." }, { text: "B." }, { text: "C." });
		await persistent("keeper-change", {}, { system_prompt: "You count endpoints." });
		const first = await runToRest("keeper-change", "One.");
		const put = (body: Record<string, unknown>) =>
			call("/v1/agents/keeper-change", { method: "PUT", as: "admin", body: { name: "keeper-change", prompt: "Do the thing.", session: { mode: "persistent" }, ...body } });
		expect((await put({ system_prompt: "You count endpoints.", max_turns: 5 })).status).toBe(200);
		const second = await runToRest("keeper-change", "Two.");
		expect(second.continued_from).toBe(first.id);
		// Carried on: the model was shown the first run, then the new prompt.
		expect(shown(emulator)).toEqual(["user: One.", "assistant: A.", "user: Two."]);

		expect((await put({ system_prompt: "You audit endpoints." })).status).toBe(200);
		// Said before the run, too.
		expect(await current("keeper-change")).toMatchObject({
			session_id: first.session_id,
			continues: false,
			not_continued_because: `the agent's system prompt or tools changed since its last completed run ${second.id}, and a session never resumes under different instructions`,
		});
		const third = await runToRest("keeper-change", "Three.");
		expect(third).toMatchObject({ status: "completed", session_id: `ses-${third.id}`, continued_from: null });
		expect(shown(emulator)).toEqual(["user: Three."]);
		expect((await sessionLine("keeper-change", third))?.content).toBe(
			`persistent session ${first.session_id} not continued: the agent's system prompt or tools changed since its last completed run ${second.id}, and a session never resumes under different instructions; this run starts a new one`,
		);
	});

	it("leaves the oldest whole runs out to stay within max_context_tokens", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "A." }, { text: "B." }, { text: "C." }, { text: "D." });
		await persistent("keeper-window", { max_context_tokens: 1000 });
		// 4 characters a token: run 1's prompt is 600 tokens, run 2's 300, run 3's 100.
		const first = await runToRest("keeper-window", "1".repeat(2400));
		const second = await runToRest("keeper-window", "2".repeat(1200));
		expect(second.continued_from).toBe(first.id);
		expect(emulator.requests.at(-1)!.messages).toHaveLength(3);
		const third = await runToRest("keeper-window", "3".repeat(400));
		expect(third).toMatchObject({ status: "completed", session_id: first.session_id, continued_from: second.id });
		expect(shown(emulator)).toEqual([`user: ${"2".repeat(1200)}`, "assistant: B.", `user: ${"3".repeat(400)}`]);
		expect((await sessionLine("keeper-window", third))?.content).toBe(
			`persistent session ${first.session_id} continued from ${second.id} (2 messages carried; its 2 oldest messages left out to stay within max_context_tokens (1000))`,
		);
		// A prompt over the bound by itself starts afresh.
		const fourth = await runToRest("keeper-window", "4".repeat(4000));
		expect(fourth).toMatchObject({ status: "completed", session_id: `ses-${fourth.id}` });
		expect((await sessionLine("keeper-window", fourth))?.content).toContain("is over max_context_tokens (1000)");
	});

	it("leaves out a run that ended on an empty answer, beginning at the next run's prompt", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response("x".repeat(3000)));
		emulator.enqueue({ tool_use: { name: "http_fetch", input: { url: "https://status.example.test/" } } }, { text: "" }, { text: "B".repeat(1200) }, { text: "C." });
		await persistent("keeper-silent", { max_context_tokens: 1000 }, { tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"] }] });
		// Run 1 fetches about 750 tokens and has nothing to add.
		const first = await runToRest("keeper-silent", "One.");
		expect(first).toMatchObject({ status: "completed", summary: "" });
		// Run 2 carries it: its prompt joins the fetch's result, as a continue's would.
		const second = await runToRest("keeper-silent", "Two.");
		expect(second).toMatchObject({ status: "completed", continued_from: first.id });
		expect(shown(emulator)).toEqual(["user: One.", "assistant: [tool_use]", "user: [tool_result] | Two."]);
		// Run 3: run 1 and run 2 together are over the bound, run 2's own part is not.
		const third = await runToRest("keeper-silent", "Three.");
		expect(third).toMatchObject({ status: "completed", session_id: first.session_id, continued_from: second.id });
		expect(shown(emulator)).toEqual(["user: Two.", `assistant: ${"B".repeat(1200)}`, "user: Three."]);
		// Run 1's fetch result, which run 2's prompt had joined, is left out too, and said so.
		expect((await sessionLine("keeper-silent", third))?.content).toBe(
			`persistent session ${first.session_id} continued from ${second.id} (2 messages carried; its 2 oldest messages and the 1 tool result the first carried message began with left out to stay within max_context_tokens (1000))`,
		);
	});

	it("is forgotten on DELETE (operate role), so the next run starts fresh; its jobs stay", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "A." }, { text: "B." });
		await persistent("keeper-reset");
		const first = await runToRest("keeper-reset", "One.");
		const asReader = await call("/v1/agents/keeper-reset/sessions/current", { method: "DELETE", as: "read" });
		expect(asReader.status).toBe(403);
		expect((await current("keeper-reset")).session_id).toBe(first.session_id);

		const res = await call("/v1/agents/keeper-reset/sessions/current", { method: "DELETE", as: "operate" });
		expect(res.status).toBe(200);
		expect(await res.json()).toEqual({ agent: "keeper-reset", forgotten: first.session_id });
		expect(await current("keeper-reset")).toMatchObject({ session_id: null, last_job: null, expires_at: null, expired: false });
		const again = await call("/v1/agents/keeper-reset/sessions/current", { method: "DELETE", as: "operate" });
		expect(await again.json()).toEqual({ agent: "keeper-reset", forgotten: null });

		const second = await runToRest("keeper-reset", "Two.");
		expect(second).toMatchObject({ session_id: `ses-${second.id}`, continued_from: null });
		expect(shown(emulator)).toEqual(["user: Two."]);
		expect((await call(`/v1/sessions/${first.session_id}`)).status).toBe(200);

		// Deleted and defined again, the agent starts its own conversation.
		expect((await call("/v1/agents/keeper-reset", { method: "DELETE", as: "admin" })).status).toBe(200);
		expect((await call("/v1/agents/keeper-reset/sessions/current")).status).toBe(404);
		await persistent("keeper-reset");
		emulator.enqueue({ text: "C." });
		const reborn = await runToRest("keeper-reset", "Three.");
		expect(reborn).toMatchObject({ session_id: `ses-${reborn.id}`, continued_from: null });
		expect(shown(emulator)).toEqual(["user: Three."]);

		const unknown = await call("/v1/agents/no-such-keeper/sessions/current");
		expect(unknown.status).toBe(404);
		expect((await errorOf(unknown)).message).toBe("no agent named no-such-keeper");
	});
});

describe("a persistent session moves on only from where a run found it", () => {
	it("a reset is not undone by a run that carried the session and completes after it", async () => {
		const emulator = useEmulator();
		fake("https://tickets.example.test", () => Response.json({ id: 1 }));
		emulator.enqueue({ text: "One." }, { tool_use: { name: "create_ticket", input: { title: "x" } } }, { text: "Filed." }, { text: "Three." });
		await persistent("keeper-race", {}, { tools: [ticketTool] });
		const first = await runToRest("keeper-race", "One.");
		const waiting = await runToRest("keeper-race", "Two.");
		expect(waiting).toMatchObject({ status: "approval_pending", continued_from: first.id });
		expect((await call("/v1/agents/keeper-race/sessions/current", { method: "DELETE", as: "operate" })).status).toBe(200);
		const approved = await call(`/v1/jobs/${waiting.id}/approval`, { method: "POST", as: "operate", body: { decision: "approve" } });
		expect(approved.status, await approved.clone().text()).toBe(200);
		await settle("keeper-race");
		expect(await jobOf("keeper-race", waiting.id)).toMatchObject({ status: "completed" });
		expect((await current("keeper-race")).session_id).toBeNull();
		const third = await runToRest("keeper-race", "Three.");
		expect(third).toMatchObject({ session_id: `ses-${third.id}`, continued_from: null });
		expect(shown(emulator)).toEqual(["user: Three."]);
	});

	it("a continue of an older job of the session runs in it, but does not wind the session back", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "A1." }, { text: "A2." }, { text: "Side answer." }, { text: "A4." });
		await persistent("keeper-rewind");
		const r1 = await runToRest("keeper-rewind", "Run 1.");
		const r2 = await runToRest("keeper-rewind", "Run 2.");
		const side = (await (await call(`/v1/jobs/${r1.id}/continue`, { method: "POST", as: "operate", body: { prompt: "About run 1?" } })).json()) as JobRecord;
		await settle("keeper-rewind");
		expect(await jobOf("keeper-rewind", side.id)).toMatchObject({ status: "completed", session_id: r1.session_id });
		expect((await current("keeper-rewind")).last_job).toBe(r2.id);
		const r4 = await runToRest("keeper-rewind", "Run 4.");
		expect(r4.continued_from).toBe(r2.id);
		expect(shown(emulator)).toEqual(["user: Run 1.", "assistant: A1.", "user: Run 2.", "assistant: A2.", "user: Run 4."]);
	});

	it("a run that fails on the conversation it carried ends the session, so the next starts anew, saying why", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "A." }, { stop_reason: "model_context_window_exceeded" }, { text: "Fresh." });
		await persistent("keeper-poison");
		const first = await runToRest("keeper-poison", "One.");
		const broken = await runToRest("keeper-poison", "Two.");
		expect(broken).toMatchObject({ status: "failed", continued_from: first.id, error: { type: "context_window_exceeded" } });
		const after = await current("keeper-poison");
		const why = `run ${broken.id} failed on the conversation it carried (context_window_exceeded: the conversation outgrew the model's context window (stop_reason model_context_window_exceeded))`;
		expect(after).toMatchObject({ session_id: first.session_id, last_job: first.id, expired: false, continues: false, not_continued_because: why });
		const third = await runToRest("keeper-poison", "Three.");
		expect(third).toMatchObject({ status: "completed", session_id: `ses-${third.id}`, continued_from: null });
		expect(shown(emulator)).toEqual(["user: Three."]);
		expect((await sessionLine("keeper-poison", third))?.content).toBe(`persistent session ${first.session_id} not continued: ${why}; this run starts a new one`);
		expect(await current("keeper-poison")).toMatchObject({ session_id: third.session_id, continues: true, not_continued_because: null });
	});

	it("a run that fails for its own reasons leaves the session to be continued; one the API refuses for its messages ends it", async () => {
		const emulator = useEmulator();
		emulator.enqueue(
			{ text: "A." },
			{ error: 400, message: "max_tokens: 100000 > 64000, which is the maximum allowed" },
			{ error: 400, message: "prompt is too long: 210000 tokens > 200000 maximum" },
			{ text: "Fresh." },
		);
		await persistent("keeper-refused");
		const first = await runToRest("keeper-refused", "One.");
		const own = await runToRest("keeper-refused", "Two.");
		expect(own).toMatchObject({ status: "failed", continued_from: first.id, error: { type: "invalid_request" } });
		expect(await current("keeper-refused")).toMatchObject({ last_job: first.id, continues: true });
		const tooLong = await runToRest("keeper-refused", "Three.");
		expect(tooLong).toMatchObject({ status: "failed", continued_from: first.id, error: { type: "invalid_request" } });
		expect(await current("keeper-refused")).toMatchObject({ last_job: first.id, continues: false, not_continued_because: expect.stringMatching(new RegExp(`^run ${tooLong.id} failed on the conversation it carried \\(invalid_request: .*prompt is too long`)) });
		const fourth = await runToRest("keeper-refused", "Four.");
		expect(fourth).toMatchObject({ status: "completed", continued_from: null });
	});
});

describe("a persistent session after the QA's second round", () => {
	it("a reset is not undone by a run that found no session and completes after it", async () => {
		const emulator = useEmulator();
		fake("https://tickets.example.test", () => Response.json({ id: 1 }));
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } }, { text: "Second." }, { text: "Filed." }, { text: "Fourth." });
		await persistent("keeper-empty-race", {}, { tools: [ticketTool], max_concurrent: 2 });
		const waiting = await runToRest("keeper-empty-race", "One.");
		expect(waiting.status).toBe("approval_pending");
		const second = await runToRest("keeper-empty-race", "Two.");
		expect((await current("keeper-empty-race")).last_job).toBe(second.id);
		expect((await call("/v1/agents/keeper-empty-race/sessions/current", { method: "DELETE", as: "operate" })).status).toBe(200);
		expect((await call(`/v1/jobs/${waiting.id}/approval`, { method: "POST", as: "operate", body: { decision: "approve" } })).status).toBe(200);
		await settle("keeper-empty-race");
		expect(await jobOf("keeper-empty-race", waiting.id)).toMatchObject({ status: "completed" });
		expect((await current("keeper-empty-race")).session_id).toBeNull();
	});

	it("a failure later in the run, or one not about the conversation, leaves the session to be continued", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response("ok"));
		emulator.enqueue(
			{ text: "A." },
			// Run 2: a tool turn, then the context window outgrown by the run's own growth.
			{ tool_use: { name: "http_fetch", input: { url: "https://status.example.test/" } } },
			{ stop_reason: "model_context_window_exceeded" },
			// Run 3: a redirect's error names the Messages API, but is no refusal of the messages.
			{ error: 400, message: "the Messages API host answered 307, a redirect, which drover does not follow" },
			// Run 4: the API's context limit message ends it.
			{ error: 400, message: "input length and `max_tokens` exceed context limit: 195000 + 8192 > 200000, decrease input length or `max_tokens` and try again" },
			{ text: "Fresh." },
		);
		await persistent("keeper-own-failure", {}, { tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"] }] });
		const first = await runToRest("keeper-own-failure", "One.");
		const grown = await runToRest("keeper-own-failure", "Two.");
		expect(grown).toMatchObject({ status: "failed", continued_from: first.id, error: { type: "context_window_exceeded" } });
		expect(await current("keeper-own-failure")).toMatchObject({ last_job: first.id, continues: true });
		const redirected = await runToRest("keeper-own-failure", "Three.");
		expect(redirected).toMatchObject({ status: "failed", continued_from: first.id, error: { type: "invalid_request" } });
		expect(await current("keeper-own-failure")).toMatchObject({ continues: true });
		const tooLong = await runToRest("keeper-own-failure", "Four.");
		expect(tooLong).toMatchObject({ status: "failed", continued_from: first.id });
		expect(await current("keeper-own-failure")).toMatchObject({ continues: false, not_continued_because: expect.stringContaining(`run ${tooLong.id} failed on the conversation it carried`) });
		expect(await runToRest("keeper-own-failure", "Five.")).toMatchObject({ status: "completed", continued_from: null });
	});

	it("an agent switched to fresh_per_job says its next run will not continue the session it kept", async () => {
		useEmulator().enqueue({ text: "A." }, { text: "B." });
		await persistent("keeper-switched");
		const first = await runToRest("keeper-switched", "One.");
		expect((await call("/v1/agents/keeper-switched", { method: "PUT", as: "admin", body: { name: "keeper-switched", prompt: "Do the thing." } })).status).toBe(200);
		expect(await current("keeper-switched")).toMatchObject({
			mode: "fresh_per_job",
			session_id: first.session_id,
			continues: false,
			not_continued_because: "the agent's runs start fresh (session.mode fresh_per_job); a continue of the session's last completed run (last_job) carries it on",
		});
		expect(await runToRest("keeper-switched", "Two.")).toMatchObject({ continued_from: null });
	});

	it("an agent switched to fresh_per_job carries the session it kept on through continues of its last completed run", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "A." }, { text: "Noted." }, { text: "42." });
		await persistent("keeper-resumed");
		const first = await runToRest("keeper-resumed", "One.");
		expect((await call("/v1/agents/keeper-resumed", { method: "PUT", as: "admin", body: { name: "keeper-resumed", prompt: "Do the thing." } })).status).toBe(200);
		const continueJob = async (from: string, prompt: string) => {
			const res = await call(`/v1/jobs/${from}/continue`, { method: "POST", as: "operate", body: { prompt, allow_definition_change: true } });
			expect(res.status, await res.clone().text()).toBe(201);
			const job = (await res.json()) as JobRecord;
			await settle("keeper-resumed");
			expect(await jobOf("keeper-resumed", job.id)).toMatchObject({ status: "completed" });
			return job;
		};
		const remembered = await continueJob(first.id, "Remember 42.");
		// What `drover sessions resume` continues next: the session's last completed run, now the continue.
		expect(await current("keeper-resumed")).toMatchObject({ mode: "fresh_per_job", session_id: first.session_id, last_job: remembered.id });
		const listed = (await (await call("/v1/agents/keeper-resumed/sessions")).json()) as { sessions: { session_id: string; persistent: boolean; last_job: { id: string } }[] };
		expect(listed.sessions).toEqual([expect.objectContaining({ session_id: first.session_id, persistent: true, last_job: expect.objectContaining({ id: remembered.id }) })]);

		const asked = await continueJob(remembered.id, "What was it?");
		expect(shown(emulator)).toEqual(["user: One.", "assistant: A.", "user: Remember 42.", "assistant: Noted.", "user: What was it?"]);
		expect((await current("keeper-resumed")).last_job).toBe(asked.id);
	});
});

describe("session.mode: fresh_per_job (the default) and per-schedule modes", () => {
	it("an agent without session settings starts every run afresh and keeps no persistent session", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "A." }, { text: "B." });
		await createAgent({ name: "forgetter" });
		await runToRest("forgetter", "One.");
		const second = await runToRest("forgetter", "Two.");
		expect(second).toMatchObject({ session_id: `ses-${second.id}`, continued_from: null });
		expect(shown(emulator)).toEqual(["user: Two."]);
		expect(await sessionLine("forgetter", second)).toBeUndefined();
		expect(await current("forgetter")).toMatchObject({ mode: "fresh_per_job", session_id: null });
		const listed = (await (await call("/v1/agents/forgetter/sessions")).json()) as { sessions: { persistent: boolean }[] };
		expect(listed.sessions.map((x) => x.persistent)).toEqual([false, false]);
	});

	it("a schedule's session.mode overrides the agent's for its runs", async () => {
		// A fixed quarter hour well in the past, not the real clock's, so the tick below claims the same
		// slot whenever the file runs; seven minutes past it no fleet.yaml slot falls.
		const QUARTER = Date.parse("2025-03-04T10:00:00Z");
		const at = (minutes: number, seconds = 0) => QUARTER + minutes * 60_000 + seconds * 1000;
		vi.useFakeTimers({ toFake: ["Date"], now: at(7, 10) });
		const emulator = useEmulator();
		emulator.enqueue({ text: "Manual." }, { text: "Scheduled." });
		await createAgent({ name: "hybrid", session: { mode: "persistent" }, schedules: { review: { interval: "1m", session: { mode: "fresh_per_job" } } } });
		const manual = await runToRest("hybrid", "By hand.");
		vi.setSystemTime(at(9, 20));
		await tick(at(9));
		await settle("hybrid");
		const scheduled = emulator.requests.length;
		expect(scheduled).toBe(2);
		// The scheduled run started afresh and left the persistent session at the manual run.
		expect(shown(emulator)).toEqual(["user: Do the thing."]);
		expect((await current("hybrid")).last_job).toBe(manual.id);
	});
});
