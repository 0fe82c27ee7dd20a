import { describe, expect, it } from "vitest";
import type { JobRecord } from "../../src/jobs/model.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, outputOf, runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { answerStream } from "../helpers/sse.ts";

// The 5.5 models think unasked and sign each thinking block over everything before it: sent back after
// drover changed something before it, a block fails the request (400 "bound to a different
// conversation"). The emulator signs the blocks it is scripted to think and checks them as the API does.

const fetchTool = { type: "http_fetch", allow_hosts: ["status.example.test"] };
type Block = { type: string; thinking?: string; text?: string; content?: unknown };

/** For each assistant turn a request sent back: the thinking it carried (null for none). */
function thinkingSent(emulator: ReturnType<typeof useEmulator>, request: number): (string | null)[] {
	const messages = emulator.requests[request]?.messages ?? [];
	return messages
		.filter((m) => m.role === "assistant")
		.map((m) => ((typeof m.content === "string" ? [] : (m.content as Block[])).find((b) => b.type === "thinking")?.thinking ?? null));
}

async function post(path: string, body: unknown): Promise<Response> {
	return call(path, { method: "POST", as: "operate", body });
}

describe("a model that thinks (preserved thinking)", () => {
	it("gets its thinking back as it came, turn after turn", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response("all green"));
		emulator.enqueue({ thinking: "I should look at the page.", tool_use: { name: "http_fetch", input: { url: "https://status.example.test/" } } }, { thinking: "It says green.", text: "All green." });
		await createAgent({ name: "thinker", tools: [fetchTool] });
		const job = await runToRest("thinker");
		expect(job.status, JSON.stringify(job.error)).toBe("completed");
		expect(job.summary).toBe("All green.");
		expect(thinkingSent(emulator, 1)).toEqual(["I should look at the page."]);
	});

	it("sends back a thinking block whose text is omitted (the 5.5 models' default display) as it came, empty", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response("all green"));
		emulator.enqueue({ thinking: "", tool_use: { name: "http_fetch", input: { url: "https://status.example.test/" } } }, { thinking: "", text: "All green." });
		await createAgent({ name: "quiet-thinker", tools: [fetchTool] });
		const job = await runToRest("quiet-thinker");
		expect(job.status, JSON.stringify(job.error)).toBe("completed");
		expect(thinkingSent(emulator, 1)).toEqual([""]);
	});

	it("has room for long thinking before its answer: thinking counts against max_tokens", async () => {
		const emulator = useEmulator();
		// About 10,000 tokens of thought, past the 8,192 a request allowed.
		emulator.enqueue({ thinking: "Hmm. ".repeat(8_000), text: "Decided." });
		await createAgent({ name: "long-thinker" });
		const job = await runToRest("long-thinker");
		expect(job.status, JSON.stringify(job.error)).toBe("completed");
		expect(job.summary).toBe("Decided.");
	});

	it("a request refused for thinking signed over something since changed is asked again without the job's thinking, once", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response("all green"));
		// The first answer's thinking carries a signature the emulator did not make (as a conversation
		// stored before drover left such thinking out would): the API refuses every request carrying it.
		let first = true;
		fake("https://api.anthropic.com", (request) => {
			if (!first) return emulator.handle(request);
			first = false;
			const body = answerStream([{ thinking: "Check the page.", signature: "c2lnbmVk" }, { tool_use: { id: "toolu_1", name: "http_fetch", json: '{"url":"https://status.example.test/"}' } }]);
			return new Response(body, { headers: { "content-type": "text/event-stream" } });
		});
		emulator.enqueue({ text: "All green." });
		await createAgent({ name: "unbound-thinker", tools: [fetchTool] });
		const job = await runToRest("unbound-thinker");
		expect(job.status, JSON.stringify(job.error)).toBe("completed");
		expect(job.summary).toBe("All green.");
		// Refused once with the thinking, answered without it.
		expect(emulator.requests.map((_, i) => thinkingSent(emulator, i))).toEqual([["Check the page."], [null]]);
	});

	it("keeps the tokens of an answer refused in a call then refused for its thinking: the job's usage counts what its output bills", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response("all green"));
		emulator.enqueue(
			{ thinking: "Look.", tool_use: { name: "http_fetch", input: { url: "https://status.example.test/" } } },
			// The primary refuses (billed), the fallback's request is refused for the thinking it carries.
			{ stop_reason: "refusal", text: "No." },
			{ error: 400, message: "messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a different conversation." },
			{ text: "All green." },
		);
		await createAgent({ name: "billed-refusal", fallback_models: ["claude-haiku-5-5"], tools: [fetchTool] });
		const job = await runToRest("billed-refusal");
		expect(job.status, JSON.stringify(job.error)).toBe("completed");
		const lines = await outputOf("billed-refusal", job.id);
		const billed = lines.reduce((n, l) => n + (l.usage && (l.type === "assistant" || l.subtype === "retry") ? (l.usage as { output_tokens: number }).output_tokens : 0), 0);
		const counted = Object.values(job.usage.per_model).reduce((n, u) => n + u.output_tokens, 0);
		expect(lines.some((l) => l.subtype === "retry" && l.usage)).toBe(true);
		expect(counted).toBe(billed);
	});

	it("asks a model whose output limit is below max_tokens again within the limit it names", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ error: 400, message: "max_tokens: 16000 > 8192, which is the maximum allowed for claude-3-5-haiku-20241022" }, { text: "Within it." });
		await createAgent({ name: "small-output" });
		const job = await runToRest("small-output");
		expect(job.status, JSON.stringify(job.error)).toBe("completed");
		expect(job.summary).toBe("Within it.");
		expect(emulator.requests.map((r) => r.max_tokens)).toEqual([16_000, 8192]);
	});

	it("clearing old tool results leaves out the thinking signed over them, keeps the rest, and the job completes", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response("x".repeat(150_000)));
		for (let i = 0; i < 6; i++) emulator.enqueue({ thinking: `Reading page ${i}.`, tool_use: { name: "http_fetch", input: { url: `https://status.example.test/${i}` } } });
		emulator.enqueue({ thinking: "Done reading.", text: "Read them all." });
		await createAgent({ name: "thinking-reader", max_turns: 10, tools: [fetchTool] });
		const job = await runToRest("thinking-reader");
		expect(job.status, JSON.stringify(job.error)).toBe("completed");
		expect(emulator.requests).toHaveLength(7);
		// Request 4 is the first sent after the three oldest results were cleared (see loop.test.ts): the
		// first turn's thinking came before every cleared result and stays; the next three were signed
		// over results since cleared, and go; the turn that read page 3 thought after the clearing and
		// keeps it from then on, as do the turns after it.
		expect(thinkingSent(emulator, 3)).toEqual(["Reading page 0.", "Reading page 1.", "Reading page 2."]);
		expect(thinkingSent(emulator, 4)).toEqual(["Reading page 0.", null, null, null]);
		expect(thinkingSent(emulator, 6)).toEqual(["Reading page 0.", null, null, null, "Reading page 4.", "Reading page 5."]);
	});

	it("a persistent session cut to max_context_tokens carries no thinking signed over what was cut; one carried whole keeps it", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ thinking: "One.", text: "A." }, { thinking: "Two.", text: "B." }, { thinking: "Three.", text: "C." });
		await createAgent({ name: "thinking-keeper", session: { mode: "persistent", max_context_tokens: 1000 } });
		// 4 characters a token: run 1's prompt is 600 tokens, run 2's 300, run 3's 100.
		await runToRest("thinking-keeper", "1".repeat(2400));
		const second = await runToRest("thinking-keeper", "2".repeat(1200));
		expect(second.status, JSON.stringify(second.error)).toBe("completed");
		expect(thinkingSent(emulator, 1)).toEqual(["One."]);
		const third = await runToRest("thinking-keeper", "3".repeat(400));
		expect(third.status, JSON.stringify(third.error)).toBe("completed");
		expect(third.continued_from).toBe(second.id);
		// Run 1 left out, run 2's answer stays, its thinking (signed over run 1) does not.
		expect(thinkingSent(emulator, 2)).toEqual([null]);
		expect(JSON.stringify(emulator.requests[2]!.messages)).toContain('"B."');
	});

	it("a continue under a changed system prompt (allow_definition_change) leaves the thinking out; one under the same keeps it", async () => {
		const emulator = useEmulator();
		const definition = { name: "thinking-followup", system_prompt: "Version A." };
		emulator.enqueue({ thinking: "First thought.", text: "First." }, { thinking: "Second thought.", text: "Second." }, { text: "Third." });
		await createAgent(definition);
		const done = await runToRest("thinking-followup");
		const same = await post(`/v1/jobs/${done.id}/continue`, { prompt: "And then?" });
		expect(same.status).toBe(201);
		await settle("thinking-followup");
		const kept = await jobOf("thinking-followup", ((await same.json()) as JobRecord).id);
		expect(kept.status, JSON.stringify(kept.error)).toBe("completed");
		expect(thinkingSent(emulator, 1)).toEqual(["First thought."]);

		expect((await call("/v1/agents/thinking-followup", { method: "PUT", as: "admin", body: { ...definition, system_prompt: "Version B." } })).status).toBe(200);
		const changed = await post(`/v1/jobs/${kept.id}/continue`, { prompt: "And now?", allow_definition_change: true });
		expect(changed.status).toBe(201);
		await settle("thinking-followup");
		const ran = await jobOf("thinking-followup", ((await changed.json()) as JobRecord).id);
		expect(ran.status, JSON.stringify(ran.error)).toBe("completed");
		expect(ran.summary).toBe("Third.");
		expect(thinkingSent(emulator, 2)).toEqual([null, null]);
		expect(JSON.stringify(emulator.requests[2]!.system)).toContain("Version B.");
	});
});
