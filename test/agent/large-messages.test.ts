import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import type { JobRecord } from "../../src/jobs/model.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { jobOf, outputOf, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { refuseOver2MB } from "../helpers/sql.ts";

/**
 * A model's answer can hold a server tool's result (web_fetch of a PDF comes back base64 inside the
 * assistant turn) larger than the 2 MB Cloudflare's SQLite stores in a row: it is stored in pieces,
 * and the conversation sent back is the one the model wrote.
 */

const MODEL = "claude-sonnet-5-5";
type Message = { role: string; content: unknown };

/** A streamed answer of whole blocks (each in its content_block_start), as the API streams a server tool's result. */
function streamed(blocks: Record<string, unknown>[], stopReason: string, outputTokens = 50): Response {
	const events = [
		{ type: "message_start", message: { id: "msg_big", type: "message", role: "assistant", model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1000, output_tokens: 1 } } },
		...blocks.flatMap((content_block, index) => [
			{ type: "content_block_start", index, content_block },
			{ type: "content_block_stop", index },
		]),
		{ type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } },
		{ type: "message_stop" },
	];
	return new Response(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""), { headers: { "content-type": "text/event-stream" } });
}

/** A web_fetch of a PDF: its bytes, base64, inside the answer (`bytes` of base64). */
function fetchedPdf(bytes: number): Record<string, unknown>[] {
	const data = "JVBERi0xLjcK".padEnd(bytes, "QUJDRA");
	return [
		{ type: "text", text: "Reading the report." },
		{ type: "server_tool_use", id: "srvtoolu_pdf", name: "web_fetch", input: { url: "https://reports.example.test/q3.pdf" } },
		{
			type: "web_fetch_tool_result",
			tool_use_id: "srvtoolu_pdf",
			content: {
				type: "web_fetch_result",
				url: "https://reports.example.test/q3.pdf",
				retrieved_at: "2025-03-01T10:00:00Z",
				content: { type: "document", source: { type: "base64", media_type: "application/pdf", data }, title: "Q3 report", citations: { enabled: false } },
			},
		},
	];
}

/**
 * The model, scripted per request: `answers[i]` answers the i-th request (the last one any later);
 * every request's messages are kept.
 */
function scriptedModel(answers: (() => Response)[]): { requests: Message[][] } {
	const requests: Message[][] = [];
	fake("https://api.anthropic.com", async (request) => {
		const body = (await request.json()) as { messages: Message[] };
		requests.push(body.messages);
		return answers[Math.min(requests.length - 1, answers.length - 1)]!();
	});
	return { requests };
}

/** The agent's alarm work, retried as the platform retries a failed alarm, a few times at most. */
async function settleRetrying(agent: string, times = 3): Promise<void> {
	for (let i = 0; i < times; i++) await settle(agent).catch(() => undefined);
}

const chunkRows = (agent: string, jobId: string) =>
	runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM message_chunks WHERE job_id = ?", jobId).one().n);

describe("a model answer larger than a row holds", () => {
	const PDF_BYTES = 2_500_000;

	async function pausedOnPdf(agent: string): Promise<{ job: JobRecord; requests: Message[][]; pdf: Record<string, unknown>[] }> {
		const pdf = fetchedPdf(PDF_BYTES);
		const model = scriptedModel([() => streamed(pdf, "pause_turn", 400), () => streamed([{ type: "text", text: "The report says revenue grew 4%." }], "end_turn", 30)]);
		await createAgent({ name: agent, usage_limits: { max_requests: 10 } });
		await refuseOver2MB(agent);
		const queued = await trigger(agent, "Summarise the Q3 report.");
		await settleRetrying(agent);
		return { job: await jobOf(agent, queued.id), requests: model.requests, pdf };
	}

	it("is stored whole across rows: one request for the turn, the job completes, and the next request carries the 2.5 MB block unchanged", async () => {
		const { job, requests, pdf } = await pausedOnPdf("pdf-answer");
		expect(job.status, JSON.stringify(job.error)).toBe("completed");
		// The paused turn's text and its continuation's: the whole answer, as its delivery reads it.
		expect(job.summary).toBe("Reading the report.\nThe report says revenue grew 4%.");
		// The paused turn once, then its continuation: nothing asked twice, nothing billed twice.
		expect(requests).toHaveLength(2);
		const [user, answer] = requests[1]!;
		expect(user).toEqual({ role: "user", content: "Summarise the Q3 report." });
		expect(answer).toEqual({ role: "assistant", content: pdf });
		expect(job.usage.num_turns).toBe(1);
		expect(job.usage.per_model[MODEL]).toMatchObject({ input_tokens: 2000, output_tokens: 430 });
		expect(JSON.stringify(answer).length).toBeGreaterThan(PDF_BYTES);
		// The continuation joined the paused answer, which stays in pieces.
		expect(await chunkRows("pdf-answer", job.id)).toBeGreaterThan(0);
		const lines = await outputOf("pdf-answer", job.id);
		expect(lines.filter((l) => l.type === "error")).toEqual([]);
		// Retention takes the pieces with their job.
		const pruned = await runInDurableObject(env.AGENT.getByName("pdf-answer"), (instance: AgentDO) => AgentDO.prune(instance, Date.now() + 400 * 86_400_000, true));
		expect(pruned).toBe(1);
		expect(await chunkRows("pdf-answer", job.id)).toBe(0);
	});

	it("is carried whole by a continue and a fork with a prompt; a fork without one drops it, pieces and all", async () => {
		const { job, requests, pdf } = await pausedOnPdf("pdf-follow-ups");
		expect(job.status, JSON.stringify(job.error)).toBe("completed");
		const answer = { role: "assistant", content: [...pdf, { type: "text", text: "The report says revenue grew 4%." }] };
		const follow = async (kind: "continue" | "fork", prompt?: string): Promise<JobRecord> => {
			const res = await call(`/v1/jobs/${job.id}/${kind}`, { method: "POST", as: "operate", body: prompt === undefined ? {} : { prompt } });
			expect(res.status, await res.clone().text()).toBe(201);
			const next = (await res.json()) as JobRecord;
			await settleRetrying("pdf-follow-ups", 2);
			return jobOf("pdf-follow-ups", next.id);
		};

		const continued = await follow("continue", "And the costs?");
		expect(continued.status, JSON.stringify(continued.error)).toBe("completed");
		expect(requests.at(-1)).toEqual([{ role: "user", content: "Summarise the Q3 report." }, answer, { role: "user", content: "And the costs?" }]);

		const forked = await follow("fork", "And the risks?");
		expect(forked.status, JSON.stringify(forked.error)).toBe("completed");
		expect(requests.at(-1)).toEqual([{ role: "user", content: "Summarise the Q3 report." }, answer, { role: "user", content: "And the risks?" }]);

		// Without a prompt a fork asks the source's question again: its answer, in pieces, is not kept.
		const again = await follow("fork");
		expect(again.status, JSON.stringify(again.error)).toBe("completed");
		expect(requests.at(-1)).toEqual([{ role: "user", content: "Summarise the Q3 report." }]);
		expect(await chunkRows("pdf-follow-ups", again.id)).toBe(0);
		// Each request a turn: the continue's and forks' answers were small, asked once each.
		expect(requests).toHaveLength(5);
	});

	it("forked without a prompt, is neither read nor copied: only the conversation before it is", async () => {
		const text = "The report, in full: ".padEnd(2_500_000, "revenue grew 4%. ");
		const model = scriptedModel([() => streamed([{ type: "text", text }], "end_turn", 400), () => streamed([{ type: "text", text: "In short: revenue grew 4%." }], "end_turn", 30)]);
		await createAgent({ name: "fork-big-answer" });
		await refuseOver2MB("fork-big-answer");
		const queued = await trigger("fork-big-answer", "Write out the Q3 report.");
		await settleRetrying("fork-big-answer");
		const source = await jobOf("fork-big-answer", queued.id);
		expect(source.status, JSON.stringify(source.error)).toBe("completed");
		expect(await chunkRows("fork-big-answer", source.id)).toBeGreaterThan(0);
		// Counts the characters of stored conversation that the fork brings into the isolate.
		let read = 0;
		let counting = false;
		await runInDurableObject(env.AGENT.getByName("fork-big-answer"), (_i: AgentDO, state) => {
			const sql = state.storage.sql as unknown as { exec: (query: string, ...args: unknown[]) => SqlStorageCursor<Record<string, SqlStorageValue>> };
			const exec = sql.exec.bind(sql);
			const measured = (rows: Record<string, SqlStorageValue>[]) => {
				for (const row of rows) for (const value of Object.values(row)) if (counting && typeof value === "string") read += value.length;
				return rows;
			};
			sql.exec = (query: string, ...args: unknown[]) => {
				const cursor = exec(query, ...args);
				if (!/\bmessage(?:s|_chunks)\b/.test(query)) return cursor;
				return new Proxy(cursor, {
					get(target, prop) {
						if (prop === "toArray") return () => measured(target.toArray());
						if (prop === "one") return () => measured([target.one()])[0];
						const value = Reflect.get(target, prop, target) as unknown;
						return typeof value === "function" ? value.bind(target) : value;
					},
				});
			};
		});
		counting = true;
		const res = await call(`/v1/jobs/${source.id}/fork`, { method: "POST", as: "operate", body: {} });
		counting = false;
		expect(res.status, await res.clone().text()).toBe(201);
		expect(read).toBeLessThan(1_000);
		const fork = (await res.json()) as JobRecord;
		await settleRetrying("fork-big-answer", 2);
		expect((await jobOf("fork-big-answer", fork.id)).status).toBe("completed");
		// The question asked again, without the answer it was given.
		expect(model.requests.at(-1)).toEqual([{ role: "user", content: "Write out the Q3 report." }]);
		expect(await chunkRows("fork-big-answer", fork.id)).toBe(0);
	});

	it("counts an answer's usage though storing it failed, so the job's usage limits stop the requests that follow", async () => {
		const model = scriptedModel([() => streamed([{ type: "text", text: "Done." }], "end_turn", 20)]);
		await createAgent({ name: "answer-lost", usage_limits: { max_requests: 2 } });
		// Every answer is refused, as a full disk would refuse it.
		await runInDurableObject(env.AGENT.getByName("answer-lost"), (_i: AgentDO, state) => {
			const sql = state.storage.sql as unknown as { exec: (query: string, ...args: unknown[]) => unknown };
			const exec = sql.exec.bind(sql);
			sql.exec = (query: string, ...args: unknown[]) => {
				if (query.startsWith("INSERT INTO messages") && args.includes("assistant")) throw new Error("SQLITE_FULL");
				return exec(query, ...args);
			};
		});
		const queued = await trigger("answer-lost");
		await settleRetrying("answer-lost", 4);
		const job = await jobOf("answer-lost", queued.id);
		expect(model.requests).toHaveLength(2);
		expect(job).toMatchObject({ status: "failed", exit_reason: "usage_limit", error: { message: "usage limit reached: max_requests 2" } });
		expect(job.usage.num_turns).toBe(2);
		expect(job.usage.per_model[MODEL]).toMatchObject({ input_tokens: 2000, output_tokens: 40 });
	});

	it("ends the job as message_too_large, asked once and its usage counted, when no row could hold a piece of it", async () => {
		const model = scriptedModel([() => streamed(fetchedPdf(PDF_BYTES), "pause_turn", 400)]);
		await createAgent({ name: "pdf-unstorable" });
		// Stands in for storage that refuses even a piece: the answer cannot be stored at all.
		await refuseOver2MB("pdf-unstorable", 500_000);
		const queued = await trigger("pdf-unstorable", "Summarise the Q3 report.");
		await settleRetrying("pdf-unstorable");
		const job = await jobOf("pdf-unstorable", queued.id);
		expect(job).toMatchObject({ status: "failed", exit_reason: "error", error: { type: "message_too_large" } });
		// The error's text is fixed (one incident however many such runs); the reason names the size.
		expect(job.error?.message).toBe("the model's answer was too large to store, so the conversation cannot go on");
		expect(job.transitions.at(-1)?.reason).toMatch(/^the model's answer \(25\d{5} bytes as JSON\) could not be stored: refused by storage \(.*SQLITE_TOOBIG.*\)$/);
		expect(model.requests).toHaveLength(1);
		expect(job.usage.num_turns).toBe(1);
		expect(job.usage.per_model[MODEL]).toMatchObject({ input_tokens: 1000, output_tokens: 400 });
		// Nothing of it was kept: no piece without its message.
		expect(await chunkRows("pdf-unstorable", job.id)).toBe(0);
	});
});
