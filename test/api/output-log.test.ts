import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { jobOf, runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { tick } from "../helpers/ticks.ts";
import { ticketTool } from "../helpers/tools.ts";

const fetchTool = { type: "http_fetch", allow_hosts: ["status.example.test"] };
const STAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /;

async function logOf(id: string): Promise<string> {
	const res = await call(`/v1/jobs/${id}/output.log`, { as: "read" });
	expect(res.status, await res.clone().text()).toBe(200);
	expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
	return res.text();
}

describe("output_to_file: a job's plain-text output.log (herdctl's)", () => {
	it("a schedule that sets it keeps each run's log in R2 beside its JSONL, served at /v1/jobs/:id/output.log", async () => {
		// A minute of the test's: its tick reaches fleet.yaml's agents too, and at the real minute two
		// before a quarter hour it claimed a site-watch run. Seven past, no fleet slot; far ahead (2037),
		// so no alarm set by the fake clock comes due on its own.
		const MINUTE = Date.parse("2037-12-03T14:05:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: MINUTE + 2 * 60_000 + 10_000 });
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response("all systems green\nsince 09:00"));
		emulator.enqueue({ tool_use: { name: "http_fetch", input: { url: "https://status.example.test/" } }, text: "Checking." }, { text: "Green.\nNothing to report." });
		await createAgent({ name: "logged", prompt: "Check the status page.", tools: [fetchTool], schedules: { check: { interval: "1m", output_to_file: true } } });
		await tick(MINUTE + 2 * 60_000);
		await settle("logged");
		const [run] = await runInDurableObject(env.AGENT.getByName("logged"), (instance: AgentDO) => instance.runs(5));
		const job = await jobOf("logged", run!.job_id!);
		expect(job.status).toBe("completed");
		expect(job.output_log).toBe(`jobs/logged/${job.id}/output.log`);
		expect(job.output_file).toBe(`jobs/logged/${job.id}.jsonl`);

		const text = await logOf(job.id);
		const entries = text.trimEnd().split(/\n(?! {4})/);
		// Every entry starts with its time; the text after it, line for line with the JSONL.
		expect(entries.every((e) => STAMP.test(e))).toBe(true);
		expect(entries.map((e) => e.replace(STAMP, ""))).toEqual([
			"system:init job started with claude-sonnet-5-5",
			"assistant Checking.",
			expect.stringMatching(/^tool_use http_fetch toolu_\w+ \{"url":"https:\/\/status\.example\.test\/"\}$/),
			expect.stringMatching(/^tool_result toolu_\w+ ok HTTP 200\n {4}content-type: text\/plain;charset=UTF-8\n {4}\n {4}all systems green\n {4}since 09:00$/),
			"assistant Green.\n    Nothing to report.",
			"system:result final answer (completed, success)",
		]);
		// R2 holds both; the JSONL is untouched by the log written under its job's prefix.
		expect(await (await env.OUTPUT.get(job.output_log!))?.text()).toBe(text);
		expect(await env.OUTPUT.head(job.output_file!)).not.toBeNull();
	});

	it("a run that keeps none is a 404 saying why; the agent's setting applies to every run, a schedule's own wins", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "Plain." }, { text: "Logged." });
		await createAgent({ name: "unlogged", prompt: "Go." });
		const plain = await runToRest("unlogged");
		expect(plain.output_log).toBeNull();
		const res = await call(`/v1/jobs/${plain.id}/output.log`);
		expect(res.status).toBe(404);
		expect((await errorOf(res)).message).toBe(
			`job ${plain.id} keeps no plain-text log (output_to_file was not set on its schedule or agent when it started); its JSONL output is at /v1/jobs/${plain.id}/output`,
		);

		const put = await call("/v1/agents/unlogged", {
			method: "PUT",
			as: "admin",
			body: { name: "unlogged", prompt: "Go.", output_to_file: true, schedules: { quiet: { interval: "1h", output_to_file: false } } },
		});
		expect(put.status, await put.clone().text()).toBe(200);
		const logged = await runToRest("unlogged");
		expect(logged.output_log).toBe(`jobs/unlogged/${logged.id}/output.log`);
		expect(await logOf(logged.id)).toMatch(/ assistant Logged\.\n/);
		const definition = (await (await call("/v1/agents/unlogged")).json()) as { definition: { output_to_file?: boolean; schedules: Record<string, { output_to_file?: boolean }> } };
		expect(definition.definition.output_to_file).toBe(true);
		expect(definition.definition.schedules.quiet?.output_to_file).toBe(false);
	});

	it("is a 409 while the job is under way, and goes with the job at its retention", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } }, { text: "Filed." });
		fake("https://tickets.example.test", () => Response.json({ id: 7 }));
		await createAgent({ name: "waiting", prompt: "File it.", output_to_file: true, tools: [ticketTool] });
		const held = await runToRest("waiting");
		expect(held.status).toBe("approval_pending");
		const early = await call(`/v1/jobs/${held.id}/output.log`);
		expect(early.status).toBe(409);
		expect((await errorOf(early)).message).toBe(
			`job ${held.id} is approval_pending: its plain-text log is written when it ends; follow its output meanwhile at /v1/jobs/${held.id}/stream`,
		);
		expect((await call(`/v1/jobs/${held.id}/approval`, { method: "POST", as: "operate", body: { decision: "approve" } })).status).toBe(200);
		await settle("waiting");
		expect(await logOf(held.id)).toMatch(/ system:approval_decided create_ticket approved by operator\n\S+ tool_result toolu_\w+ ok \{"id":7\}\n/);

		const stub = env.AGENT.getByName("waiting");
		await runInDurableObject(stub, (instance: AgentDO) => AgentDO.prune(instance, Date.now() + 400 * 86_400_000, true));
		expect(await env.OUTPUT.head(`jobs/waiting/${held.id}/output.log`)).toBeNull();
		expect((await call(`/v1/jobs/${held.id}/output.log`)).status).toBe(404);
	});

	it("honours one bytes Range, as the JSONL output does: a download resumed, or the log's end, and If-Range naming the version held", async () => {
		useEmulator().enqueue({ text: "Line one.\nLine two.\nLine three." });
		await createAgent({ name: "ranged-log", prompt: "Go.", output_to_file: true });
		const job = await runToRest("ranged-log");
		const text = await logOf(job.id);
		const bytes = new TextEncoder().encode(text);
		const size = bytes.length;
		expect(size).toBeGreaterThan(100);
		const decode = (from: number, to: number) => new TextDecoder().decode(bytes.subarray(from, to));
		const ranged = (range: string, extra: Record<string, string> = {}) => call(`/v1/jobs/${job.id}/output.log`, { headers: { range, ...extra } });

		const whole = await call(`/v1/jobs/${job.id}/output.log`);
		expect(whole.headers.get("accept-ranges")).toBe("bytes");
		const etag = whole.headers.get("etag")!;
		expect(etag).toMatch(/^"/);

		const first = await ranged("bytes=0-9");
		expect(first.status).toBe(206);
		expect(first.headers.get("content-range")).toBe(`bytes 0-9/${size}`);
		expect(first.headers.get("content-length")).toBe("10");
		expect(await first.text()).toBe(decode(0, 10));
		// A download cut at byte 40 resumes from there; the end of the log by a suffix.
		const rest = await ranged("bytes=40-", { "if-range": etag });
		expect(rest.status).toBe(206);
		expect(rest.headers.get("content-range")).toBe(`bytes 40-${size - 1}/${size}`);
		expect(rest.headers.get("content-length")).toBe(String(size - 40));
		expect(rest.headers.get("etag")).toBe(etag);
		expect(decode(0, 40) + (await rest.text())).toBe(text);
		const end = await ranged("bytes=-25");
		expect(end.status).toBe(206);
		expect(end.headers.get("content-range")).toBe(`bytes ${size - 25}-${size - 1}/${size}`);
		expect(end.headers.get("content-length")).toBe("25");
		expect(await end.text()).toBe(decode(size - 25, size));

		// Another version's ETag (a weak one never matches: the comparison is strong), a date (the log
		// has no Last-Modified), several ranges or an invalid one: the whole log, 200.
		for (const [range, extra] of [
			["bytes=40-", { "if-range": '"another-version"' }],
			["bytes=40-", { "if-range": `W/${etag}` }],
			["bytes=40-", { "if-range": new Date().toUTCString() }],
			["bytes=0-1,5-6", {}],
			["bytes=9-3", {}],
			["lines=1-2", {}],
		] as const) {
			const res = await ranged(range, extra);
			expect(res.status, range).toBe(200);
			expect(res.headers.get("content-range")).toBeNull();
			expect(await res.text()).toBe(text);
		}
		// Past the end: 416 with the size, and the error body every error has.
		const past = await ranged(`bytes=${size}-`);
		expect(past.status).toBe(416);
		expect(past.headers.get("content-range")).toBe(`bytes */${size}`);
		expect(await errorOf(past)).toMatchObject({ code: "range_not_satisfiable", message: `Range "bytes=${size}-" is outside job ${job.id}'s output.log, which is ${size} bytes (0-${size - 1})` });
		// HEAD: the whole log's headers, Range or not (RFC 9110 §14.2: Range is for GET).
		for (const range of [undefined, "bytes=0-9", `bytes=${size}-`]) {
			const head = await call(`/v1/jobs/${job.id}/output.log`, { method: "HEAD", headers: range ? { range } : {} });
			expect(head.status, range).toBe(200);
			expect(head.headers.get("content-length")).toBe(String(size));
			expect(head.headers.get("content-range")).toBeNull();
			expect(head.headers.get("etag")).toBe(etag);
		}
		// The JSONL output's HEAD too.
		const jsonl = await call(`/v1/jobs/${job.id}/output`, { method: "HEAD", headers: { range: "bytes=0-9" } });
		expect(jsonl.status).toBe(200);
		expect(jsonl.headers.get("content-range")).toBeNull();
		// A job that keeps no log is still a 404 saying why, Range or not.
		useEmulator().enqueue({ text: "Plain." });
		await createAgent({ name: "ranged-unlogged", prompt: "Go." });
		const plain = await runToRest("ranged-unlogged");
		expect((await call(`/v1/jobs/${plain.id}/output.log`, { headers: { range: "bytes=0-9" } })).status).toBe(404);
	});

	it("refuses herdctl's camelCase spelling with the key to use, and a non-boolean at its path", async () => {
		const camel = await call("/v1/agents/camel", { method: "PUT", as: "admin", body: { name: "camel", prompt: "Go.", schedules: { s: { interval: "1h", outputToFile: true } } } });
		expect(camel.status).toBe(400);
		expect((await errorOf(camel)).message).toContain('schedules.s.outputToFile: unknown key (did you mean "output_to_file"?)');
		const typed = await call("/v1/agents/camel", { method: "PUT", as: "admin", body: { name: "camel", prompt: "Go.", output_to_file: "yes" } });
		expect(typed.status).toBe(400);
		expect((await errorOf(typed)).message).toContain("output_to_file");
		expect((await call("/v1/agents/camel")).status).toBe(404);
	});
});
