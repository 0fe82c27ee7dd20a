import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { putJob } from "../../durable-objects/agent/jobs.ts";
import { insertOccurrence } from "../../durable-objects/agent/ledger.ts";
import { parseAgent } from "../helpers/definitions.ts";
import { HERDCTL_FIELDS } from "../../src/jobs/yaml.ts";
import { upsertJobIndex } from "../../src/store/job-index.ts";
import { breakD1, createAgent, restoreEnv, settle } from "../helpers/agents.ts";
import { heldModel, useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { endedRecord, jobOf, lifecycleRecords, numberedRecord, runToRest, saveJob, storeRun, trigger } from "../helpers/jobs.ts";
import { countingReads, jobRowsOf, pruneJobs } from "../helpers/sql.ts";
import { tick } from "../helpers/ticks.ts";
import { fake } from "../helpers/outbound.ts";
import { readEvents } from "../helpers/sse.ts";

const fetchTool = { type: "http_fetch", allow_hosts: ["status.example.test"] };

/** A finished job with a few turns of output. */
async function finishedJob(name: string) {
	const emulator = useEmulator();
	fake("https://status.example.test", () => new Response("green"));
	emulator.enqueue(
		{ tool_use: { name: "http_fetch", input: { url: "https://status.example.test/a" } }, text: "Looking." },
		{ tool_use: { name: "http_fetch", input: { url: "https://status.example.test/b" } } },
		{ text: "All green." },
	);
	await createAgent({ name, tools: [fetchTool] });
	return runToRest(name);
}

describe("GET /v1/jobs/:id as YAML", () => {
	it("returns herdctl's job layout, field for field, parseable by yaml", async () => {
		const job = await finishedJob("yaml-view");
		const res = await call(`/v1/jobs/${job.id}`, { headers: { accept: "application/yaml" } });
		expect(res.status).toBe(200);
		expect(res.headers.get("content-type")).toMatch(/^application\/yaml/);
		const doc = parse(await res.text()) as Record<string, unknown>;
		expect(Object.keys(doc)).toEqual([...HERDCTL_FIELDS]);
		expect(doc).toMatchObject({
			id: job.id,
			agent: "yaml-view",
			trigger_type: "manual",
			status: "completed",
			exit_reason: "success",
			summary: "All green.",
			output_file: `jobs/yaml-view/${job.id}.jsonl`,
			usage: { num_turns: 3, total_cost_usd: null },
		});
		expect(Object.keys((doc.usage as { per_model: Record<string, unknown> }).per_model)).toEqual(["claude-sonnet-5-5"]);
	});

	it("quotes its instants as herdctl does, so a YAML 1.1 reader gets the strings and not dates", async () => {
		const job = await finishedJob("yaml-instants");
		const text = await (await call(`/v1/jobs/${job.id}`, { headers: { accept: "application/yaml" } })).text();
		expect(text).toContain(`started_at: "${job.started_at}"`);
		expect(text).toContain(`finished_at: "${job.finished_at}"`);
		// PyYAML and Ruby's Psych read YAML 1.1, where a bare ISO instant is a timestamp.
		const old = parse(text, { version: "1.1" }) as Record<string, unknown>;
		expect(old.started_at).toBe(job.started_at);
		expect(old.finished_at).toBe(job.finished_at);
		expect(text).toContain(`id: ${job.id}\n`);
	});

	it("quotes every string a YAML 1.1 reader would take for something else: a yes/no/on answer, a time, a number with underscores", async () => {
		// An agent named as a YAML 1.1 boolean, asked "yes", answering a time and then "No": under 1.1
		// (PyYAML, Ruby's Psych) those would be true, 750 and false, where herdctl's scripts expect text.
		const emulator = useEmulator();
		emulator.enqueue({ text: "12:30" }, { text: "No" }, { text: "1_000" });
		await createAgent({ name: "on" });
		const jobs = [await runToRest("on", "yes"), await runToRest("on", "Off"), await runToRest("on", "0b101")];
		for (const job of jobs) {
			const text = await (await call(`/v1/jobs/${job.id}`, { headers: { accept: "application/yaml" } })).text();
			const old = parse(text, { version: "1.1" }) as Record<string, unknown>;
			expect({ agent: old.agent, prompt: old.prompt, summary: old.summary }, text).toEqual({ agent: "on", prompt: job.prompt, summary: job.summary });
			// The same document to a YAML 1.2 reader (herdctl's own yaml library), every field as the JSON record has it.
			const now = parse(text) as Record<string, unknown>;
			expect(now).toEqual(Object.fromEntries(HERDCTL_FIELDS.map((f) => [f, job[f]])));
			expect(text).toContain(`id: ${job.id}\n`);
		}
		expect(jobs.map((j) => [j.prompt, j.summary])).toEqual([["yes", "12:30"], ["Off", "No"], ["0b101", "1_000"]]);
	});

	it("quotes = and <<, which a YAML 1.1 reader resolves to tags it cannot load (PyYAML's safe_load fails on the whole document)", async () => {
		// PyYAML resolves a plain = to !!value and a plain << to !!merge, and has no constructor for
		// either as a value: one such prompt or answer left the whole job unreadable there.
		const emulator = useEmulator();
		emulator.enqueue({ text: "<<" }, { text: "=" });
		await createAgent({ name: "sums" });
		const jobs = [await runToRest("sums", "="), await runToRest("sums", "<<")];
		for (const job of jobs) {
			const text = await (await call(`/v1/jobs/${job.id}`, { headers: { accept: "application/yaml" } })).text();
			expect(text).toContain(`prompt: "${job.prompt}"\n`);
			expect(text).toContain(`summary: "${job.summary}"\n`);
			expect(parse(text, { version: "1.1" })).toMatchObject({ prompt: job.prompt, summary: job.summary });
		}
		expect(jobs.map((j) => [j.prompt, j.summary])).toEqual([["=", "<<"], ["<<", "="]]);
	});
});

describe("GET /v1/jobs/:id as YAML, with bidirectional controls in its strings", () => {
	// Every bidirectional control: each reorders the text around it where the YAML is shown raw.
	const BIDI = ["\u061c", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"];

	it("writes them as YAML's own escapes in double quotes, so the text shows them and reads back as the same strings", async () => {
		const { ended } = lifecycleRecords("yaml-bidi", new Date());
		const job = {
			...ended,
			// One line, several lines (which YAML would write as a block, where an escape is plain text), and DEL and a C1 control.
			prompt: `Rename safe\u202etxt.exe, then ${BIDI.join("|")}.`,
			summary: "Line one.\nLine \u2067two\u2069.\nThree: ok\x7f \x9b",
		};
		await saveJob("yaml-bidi", job);
		await upsertJobIndex(env.DB, [job]);
		const res = await call(`/v1/jobs/${job.id}`, { headers: { accept: "application/yaml" } });
		expect(res.status).toBe(200);
		const text = await res.text();
		expect(text).not.toMatch(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\x7f-\x9f]/);
		// Escaped as the CLI escapes them (lower-case hex), so `drover job --yaml` prints the same text.
		expect(text).toContain('prompt: "Rename safe\\u202etxt.exe, then \\u061c|\\u200e|\\u200f|\\u202a|');
		expect(text).toContain('summary: "Line one.\\nLine \\u2067two\\u2069.\\nThree: ok\\x7f \\x9b"\n');
		for (const version of ["1.2", "1.1"] as const) {
			const doc = parse(text, { version }) as Record<string, unknown>;
			expect(doc.prompt, version).toBe(job.prompt);
			expect(doc.summary, version).toBe(job.summary);
			expect(doc.id, version).toBe(job.id);
		}
	});
});

describe("job output", () => {
	it("is consolidated into R2 when the job ends, equal to the lines produced", async () => {
		const job = await finishedJob("to-r2");
		const object = await env.OUTPUT.get(`jobs/to-r2/${job.id}.jsonl`);
		expect(object).not.toBeNull();
		const text = await object!.text();
		const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l) as { type: string; timestamp: string });
		expect(lines.map((l) => l.type)).toEqual(["system", "assistant", "tool_use", "tool_result", "assistant", "tool_use", "tool_result", "assistant", "system"]);
		expect(lines.every((l) => typeof l.timestamp === "string")).toBe(true);
		// The agent's SQLite no longer holds them: R2 is the copy that lasts.
		const left = await runInDurableObject(env.AGENT.getByName("to-r2"), (_i: AgentDO, state) =>
			state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM output_lines").one().n,
		);
		expect(left).toBe(0);

		const res = await call(`/v1/jobs/${job.id}/output`);
		expect(res.status).toBe(200);
		expect(res.headers.get("content-type")).toBe("application/x-ndjson");
		expect(await res.text()).toBe(text);
	});

	it("honours Range and ?lines=N, for a finished job and a live one", async () => {
		const job = await finishedJob("ranges");
		const full = await (await call(`/v1/jobs/${job.id}/output`)).text();
		const part = await call(`/v1/jobs/${job.id}/output`, { headers: { range: "bytes=10-49" } });
		expect(part.status).toBe(206);
		expect(part.headers.get("content-range")).toBe(`bytes 10-49/${new TextEncoder().encode(full).length}`);
		expect(await part.text()).toBe(full.slice(10, 50));
		const suffix = await call(`/v1/jobs/${job.id}/output`, { headers: { range: "bytes=-20" } });
		expect(await suffix.text()).toBe(full.slice(-20));
		const beyond = await call(`/v1/jobs/${job.id}/output`, { headers: { range: "bytes=999999-" } });
		expect(beyond.status).toBe(416);
		const tail = await call(`/v1/jobs/${job.id}/output?lines=2`);
		expect(await tail.text()).toBe(full.trimEnd().split("\n").slice(-2).join("\n") + "\n");
		expect((await call(`/v1/jobs/${job.id}/output?lines=0`)).status).toBe(400);

		// A live job (waiting on an approval) is served from its agent.
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({
			name: "ranges-live",
			tools: [{ type: "webhook", name: "create_ticket", description: "Create.", url_secret: "TEST_TICKETS_URL", requires_approval: true }],
		});
		const live = await runToRest("ranges-live");
		expect(live.status).toBe("approval_pending");
		const liveText = await (await call(`/v1/jobs/${live.id}/output`)).text();
		expect(liveText.trimEnd().split("\n").map((l) => JSON.parse(l).type)).toEqual(["system", "assistant", "tool_use", "system"]);
		const liveTail = await (await call(`/v1/jobs/${live.id}/output?lines=1`)).text();
		expect(JSON.parse(liveTail).subtype).toBe("approval_requested");
		const livePart = await call(`/v1/jobs/${live.id}/output`, { headers: { range: "bytes=0-9" } });
		expect(livePart.status).toBe(206);
		expect(await livePart.text()).toBe(liveText.slice(0, 10));
	});
});

describe("a download of a job's output while the job ends", () => {
	/** A job waiting for an approval with `n` long lines of output so far, and its approval. */
	async function longLiveJob(name: string, n: number): Promise<{ id: string; approve: () => Promise<void> }> {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "t" } } }, { text: "Done." });
		fake("https://tickets.example.test", () => new Response("ok"));
		await createAgent({ name, tools: [{ type: "webhook", name: "create_ticket", description: "Create.", url_secret: "TEST_TICKETS_URL", requires_approval: true }] });
		const job = await runToRest(name);
		expect(job.status).toBe("approval_pending");
		const big = "y".repeat(4000);
		await runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO) => {
			for (let i = 0; i < n; i++) AgentDO.appendOutput(instance, job.id, [{ type: "system", subtype: "note", content: `${i} ${big}` }]);
		});
		return {
			id: job.id,
			approve: async () => {
				expect((await call(`/v1/jobs/${job.id}/approval`, { method: "POST", as: "operate", body: { decision: "approve" } })).status).toBe(200);
				await settle(name);
			},
		};
	}

	/** Reads the first piece of a body, lets `meanwhile` run, then reads the rest. */
	async function readAcross(res: Response, meanwhile: () => Promise<void>): Promise<string> {
		const reader = res.body!.getReader();
		const decoder = new TextDecoder();
		let text = decoder.decode((await reader.read()).value!, { stream: true });
		await meanwhile();
		for (;;) {
			const { done, value } = await reader.read();
			if (done) break;
			text += decoder.decode(value, { stream: true });
		}
		return text + decoder.decode();
	}

	it("is whole when the output moves to R2 mid-download: it carries on from there, not ending early", async () => {
		const job = await longLiveJob("moving-output", 1500);
		const text = await readAcross(await call(`/v1/jobs/${job.id}/output`), job.approve);
		const stored = await (await env.OUTPUT.get(`jobs/moving-output/${job.id}.jsonl`))!.text();
		// The download holds every line R2 does, the job's end included, in order, once each.
		expect(text.length).toBe(stored.length);
		expect(text).toBe(stored);
		expect(JSON.parse(text.trimEnd().split("\n").at(-1)!)).toMatchObject({ type: "system", subtype: "result", status: "completed" });
	});

	it("is a broken transfer, not a clean end, when the job is pruned while it is read", async () => {
		const job = await longLiveJob("pruned-output", 1500);
		const res = await call(`/v1/jobs/${job.id}/output`);
		let pruned = 0;
		const read = readAcross(res, async () => {
			await job.approve();
			pruned = await runInDurableObject(env.AGENT.getByName("pruned-output"), (_i: AgentDO, state) =>
				pruneJobs(state.storage.sql, env.OUTPUT, "pruned-output", Date.now() + 86_400_000, Date.now()),
			);
		});
		// The stream's own error, not any failure on the way (a refused approval, a prune that threw).
		await expect(read).rejects.toThrow(`job ${job.id} was deleted (its retention passed) while its output was read`);
		expect(pruned).toBe(1);
	});

	it("is whole for a byte range too", async () => {
		const job = await longLiveJob("moving-range", 1500);
		const offset = 1_000_000;
		const length = 3_000_000;
		const text = await readAcross(await call(`/v1/jobs/${job.id}/output`, { headers: { range: `bytes=${offset}-${offset + length - 1}` } }), job.approve);
		const stored = new Uint8Array(await (await env.OUTPUT.get(`jobs/moving-range/${job.id}.jsonl`))!.arrayBuffer());
		expect(text).toBe(new TextDecoder().decode(stored.subarray(offset, offset + length)));
	});
});

describe("?lines=N of a large output", () => {
	it("gives the last N lines, streamed, however long they are or however many are asked for, finished or live", async () => {
		const job = await finishedJob("tail-large");
		const key = `jobs/tail-large/${job.id}.jsonl`;
		// 8 lines of 700 KB: 7 of them pass the largest window a tail reads from the end (4 MiB).
		const line = (i: number) => JSON.stringify({ type: "tool_result", n: i, result: "x".repeat(700_000) });
		const all = Array.from({ length: 8 }, (_, i) => `${line(i + 1)}\n`).join("");
		await env.OUTPUT.put(key, all, { customMetadata: { lines: "8" } });
		const tail = async (n: number) => (await call(`/v1/jobs/${job.id}/output?lines=${n}`)).text();
		const last = (n: number) => all.split("\n").slice(0, -1).slice(-n).map((l) => `${l}\n`).join("");
		expect(await tail(7)).toBe(last(7));
		expect(await tail(100_000)).toBe(all);
		expect(await tail(2)).toBe(last(2));

		// Live: the last N as they were when asked, a batch at a time.
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({ name: "tail-live", tools: [{ type: "webhook", name: "create_ticket", description: "Create.", url_secret: "TEST_TICKETS_URL", requires_approval: true }] });
		const live = await runToRest("tail-live");
		await runInDurableObject(env.AGENT.getByName("tail-live"), (instance: AgentDO) => {
			for (let i = 0; i < 1200; i++) AgentDO.appendOutput(instance, live.id, [{ type: "system", subtype: "note", content: `note ${i}` }]);
		});
		const whole = (await (await call(`/v1/jobs/${live.id}/output`)).text()).trimEnd().split("\n");
		const liveTail = (await (await call(`/v1/jobs/${live.id}/output?lines=1100`)).text()).trimEnd().split("\n");
		expect(liveTail).toEqual(whole.slice(-1100));
		expect((await (await call(`/v1/jobs/${live.id}/output?lines=100000`)).text()).trimEnd().split("\n")).toEqual(whole);
	});
});

describe("?lines=N names its first line (X-Drover-First-Line)", () => {
	/** The tail's lines and its header's first line, checked against the job's whole output. */
	async function tailOf(id: string, n: number): Promise<{ first: number; lines: string[] }> {
		const res = await call(`/v1/jobs/${id}/output?lines=${n}`);
		expect(res.status).toBe(200);
		const first = Number(res.headers.get("x-drover-first-line"));
		return { first, lines: (await res.text()).split("\n").filter(Boolean) };
	}

	it("so that the tail's lines are numbered without the whole output: finished, large, live and empty", async () => {
		// Finished, read from R2's end in one window.
		const job = await finishedJob("first-line");
		const whole = (await (await call(`/v1/jobs/${job.id}/output`)).text()).trimEnd().split("\n");
		expect(whole).toHaveLength(9);
		expect(await tailOf(job.id, 2)).toEqual({ first: 8, lines: whole.slice(-2) });
		expect(await tailOf(job.id, 100_000)).toEqual({ first: 1, lines: whole });

		// Lines too long for the window: the tail is read on from a line number.
		const key = `jobs/first-line/${job.id}.jsonl`;
		const line = (i: number) => JSON.stringify({ type: "tool_result", n: i, result: "x".repeat(700_000) });
		await env.OUTPUT.put(key, Array.from({ length: 8 }, (_, i) => `${line(i + 1)}\n`).join(""), { customMetadata: { lines: "8" } });
		const long = await tailOf(job.id, 7);
		expect(long.first).toBe(2);
		expect(long.lines.map((l) => (JSON.parse(l) as { n: number }).n)).toEqual([2, 3, 4, 5, 6, 7, 8]);

		// Live, from the agent's SQLite.
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({ name: "first-line-live", tools: [{ type: "webhook", name: "create_ticket", description: "Create.", url_secret: "TEST_TICKETS_URL", requires_approval: true }] });
		const live = await runToRest("first-line-live");
		expect(live.status).toBe("approval_pending");
		const liveWhole = (await (await call(`/v1/jobs/${live.id}/output`)).text()).trimEnd().split("\n");
		expect(liveWhole).toHaveLength(4);
		expect(await tailOf(live.id, 3)).toEqual({ first: 2, lines: liveWhole.slice(-3) });
		expect(await tailOf(live.id, 10)).toEqual({ first: 1, lines: liveWhole });

		// No output yet: the number its first line will take.
		const { pending } = lifecycleRecords("first-line-empty", new Date());
		await saveJob("first-line-empty", pending);
		await upsertJobIndex(env.DB, [pending]);
		expect(await tailOf(pending.id, 5)).toEqual({ first: 1, lines: [] });
	});

	it("gives a live job's last lines as they were when asked, not those written while the answer is read", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({ name: "first-line-moving", tools: [{ type: "webhook", name: "create_ticket", description: "Create.", url_secret: "TEST_TICKETS_URL", requires_approval: true }] });
		const live = await runToRest("first-line-moving");
		const agent = env.AGENT.getByName("first-line-moving");
		// 4 lines of the run, then 20 of 500 KB: more than the answer's pipe holds before it is read.
		await runInDurableObject(agent, (instance: AgentDO) => {
			for (let i = 0; i < 20; i++) AgentDO.appendOutput(instance, live.id, [{ type: "system", subtype: "note", content: "x".repeat(500_000) }]);
		});
		const res = await call(`/v1/jobs/${live.id}/output?lines=100000`);
		expect(res.headers.get("x-drover-first-line")).toBe("1");
		await runInDurableObject(agent, (instance: AgentDO) => {
			for (let i = 0; i < 3; i++) AgentDO.appendOutput(instance, live.id, [{ type: "system", subtype: "note", content: `note ${i}` }]);
		});
		// Lines 1-24: a client following on after line 24 gets the three notes from the stream, once.
		expect((await res.text()).split("\n").filter(Boolean)).toHaveLength(24);
		const after = await readEvents(await call(`/v1/jobs/${live.id}/stream`, { headers: { "last-event-id": "24" } }), (_e, all) => all.filter((e) => e.event === "line").length === 3);
		expect(after.filter((e) => e.event === "line").map((e) => e.id)).toEqual(["25", "26", "27"]);
	});

	it("is in the OpenAPI document", async () => {
		const doc = (await (await call("/openapi.json", { as: null })).json()) as { paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>> };
		expect(Object.keys(doc.paths["/v1/jobs/{id}/output"]!.get!.responses["200"]!.headers ?? {})).toContain("X-Drover-First-Line");
	});
});

describe("?after=A&lines=N of job output", () => {
	/** The answer's lines and its header's first line. */
	async function part(id: string, after: number, n: number): Promise<{ first: number; lines: string[] }> {
		const res = await call(`/v1/jobs/${id}/output?after=${after}&lines=${n}`);
		expect(res.status, await res.clone().text()).toBe(200);
		return { first: Number(res.headers.get("x-drover-first-line")), lines: (await res.text()).split("\n").filter(Boolean) };
	}

	it("gives the N lines after line A, numbered, from R2 for a finished job and from the agent for a live one", async () => {
		const job = await finishedJob("part-finished");
		const whole = (await (await call(`/v1/jobs/${job.id}/output`)).text()).trimEnd().split("\n");
		expect(whole).toHaveLength(9);
		expect(await part(job.id, 0, 3)).toEqual({ first: 1, lines: whole.slice(0, 3) });
		expect(await part(job.id, 4, 2)).toEqual({ first: 5, lines: whole.slice(4, 6) });
		// Fewer at the end; none after the last line.
		expect(await part(job.id, 7, 100)).toEqual({ first: 8, lines: whole.slice(7) });
		expect(await part(job.id, 9, 5)).toEqual({ first: 10, lines: [] });
		// Lines too long for a window from the end: read from the object's start, streamed.
		const key = `jobs/part-finished/${job.id}.jsonl`;
		const long = (i: number) => JSON.stringify({ type: "tool_result", n: i, result: "x".repeat(700_000) });
		await env.OUTPUT.put(key, Array.from({ length: 9 }, (_, i) => `${long(i + 1)}\n`).join(""), { customMetadata: { lines: "9" } });
		const numbers = async (after: number, n: number) => {
			const { first, lines } = await part(job.id, after, n);
			return [first, lines.map((l) => (JSON.parse(l) as { n: number }).n)];
		};
		expect(await numbers(1, 2)).toEqual([2, [2, 3]]);
		expect(await numbers(6, 5)).toEqual([7, [7, 8, 9]]);
		expect(await numbers(0, 9)).toEqual([1, [1, 2, 3, 4, 5, 6, 7, 8, 9]]);

		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({ name: "part-live", tools: [{ type: "webhook", name: "create_ticket", description: "Create.", url_secret: "TEST_TICKETS_URL", requires_approval: true }] });
		const live = await runToRest("part-live");
		await runInDurableObject(env.AGENT.getByName("part-live"), (instance: AgentDO) => {
			for (let i = 0; i < 1200; i++) AgentDO.appendOutput(instance, live.id, [{ type: "system", subtype: "note", content: `note ${i}` }]);
		});
		const liveWhole = (await (await call(`/v1/jobs/${live.id}/output`)).text()).trimEnd().split("\n");
		expect(liveWhole).toHaveLength(1204);
		// Across the agent's batches of 500.
		expect(await part(live.id, 100, 1000)).toEqual({ first: 101, lines: liveWhole.slice(100, 1100) });
		expect(await part(live.id, 1200, 10)).toEqual({ first: 1201, lines: liveWhole.slice(1200) });
	});

	it("is a 400 for an after past the job's last line or without lines, changing nothing", async () => {
		const job = await finishedJob("part-refused");
		const past = await call(`/v1/jobs/${job.id}/output?after=10&lines=5`);
		expect(past.status).toBe(400);
		expect((await errorOf(past)).message).toBe(`after 10 is past job ${job.id}'s last line (9)`);
		const alone = await call(`/v1/jobs/${job.id}/output?after=2`);
		expect(alone.status).toBe(400);
		expect(await errorOf(alone)).toMatchObject({ message: "after names the line the answer's lines follow, and needs lines= to say how many (up to 100000)", details: { issues: [{ path: "after" }] } });
		for (const bad of ["-1", "x", "1.5"]) expect((await call(`/v1/jobs/${job.id}/output?after=${bad}&lines=5`)).status, bad).toBe(400);
	});
});

describe("a consolidated output of several MiB", () => {
	it("is read from the last line mark before the lines asked for: ?after=A&lines=N, a resumed stream and a tail give every line once", async () => {
		const name = "marked-output";
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } }, { text: "Filed." });
		fake("https://tickets.example.test", () => Response.json({ id: 7 }));
		await createAgent({ name, tools: [{ type: "webhook", name: "create_ticket", description: "Create.", url_secret: "TEST_TICKETS_URL", requires_approval: true }] });
		const job = await runToRest(name);
		expect(job.status).toBe("approval_pending");
		// 1,500 lines of about 4 KB: about 6 MB, so a mark about every MiB.
		await runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO) => {
			for (let i = 0; i < 1500; i++) AgentDO.appendOutput(instance, job.id, [{ type: "system", subtype: "note", content: `${i} ${"y".repeat(4000)}` }]);
		});
		expect((await call(`/v1/jobs/${job.id}/approval`, { method: "POST", as: "operate", body: { decision: "approve" } })).status).toBe(200);
		await settle(name);
		expect((await jobOf(name, job.id)).status).toBe("completed");

		const stored = (await (await env.OUTPUT.get(`jobs/${name}/${job.id}.jsonl`))!.text()).trimEnd().split("\n");
		const total = stored.length;
		expect(total).toBeGreaterThan(1500);
		const marks = await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) =>
			JSON.parse(state.storage.sql.exec<{ marks: string }>("SELECT marks FROM output_state WHERE job_id = ?", job.id).one().marks) as [number, number][],
		);
		expect(marks.length).toBeGreaterThanOrEqual(5);
		// Each mark is where its line starts in the object.
		const starts = [0];
		for (const line of stored) starts.push(starts.at(-1)! + new TextEncoder().encode(line).byteLength + 1);
		for (const [line, offset] of marks) expect(offset, `line ${line}`).toBe(starts[line - 1]);

		const part = async (after: number, n: number) => {
			const res = await call(`/v1/jobs/${job.id}/output?after=${after}&lines=${n}`);
			expect(res.status).toBe(200);
			return { first: Number(res.headers.get("x-drover-first-line")), lines: (await res.text()).split("\n").filter(Boolean) };
		};
		const [second, third] = [marks[1]![0], marks[2]![0]];
		for (const after of [0, second - 2, second - 1, second, third - 1, Math.floor(total / 2), marks.at(-1)![0] - 1, total - 2, total]) {
			expect(await part(after, 3), `after ${after}`).toEqual({ first: after + 1, lines: stored.slice(after, after + 3) });
		}
		// Across marks, more lines than a batch.
		expect(await part(second - 10, 800)).toEqual({ first: second - 9, lines: stored.slice(second - 10, second + 790) });
		expect((await (await call(`/v1/jobs/${job.id}/output?lines=${total - second + 2}`)).text()).trimEnd().split("\n")).toEqual(stored.slice(second - 2));

		const events = await readEvents(await call(`/v1/jobs/${job.id}/stream`, { headers: { "last-event-id": String(third - 1) } }));
		const lines = events.filter((e) => e.event === "line");
		expect(lines.map((e) => Number(e.id))).toEqual(Array.from({ length: total - third + 1 }, (_, i) => third + i));
		expect(lines.map((e) => e.data)).toEqual(stored.slice(third - 1));
		expect(events.at(-1)).toMatchObject({ event: "end" });

		// The reads start at the marks, not at byte 0: with a byte of line 1 made a newline (the same
		// size, the object's line count one more), a read from byte 0 would give every line one later.
		const split = `${stored[0]!.slice(0, 10)}\n${stored[0]!.slice(11)}`;
		await env.OUTPUT.put(`jobs/${name}/${job.id}.jsonl`, `${[split, ...stored.slice(1)].join("\n")}\n`, { customMetadata: { lines: String(total) } });
		expect((await part(0, 1)).lines).toEqual([stored[0]!.slice(0, 10)]);
		expect(await part(third - 1, 3)).toEqual({ first: third, lines: stored.slice(third - 1, third + 2) });
		// A tail past a window from the end: from the first mark, the lines numbered from it.
		const tailFromMark = await call(`/v1/jobs/${job.id}/output?lines=${total - marks[0]![0] + 1}`);
		expect(tailFromMark.headers.get("x-drover-first-line")).toBe(String(marks[0]![0]));
		expect((await tailFromMark.text()).trimEnd().split("\n")).toEqual(stored.slice(marks[0]![0] - 1));
		const resumed = (await readEvents(await call(`/v1/jobs/${job.id}/stream`, { headers: { "last-event-id": String(total - 2) } }))).filter((e) => e.event === "line");
		expect(resumed.map((e) => [Number(e.id), e.data])).toEqual([[total - 1, stored[total - 2]], [total, stored[total - 1]]]);
	}, 30_000);
});

describe("Range on job output (RFC 9110 §14)", () => {
	const bytesOf = (text: string) => new TextEncoder().encode(text).length;

	async function expect416(id: string, range: string, size: number, says: RegExp) {
		const res = await call(`/v1/jobs/${id}/output`, { headers: { range } });
		expect(res.status, range).toBe(416);
		expect(res.headers.get("content-range"), range).toBe(`bytes */${size}`);
		expect(res.headers.get("content-type"), range).toMatch(/^application\/json/);
		const error = await errorOf(res);
		expect(error.code).toBe("range_not_satisfiable");
		expect(error.message).toMatch(says);
	}

	/** Headers that are not one valid bytes range are ignored: 200 with the whole output. */
	const IGNORED = ["bytes=10-5", "bytes=9007199254740993-9007199254740992", "items=0-5", "bytes 0-5", "bytes=abc", "bytes=", "bytes=-", "bytes=0-5,10-20", "bytes=1-2-3", "bytes=+1-5", "bytes=0x10-"];

	it("answers 416 with a JSON error and the size past the end of an ended job's output, and ignores invalid ranges", async () => {
		const job = await finishedJob("range-rfc");
		const full = await (await call(`/v1/jobs/${job.id}/output`)).text();
		const size = bytesOf(full);
		await expect416(job.id, `bytes=${size}-`, size, new RegExp(`output, which is ${size} bytes \\(0-${size - 1}\\)`));
		await expect416(job.id, `bytes=${size}-${size + 10}`, size, /is outside job \S+'s output, which is/);
		await expect416(job.id, "bytes=-0", size, /is outside job \S+'s output, which is/);
		for (const range of IGNORED) {
			const res = await call(`/v1/jobs/${job.id}/output`, { headers: { range } });
			expect(res.status, range).toBe(200);
			expect(res.headers.get("content-range"), range).toBeNull();
			expect(await res.text(), range).toBe(full);
		}
		// drover sends no validator, so an If-Range cannot match: the whole output, not the part.
		const ifRange = await call(`/v1/jobs/${job.id}/output`, { headers: { range: "bytes=0-9", "if-range": '"some-etag"' } });
		expect(ifRange.status).toBe(200);
		expect(await ifRange.text()).toBe(full);
		// The unit is case-insensitive, and the last byte is the last one that can be asked for.
		const last = await call(`/v1/jobs/${job.id}/output`, { headers: { range: `Bytes=${size - 1}-` } });
		expect(last.status).toBe(206);
		expect(last.headers.get("content-range")).toBe(`bytes ${size - 1}-${size - 1}/${size}`);
		expect(await last.text()).toBe("\n");
	});

	it("behaves the same for a live job's output served by its agent", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({
			name: "range-rfc-live",
			tools: [{ type: "webhook", name: "create_ticket", description: "Create.", url_secret: "TEST_TICKETS_URL", requires_approval: true }],
		});
		const live = await runToRest("range-rfc-live");
		expect(live.status).toBe("approval_pending");
		const full = await (await call(`/v1/jobs/${live.id}/output`)).text();
		const size = bytesOf(full);
		await expect416(live.id, `bytes=${size}-`, size, new RegExp(`output, which is ${size} bytes \\(0-${size - 1}\\)`));
		for (const range of IGNORED) {
			const res = await call(`/v1/jobs/${live.id}/output`, { headers: { range } });
			expect(res.status, range).toBe(200);
			expect(await res.text(), range).toBe(full);
		}
	});

	it("answers a pending job's empty output with 416 bytes */0 for a first-pos, and the empty body for a suffix", async () => {
		// A queued job that has not started: no line written yet.
		const { pending } = lifecycleRecords("range-rfc-pending", new Date());
		await saveJob("range-rfc-pending", pending);
		await upsertJobIndex(env.DB, [pending]);
		expect((await jobOf("range-rfc-pending", pending.id)).status).toBe("pending");
		expect(await (await call(`/v1/jobs/${pending.id}/output`)).text()).toBe("");
		await expect416(pending.id, "bytes=0-", 0, /output, which is empty \(0 bytes\)/);
		await expect416(pending.id, "bytes=0-99", 0, /output, which is empty \(0 bytes\)/);
		// A non-zero suffix is satisfiable even at zero length (§14.1.2); Content-Range cannot say "0 bytes", so the whole, empty, body.
		const suffix = await call(`/v1/jobs/${pending.id}/output`, { headers: { range: "bytes=-10" } });
		expect(suffix.status).toBe(200);
		expect(await suffix.text()).toBe("");
	});
});

describe("Range with ?lines= on job output", () => {
	it("is a 400 saying to send one of them, for any Range header, before the job is looked up; either alone is served", async () => {
		const { pending } = lifecycleRecords("range-and-lines", new Date());
		await saveJob("range-and-lines", pending);
		await upsertJobIndex(env.DB, [pending]);
		const message = "a Range header and ?lines= each ask for a part of the output, and do not go together; send one of them";
		// A Range drover would serve, one it would ignore, and one with an If-Range that voids it: all ask for something else than ?lines=.
		const asks: Record<string, string>[] = [{ range: "bytes=0-9" }, { range: "items=0-5" }, { range: "bytes=0-9", "if-range": '"etag"' }];
		for (const headers of asks) {
			for (const id of [pending.id, "job-2026-01-01-zzzzzz"]) {
				const res = await call(`/v1/jobs/${id}/output?lines=2`, { headers });
				expect(res.status, JSON.stringify(headers)).toBe(400);
				const error = await errorOf(res);
				expect(error.code).toBe("bad_request");
				expect(error.message).toBe(message);
				expect(error.details?.issues).toEqual([{ path: "lines", message: "not with a Range header: send one or the other" }]);
			}
		}
		expect((await call(`/v1/jobs/${pending.id}/output?lines=2`)).status).toBe(200);
		expect((await call(`/v1/jobs/${pending.id}/output`, { headers: { range: "bytes=-10" } })).status).toBe(200);
		expect((await jobOf("range-and-lines", pending.id)).revision).toBe(pending.revision);

		// The OpenAPI document says so.
		const doc = (await (await call("/openapi.json", { as: null })).json()) as { paths: Record<string, Record<string, { description?: string; responses: Record<string, { description: string }> }>> };
		const op = doc.paths["/v1/jobs/{id}/output"]!.get!;
		expect(op.description).toMatch(/not both/);
		expect(op.responses["400"]!.description).toMatch(/Range header together with \?lines=/);
	});
});

describe("GET /v1/jobs/:id/stream", () => {
	it("resumes after every Last-Event-ID of a finished job with no line lost or repeated", async () => {
		const job = await finishedJob("sse-resume");
		const total = (await (await call(`/v1/jobs/${job.id}/output`)).text()).trimEnd().split("\n").length;
		expect(total).toBe(9);
		for (let after = 0; after <= total; after++) {
			const res = await call(`/v1/jobs/${job.id}/stream`, { headers: { "last-event-id": String(after) } });
			expect(res.headers.get("content-type")).toBe("text/event-stream");
			const events = await readEvents(res);
			const ids = events.filter((e) => e.event === "line").map((e) => Number(e.id));
			expect(ids).toEqual(Array.from({ length: total - after }, (_, i) => after + i + 1));
			expect(events.at(-2)).toMatchObject({ event: "status" });
			expect(JSON.parse(events.at(-2)!.data).status).toBe("completed");
			expect(events.at(-1)).toMatchObject({ event: "end" });
		}
	});

	it("is cut, not ended as an empty output, when the job's R2 object is gone (retention deleting it)", async () => {
		const job = await finishedJob("sse-gone");
		for (const o of (await env.OUTPUT.list({ prefix: "jobs/sse-gone/" })).objects) await env.OUTPUT.delete(o.key);
		// A stream, opened and cut: not an error answer, which a client would take as the job's end.
		const res = await call(`/v1/jobs/${job.id}/stream`);
		expect(res.status).toBe(200);
		expect(res.headers.get("content-type")).toBe("text/event-stream");
		const events = await readEvents(res);
		// No end: a client reconnects, and finds the job gone once retention has deleted its record.
		expect(events.filter((e) => e.event === "end")).toEqual([]);
		expect(events.filter((e) => e.event === "line")).toEqual([]);
	});

	it("starts after ?after= as after Last-Event-ID (the header wins); a bad one or an unknown parameter is a 400 naming it", async () => {
		const job = await finishedJob("sse-after");
		const lineIds = async (query: string, headers: Record<string, string> = {}) =>
			(await readEvents(await call(`/v1/jobs/${job.id}/stream${query}`, { headers }))).filter((e) => e.event === "line").map((e) => Number(e.id));
		expect(await lineIds("?after=7")).toEqual([8, 9]);
		expect(await lineIds("?after=3", { "last-event-id": "8" })).toEqual([9]);
		for (const [query, path] of [["?after=abc", "after"], ["?from=3", ""]] as const) {
			const res = await call(`/v1/jobs/${job.id}/stream${query}`);
			expect(res.status, query).toBe(400);
			const error = await errorOf(res);
			expect(error.message).toMatch(/^invalid query: /);
			if (path) expect(error.details?.issues).toEqual([{ path, message: "must be a line number" }]);
		}
	});

	it("refuses a Last-Event-ID past the job's last line (another job's, or made up) with a 400 naming it, finished or live, rather than a stream that shows nothing", async () => {
		const done = await finishedJob("sse-past-end");
		// Exactly the last line: nothing more to send, the status and the end.
		const atEnd = await readEvents(await call(`/v1/jobs/${done.id}/stream`, { headers: { "last-event-id": "9" } }));
		expect(atEnd.map((e) => e.event)).toEqual(["status", "end"]);
		for (const [query, headers] of [["", { "last-event-id": "10" }], ["?after=999999999999", {}]] as const) {
			const res = await call(`/v1/jobs/${done.id}/stream${query}`, { headers });
			expect(res.status, query).toBe(400);
			expect((await errorOf(res)).message).toBe(`Last-Event-ID ${query ? "999999999999" : "10"} is past job ${done.id}'s last line (9): it is not a line of this job's stream`);
		}

		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } }, { text: "Filed." });
		fake("https://tickets.example.test", () => Response.json({ id: 7 }));
		await createAgent({ name: "sse-past-live", tools: [{ type: "webhook", name: "create_ticket", description: "Create.", url_secret: "TEST_TICKETS_URL", requires_approval: true }] });
		const live = await runToRest("sse-past-live");
		expect(live.status).toBe("approval_pending");
		const res = await call(`/v1/jobs/${live.id}/stream`, { headers: { "last-event-id": "5" } });
		expect(res.status).toBe(400);
		expect((await errorOf(res)).message).toBe(`Last-Event-ID 5 is past job ${live.id}'s last line (4): it is not a line of this job's stream`);
		// A job yet to write a line has none to resume after.
		const pending = await trigger("sse-past-live");
		expect((await call(`/v1/jobs/${pending.id}/stream`, { headers: { "last-event-id": "1" } })).status).toBe(400);
	});

	it("delivers a live job's lines and status changes as they happen, then ends", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } }, { text: "Filed." });
		fake("https://tickets.example.test", () => Response.json({ id: 7 }));
		await createAgent({
			name: "sse-live",
			tools: [{ type: "webhook", name: "create_ticket", description: "Create.", url_secret: "TEST_TICKETS_URL", requires_approval: true }],
		});
		const job = await runToRest("sse-live");
		const res = await call(`/v1/jobs/${job.id}/stream`);
		const seenSoFar = await readEvents(res.clone(), (e) => e.event === "status");
		expect(seenSoFar.filter((e) => e.event === "line").map((e) => e.id)).toEqual(["1", "2", "3", "4"]);
		expect(JSON.parse(seenSoFar.at(-1)!.data).status).toBe("approval_pending");

		const approved = call(`/v1/jobs/${job.id}/approval`, { method: "POST", as: "operate", body: { decision: "approve" } });
		const all = readEvents(res);
		await approved;
		await settle("sse-live");
		const events = await all;
		const ids = events.filter((e) => e.event === "line").map((e) => Number(e.id));
		expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
		const statuses = events.filter((e) => e.event === "status").map((e) => JSON.parse(e.data).status);
		expect(statuses[0]).toBe("approval_pending");
		expect(statuses.at(-1)).toBe("completed");
		expect(events.at(-1)!.event).toBe("end");
		expect((await jobOf("sse-live", job.id)).status).toBe("completed");
	});
});

describe("GET /v1/agents/:agent/jobs", () => {
	it("lists the agent's jobs newest first", async () => {
		useEmulator().enqueue({ text: "a" }, { text: "b" });
		await createAgent({ name: "agent-jobs" });
		const first = await runToRest("agent-jobs");
		const second = await runToRest("agent-jobs");
		const res = await call("/v1/agents/agent-jobs/jobs?limit=1");
		const page = (await res.json()) as { jobs: { id: string }[]; next_cursor: string | null };
		expect(page.jobs.map((j) => j.id)).toEqual([second.id]);
		const next = (await (await call(`/v1/agents/agent-jobs/jobs?limit=1&cursor=${page.next_cursor}`)).json()) as { jobs: { id: string }[] };
		expect(next.jobs.map((j) => j.id)).toEqual([first.id]);
	});

	it("lists a deleted agent's jobs, filtered too (an empty page when none match); a name never defined is a 404", async () => {
		useEmulator().enqueue({ text: "done" });
		await createAgent({ name: "agent-jobs-gone" });
		const job = await runToRest("agent-jobs-gone");
		expect((await call("/v1/agents/agent-jobs-gone", { method: "DELETE", as: "admin" })).status).toBe(200);
		const list = async (query: string) => {
			const res = await call(`/v1/agents/agent-jobs-gone/jobs${query}`);
			expect(res.status, query).toBe(200);
			return ((await res.json()) as { jobs: { id: string }[] }).jobs.map((j) => j.id);
		};
		expect(await list("")).toEqual([job.id]);
		expect(await list("?status=completed")).toEqual([job.id]);
		expect(await list("?status=failed")).toEqual([]);
		const never = await call("/v1/agents/agent-jobs-never/jobs?status=failed");
		expect(never.status).toBe(404);
		expect((await errorOf(never)).message).toBe("no agent named agent-jobs-never");
	});
});

describe("the D1 index outbox", () => {
	it("keeps every change while D1 fails, and catches up when it returns", async () => {
		useEmulator().enqueue({ text: "indexed later" });
		await createAgent({ name: "d1-down" });
		const stub = env.AGENT.getByName("d1-down");
		await breakD1("d1-down");
		const job = await trigger("d1-down");
		await settle("d1-down");
		expect((await jobOf("d1-down", job.id)).status).toBe("completed");
		// The index is behind, not wrong: it never saw the job; the changes wait in the outbox.
		expect(await (await call("/v1/jobs?agent=d1-down")).json()).toEqual({ jobs: [], next_cursor: null });
		const status = (await (await call("/v1/agents/d1-down")).json()) as { last_job: { status: string } };
		expect(status.last_job.status).toBe("completed");
		const backlog = await stub.status("d1-down", "api");
		expect(backlog.index_backlog).toBeGreaterThan(0);

		await restoreEnv("d1-down");
		await runInDurableObject(stub, (instance: AgentDO) => instance.alarm());
		const indexed = (await (await call("/v1/jobs?agent=d1-down")).json()) as { jobs: { id: string; status: string; revision: number }[] };
		const record = await jobOf("d1-down", job.id);
		expect(indexed.jobs).toEqual([expect.objectContaining({ id: job.id, status: "completed", revision: record.revision })]);
		expect((await stub.status("d1-down", "api")).index_backlog).toBe(0);
	});

	it("indexes a running job at its next heartbeat after D1 failed for a moment, so it can be found and cancelled while it runs", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "done" });
		const { arrived: calling, release } = heldModel(emulator);
		await createAgent({ name: "d1-blip" });
		const stub = env.AGENT.getByName("d1-blip");
		type Swappable = { env: Env };
		// D1 refuses the object's next two batches (the trigger's flush and the pass's first), then is back.
		await runInDurableObject(stub, (instance: AgentDO) => {
			const self = instance as unknown as Swappable;
			const real = self.env;
			let failures = 2;
			self.env = {
				...real,
				DB: new Proxy(real.DB, {
					get: (target, prop) =>
						prop === "batch" ? (stmts: D1PreparedStatement[]) => (failures-- > 0 ? Promise.reject(new Error("D1_ERROR: transient")) : target.batch(stmts)) : Reflect.get(target, prop),
				}),
			};
		});
		const job = await trigger("d1-blip");
		await calling;
		// The model call is out, and its pass with it; the heartbeat alarm fires meanwhile.
		await runDurableObjectAlarm(stub);
		const found = await call(`/v1/jobs/${job.id}`);
		expect(found.status).toBe(200);
		expect(((await found.json()) as { status: string }).status).toBe("running");
		const listed = (await (await call("/v1/jobs?agent=d1-blip")).json()) as { jobs: { id: string }[] };
		expect(listed.jobs.map((j) => j.id)).toEqual([job.id]);
		const cancel = await call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "operate", body: {} });
		expect(cancel.status).toBe(200);
		release();
		await settle("d1-blip");
		expect((await jobOf("d1-blip", job.id)).status).toBe("cancelled");
		const ended = (await (await call(`/v1/jobs/${job.id}`)).json()) as { status: string };
		expect(ended.status).toBe("cancelled");
	});
});

/** Makes a job and its ledger row `days` older, as if that much time had passed since it ran. */
async function age(agent: string, jobId: string, days: number): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => {
		const shift = days * 86_400_000;
		const row = state.storage.sql.exec<{ record: string }>("SELECT record FROM jobs WHERE id = ?", jobId).one();
		const record = JSON.parse(row.record) as Record<string, unknown>;
		for (const field of ["created_at", "started_at", "finished_at"]) {
			if (typeof record[field] === "string") record[field] = new Date(Date.parse(record[field] as string) - shift).toISOString();
		}
		state.storage.sql.exec("UPDATE jobs SET created_at = created_at - ?, record = ? WHERE id = ?", shift, JSON.stringify(record), jobId);
		state.storage.sql.exec(
			"UPDATE occurrences SET claimed_at = claimed_at - ?1, started_at = started_at - ?1, finished_at = finished_at - ?1, retain_until = retain_until - ?1 WHERE job_id = ?2",
			shift,
			jobId,
		);
	});
}

describe("retention", () => {
	it("prunes jobs past their agent's retention from the agent, the D1 index and R2", async () => {
		useEmulator().enqueue({ text: "old" }, { text: "new" });
		await createAgent({ name: "retained", retention_days: 7 });
		const old = await runToRest("retained");
		const recent = await runToRest("retained");
		const stub = env.AGENT.getByName("retained");
		// Age the first job by ten days.
		await age("retained", old.id, 10);
		expect(await env.OUTPUT.head(`jobs/retained/${old.id}.jsonl`)).not.toBeNull();
		const pruned = await runInDurableObject(stub, (instance: AgentDO) => AgentDO.prune(instance, Date.now(), true));
		expect(pruned).toBe(1);
		await runInDurableObject(stub, (instance: AgentDO) => instance.alarm());

		expect(await stub.getJob(old.id)).toBeNull();
		expect(await env.OUTPUT.head(`jobs/retained/${old.id}.jsonl`)).toBeNull();
		expect((await call(`/v1/jobs/${old.id}`)).status).toBe(404);
		const listed = (await (await call("/v1/jobs?agent=retained")).json()) as { jobs: { id: string }[] };
		expect(listed.jobs.map((j) => j.id)).toEqual([recent.id]);
		expect(await env.OUTPUT.head(`jobs/retained/${recent.id}.jsonl`)).not.toBeNull();
		expect((await stub.runs(10)).map((r) => r.job_id)).toEqual([recent.id]);
		// Nothing of it is left in the agent's storage, in any table (its conversation included): every
		// table with a job_id column, whatever later schema steps add, is searched; the recent job's rows stay.
		expect(await jobRowsOf("retained", old.id)).toEqual({});
		expect(await jobRowsOf("retained", recent.id)).toMatchObject({ messages: 2, occurrences: 1 });
	});

	it("keeps a job for its retention after it finished, however long ago it was queued", async () => {
		useEmulator().enqueue({ text: "late but done" });
		await createAgent({ name: "queued-long", retention_days: 7 });
		const job = await runToRest("queued-long");
		const stub = env.AGENT.getByName("queued-long");
		// Made ten days ago (queued across a long pause, say), finished just now.
		await runInDurableObject(stub, (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE jobs SET created_at = created_at - ? WHERE id = ?", 10 * 86_400_000, job.id);
		});
		expect(await runInDurableObject(stub, (instance: AgentDO) => AgentDO.prune(instance, Date.now(), true))).toBe(0);
		expect(await stub.getJob(job.id)).not.toBeNull();
		expect(await env.OUTPUT.head(`jobs/queued-long/${job.id}.jsonl`)).not.toBeNull();
	});

	it("prunes a job's delivery with it: the answer it carried is not kept past retention", async () => {
		useEmulator().enqueue({ text: "Private findings." }, { text: "Newer findings." });
		fake("https://deliver.example.test", () => new Response("ok"));
		await createAgent({ name: "delivered", retention_days: 7, delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		const old = await runToRest("delivered");
		const recent = await runToRest("delivered");
		const stub = env.AGENT.getByName("delivered");
		const deliveries = () =>
			runInDurableObject(stub, (_i: AgentDO, state) => state.storage.sql.exec<{ id: string; status: string }>("SELECT id, status FROM deliveries ORDER BY id").toArray());
		expect(await deliveries()).toEqual(
			[`${old.id}:delivery`, `${recent.id}:delivery`].sort().map((id) => ({ id, status: "delivered" })),
		);
		await age("delivered", old.id, 10);
		expect(await runInDurableObject(stub, (instance: AgentDO) => AgentDO.prune(instance, Date.now(), true))).toBe(1);
		expect(await deliveries()).toEqual([{ id: `${recent.id}:delivery`, status: "delivered" }]);
	});

	it("works off more than a batch of expired jobs in passes a second apart, not one batch an hour", async () => {
		await createAgent({ name: "backlog", retention_days: 7 });
		const stub = env.AGENT.getByName("backlog");
		const ids = await runInDurableObject(stub, (_i: AgentDO, state) => {
			// 120 jobs that ended ten days ago (a month of a busy agent, in small) and one from today.
			const made: string[] = [];
			for (let i = 0; i <= 120; i++) {
				const at = new Date(Date.now() - (i < 120 ? 10 * 86_400_000 - i * 60_000 : 60_000));
				const job = endedRecord("backlog", at);
				storeRun(state.storage.sql, job);
				made.push(job.id);
			}
			return made;
		});
		const held = () => runInDurableObject(stub, (_i: AgentDO, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM jobs").one().n);

		// The first pass prunes a batch, and leaves an alarm for the next one a second later.
		await runInDurableObject(stub, (instance: AgentDO) => instance.alarm());
		expect(await held()).toBe(71);
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		expect(await held()).toBe(21);
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		expect(await held()).toBe(1);
		// Nothing left past retention: the next pass is due when today's job passes it, in a week.
		const kept = await jobOf("backlog", ids[120]!);
		expect(await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.getAlarm())).toBe(Date.parse(kept.finished_at!) + 7 * 86_400_000);

		const listed = (await (await call("/v1/jobs?agent=backlog")).json()) as { jobs: { id: string }[] };
		expect(listed.jobs.map((j) => j.id)).toEqual([ids[120]]);
		const { results } = await env.DB.prepare("SELECT status, count(*) AS n FROM jobs GROUP BY status").all<{ status: string; n: number }>();
		const { jobs: counted } = (await (await call("/v1/status")).json()) as { jobs: Record<string, number> };
		expect(counted).toEqual(Object.fromEntries(results.map((r) => [r.status, r.n])));
	});

	it("wakes a deleted agent, or one nothing triggers again, when its oldest job passes retention", async () => {
		useEmulator().enqueue({ text: "once" });
		await createAgent({ name: "left-alone", retention_days: 7 });
		const job = await runToRest("left-alone");
		const stub = env.AGENT.getByName("left-alone");
		const alarm = () => runInDurableObject(stub, (_i: AgentDO, state) => state.storage.getAlarm());
		const expiry = Date.parse(job.finished_at!) + 7 * 86_400_000;
		expect(await alarm()).toBe(expiry);

		// Deleted, it keeps its own retention, and the alarm that will prune its history.
		expect((await call("/v1/agents/left-alone", { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle("left-alone");
		expect(await alarm()).toBe(expiry);
		// Come the day, the job is older than its 7 days, and that alarm's pass prunes it.
		await age("left-alone", job.id, 8);
		const fresh = await runInDurableObject(stub, (instance: AgentDO) => AgentDO.prune(instance, Date.now(), true));
		expect(fresh).toBe(1);
		expect(await stub.getJob(job.id)).toBeNull();
		expect(await env.OUTPUT.head(`jobs/left-alone/${job.id}.jsonl`)).toBeNull();
	});

	it("keeps a deleted agent's history no longer than its own retention when the name is defined again with a longer one", async () => {
		useEmulator().enqueue({ text: "old agent's run" }, { text: "new agent's run" });
		await createAgent({ name: "reborn", retention_days: 7 });
		const old = await runToRest("reborn");
		const stub = env.AGENT.getByName("reborn");
		expect((await call("/v1/agents/reborn", { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle("reborn");
		await createAgent({ name: "reborn", retention_days: 365 });
		// The old run's week is where the alarm waits, not a year.
		expect(await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.getAlarm())).toBe(Date.parse(old.finished_at!) + 7 * 86_400_000);
		const recent = await runToRest("reborn");

		// Eight days on: the old agent's run is past its 7 days; the new agent's run keeps its year.
		await age("reborn", old.id, 8);
		await age("reborn", recent.id, 8);
		expect(await runInDurableObject(stub, (instance: AgentDO) => AgentDO.prune(instance, Date.now(), true))).toBe(1);
		expect(await stub.getJob(old.id)).toBeNull();
		expect(await env.OUTPUT.head(`jobs/reborn/${old.id}.jsonl`)).toBeNull();
		expect(await stub.getJob(recent.id)).not.toBeNull();
		expect((await stub.runs(10)).map((r) => r.job_id)).toEqual([recent.id]);
	});

	it("keeps a deleted agent's history no longer than its own retention when a deploy gives its name to a fleet.yaml agent", async () => {
		// An API agent of fleet.yaml's site-watch's name, from before the file had it, deleted since.
		const stub = env.AGENT.getByName("site-watch");
		await stub.define("site-watch", parseAgent({ name: "site-watch", prompt: "The API's own.", retention_days: 7 }), "api-revision");
		const old = await runInDurableObject(stub, (_i: AgentDO, state) => {
			const job = endedRecord("site-watch", new Date(Date.now() - 10 * 86_400_000));
			storeRun(state.storage.sql, job);
			return job;
		});
		expect(await stub.remove(Date.now())).toEqual({ deleted: "site-watch", cancelled: 0 });

		// The file agent takes the name (the deployment's 30 days): the old run's 7 days still hold.
		await stub.status("site-watch", "file");
		expect(await runInDurableObject(stub, (instance: AgentDO) => AgentDO.prune(instance, Date.now(), true))).toBe(1);
		expect(await stub.getJob(old.id)).toBeNull();
	});

	it("reads only what it may prune, not the agent's whole history, each hour", async () => {
		await createAgent({ name: "long-history", retention_days: 30 });
		const stub = env.AGENT.getByName("long-history");
		const rowsRead = await runInDurableObject(stub, async (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			// A week of history, none of it past 30 days, and one run of a deleted agent stamped to go.
			for (let i = 0; i < 300; i++) storeRun(sql, numberedRecord("long-history", new Date(Date.now() - 7 * 86_400_000 + i * 60_000), i));
			const stamped = endedRecord("long-history", new Date(Date.now() - 20 * 86_400_000));
			storeRun(sql, stamped);
			sql.exec("UPDATE occurrences SET retain_until = ? WHERE job_id = ?", Date.now() - 1, stamped.id);
			const reads = countingReads(sql);
			expect(await pruneJobs(reads.sql, env.OUTPUT, "long-history", Date.now() - 30 * 86_400_000, Date.now())).toBe(1);
			return reads.rowsRead();
		});
		// Read by every ended job (and its ledger row), it was over 600.
		expect(rowsRead).toBeLessThan(20);
	});

	it("reads a batch's worth of a retention backlog a pass, oldest first, not every expired job", async () => {
		await createAgent({ name: "long-backlog", retention_days: 30 });
		const stub = env.AGENT.getByName("long-backlog");
		const { pruned, gone, oldest, selectRead } = await runInDurableObject(stub, async (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			// 400 runs past 30 days (a lowered retention, or an agent long asleep), and one stamped to go.
			const jobs = Array.from({ length: 400 }, (_, i) => numberedRecord("long-backlog", new Date(Date.now() - 60 * 86_400_000 + i * 60_000), i));
			for (const job of jobs) storeRun(sql, job);
			const stamped = endedRecord("long-backlog", new Date(Date.now() - 10 * 86_400_000));
			storeRun(sql, stamped);
			sql.exec("UPDATE occurrences SET retain_until = ? WHERE job_id = ?", Date.now() - 1, stamped.id);
			const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
			const selecting = new Proxy(sql, {
				get(target, prop) {
					if (prop !== "exec") return Reflect.get(target, prop);
					return (query: string, ...bindings: unknown[]) => {
						const cursor = target.exec(query, ...bindings);
						if (/^\s*SELECT id FROM/.test(query)) cursors.push(cursor);
						return cursor;
					};
				},
			});
			const before = new Set(sql.exec<{ id: string }>("SELECT id FROM jobs").toArray().map((r) => r.id));
			const n = await pruneJobs(selecting, env.OUTPUT, "long-backlog", Date.now() - 30 * 86_400_000, Date.now());
			const left = new Set(sql.exec<{ id: string }>("SELECT id FROM jobs").toArray().map((r) => r.id));
			const gone = [...before].filter((id) => !left.has(id)).sort();
			return { pruned: n, gone, oldest: jobs.slice(0, 50).map((j) => j.id).sort(), selectRead: cursors.reduce((r, c) => r + c.rowsRead, 0) };
		});
		expect(pruned).toBe(50);
		expect(gone).toEqual(oldest);
		// About a batch three times over (each arm's 50, their union, its order); reading every
		// expired job's record before keeping 50, it was 1,204.
		expect(selectRead).toBeLessThan(250);
	});

	it("applies a shortened retention at once, not at the expiry set under the old one", async () => {
		useEmulator().enqueue({ text: "kept a month" });
		await createAgent({ name: "shortened", retention_days: 30 });
		const job = await runToRest("shortened");
		const stub = env.AGENT.getByName("shortened");
		await age("shortened", job.id, 10);
		const res = await call("/v1/agents/shortened", { method: "PUT", as: "admin", body: { name: "shortened", prompt: "Do the thing.", retention_days: 7 } });
		expect(res.status, await res.clone().text()).toBe(200);
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		expect(await stub.getJob(job.id)).toBeNull();
	});

	it("does not wake a paused agent hourly for a run it has held queued longer than its retention", async () => {
		useEmulator().enqueue({ text: "ran before the pause" });
		await createAgent({ name: "held-long", retention_days: 7 });
		const done = await runToRest("held-long");
		expect((await call("/v1/agents/held-long/pause", { method: "POST", as: "operate", body: { reason: "holiday" } })).status).toBe(200);
		const stub = env.AGENT.getByName("held-long");
		// Queued ten days ago and held by the pause since: nothing retention can remove until it ends.
		const held = await runInDurableObject(stub, (_i: AgentDO, state) => {
			const queued = lifecycleRecords("held-long", new Date(Date.now() - 10 * 86_400_000)).pending;
			storeRun(state.storage.sql, queued);
			return queued;
		});
		await runInDurableObject(stub, (instance: AgentDO) => instance.alarm());

		expect((await jobOf("held-long", held.id)).status).toBe("pending");
		// The alarm waits for the finished job's expiry, a week out; it was an hour out, every hour.
		const alarm = await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.getAlarm());
		expect(alarm).toBe(Date.parse(done.finished_at!) + 7 * 86_400_000);
	});

	it("deletes a backlog's expired skips, and only them, reading the skips, not every expired ledger row", async () => {
		await createAgent({ name: "skip-backlog", retention_days: 30 });
		const stub = env.AGENT.getByName("skip-backlog");
		const day = 86_400_000;
		const { skipsLeft, jobRows, deleteRead } = await runInDurableObject(stub, async (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			// 400 runs past 30 days, a batch's worth pruned a pass; skips either side of the cutoff, and
			// a recent one stamped to go (a deleted agent's, see stampDeletedHistory).
			for (let i = 0; i < 400; i++) storeRun(sql, numberedRecord("skip-backlog", new Date(Date.now() - 60 * day + i * 60_000), i));
			const skip = (id: string, claimedAt: number) =>
				insertOccurrence(sql, { schedule: id, source: "cron", scheduledInstant: claimedAt, dispatch: "on_time", claimedAt, status: "skipped", skipReason: "paused: holiday" });
			skip("old-1", Date.now() - 50 * day);
			skip("old-2", Date.now() - 31 * day);
			skip("recent", Date.now() - 29 * day);
			skip("stamped", Date.now() - 2 * day);
			sql.exec("UPDATE occurrences SET retain_until = ? WHERE schedule = 'stamped'", Date.now() - 1);
			const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
			const watching = new Proxy(sql, {
				get(target, prop) {
					if (prop !== "exec") return Reflect.get(target, prop);
					return (query: string, ...bindings: unknown[]) => {
						const cursor = target.exec(query, ...bindings);
						if (query.startsWith("DELETE FROM occurrences WHERE job_id IS NULL")) cursors.push(cursor);
						return cursor;
					};
				},
			});
			expect(await pruneJobs(watching, env.OUTPUT, "skip-backlog", Date.now() - 30 * day, Date.now())).toBe(50);
			return {
				skipsLeft: sql.exec<{ schedule: string }>("SELECT schedule FROM occurrences WHERE job_id IS NULL ORDER BY schedule").toArray().map((r) => r.schedule),
				jobRows: sql.exec<{ n: number }>("SELECT count(*) AS n FROM occurrences WHERE job_id IS NOT NULL").one().n,
				deleteRead: cursors.reduce((r, c) => r + c.rowsRead, 0),
			};
		});
		expect(skipsLeft).toEqual(["recent"]);
		// The 350 runs left for the next passes keep their ledger rows.
		expect(jobRows).toBe(350);
		// By every ledger row claimed before the cutoff, the backlog's 350 with the skips, it read over 350.
		expect(deleteRead).toBeLessThan(10);
	});

	it("prunes a paused agent too, though its ticks only skip: its ledger and old jobs", async () => {
		await createAgent({ name: "paused-ledger", retention_days: 7, schedules: { minute: { interval: "1m" } } });
		expect((await call("/v1/agents/paused-ledger/pause", { method: "POST", as: "operate", body: { reason: "holiday" } })).status).toBe(200);
		const stub = env.AGENT.getByName("paused-ledger");
		const tenDaysAgo = Date.now() - 10 * 86_400_000;
		const old = await runInDurableObject(stub, (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			insertOccurrence(sql, { schedule: "minute", source: "cron", scheduledInstant: tenDaysAgo, dispatch: "on_time", claimedAt: tenDaysAgo, status: "skipped", skipReason: "paused: holiday" });
			const job = endedRecord("paused-ledger", new Date(tenDaysAgo));
			putJob(sql, job, Date.now());
			return job;
		});

		// Eight past the next quarter hour, not the real clock's next minute: that falls on a quarter
		// hour one run in fifteen, when the tick claims fleet.yaml's site-watch too, whose run its
		// own alarm starts seconds later with no model fake of this test's to answer it.
		const slot = Math.floor(Date.now() / 900_000) * 900_000 + 900_000 + 480_000;
		await tick(slot);
		expect(await runDurableObjectAlarm(stub)).toBe(true);

		expect(await stub.getJob(old.id)).toBeNull();
		const runs = await stub.runs(10);
		expect(runs.map((r) => [r.scheduled_instant, r.status, r.skip_reason])).toEqual([[new Date(slot).toISOString(), "skipped", "paused: holiday"]]);
	});
});
