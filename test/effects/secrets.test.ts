import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { heldModel, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, outputOf, runToRest, trigger } from "../helpers/jobs.ts";
import { API_TOKENS, TOKENS, WEBHOOK_SECRET } from "../helpers/tokens.ts";
import { MAX_ATTEMPTS } from "../../durable-objects/agent/effects.ts";
import { fake } from "../helpers/outbound.ts";

// A fake key in the shape of a real one; it must end up nowhere.
const PLANTED = "sk-ant-api03-PLANTEDfakeKEY0123456789abcdefghijklmnopqrstuvwxyzABCDEF";

afterEach(() => vi.restoreAllMocks());

async function everythingStored(agent: string): Promise<string> {
	const parts: string[] = [];
	for (const table of ["jobs", "incidents", "agents", "scheduler_heartbeat"]) {
		const { results } = await env.DB.prepare(`SELECT * FROM ${table}`).all();
		parts.push(JSON.stringify(results));
	}
	const listed = await env.OUTPUT.list({ prefix: "jobs/" });
	for (const o of listed.objects) parts.push((await (await env.OUTPUT.get(o.key))!.text()));
	parts.push(
		await runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => {
			const tables = state.storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'").toArray();
			return JSON.stringify(tables.map((t) => state.storage.sql.exec(`SELECT * FROM "${t.name}"`).toArray()));
		}),
	);
	return parts.join("\n");
}

describe("a credential that reaches drover", () => {
	it("is stored nowhere and shown nowhere: model errors, tool results and tool inputs alike", async () => {
		const logged: string[] = [];
		for (const method of ["log", "warn", "error"] as const) {
			vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(" ")));
		}
		fake("https://alerts.example.test", () => new Response("ok"));
		fake("https://leaky.example.test", () => new Response(`config dump: ANTHROPIC_API_KEY=${PLANTED}`));
		const emulator = useEmulator();
		await createAgent({ name: "leaky", tools: [{ type: "http_fetch", allow_hosts: ["leaky.example.test"] }] });

		// 1. a tool input carrying the key in a header, 2. a tool result echoing it, 3. a final answer quoting it
		emulator.enqueue(
			{ tool_use: { name: "http_fetch", input: { url: "https://leaky.example.test/config", headers: { "x-api-key": PLANTED } } } },
			{ tool_use: { name: "http_fetch", input: { url: "https://leaky.example.test/config" } } },
			{ text: `The key is ${PLANTED}.` },
		);
		const ok = await runToRest("leaky");
		// 4. a provider error that echoes the key back
		emulator.enqueue({ error: 400, message: `invalid x-api-key: ${PLANTED}` });
		const failed = await runToRest("leaky");
		expect(failed.status).toBe("failed");

		const responses = [
			await (await call(`/v1/jobs/${ok.id}`)).text(),
			await (await call(`/v1/jobs/${ok.id}`, { headers: { accept: "application/yaml" } })).text(),
			await (await call(`/v1/jobs/${ok.id}/output`)).text(),
			await (await call(`/v1/jobs/${failed.id}`)).text(),
			await (await call(`/v1/jobs/${failed.id}/output`)).text(),
			await (await call("/v1/incidents?agent=leaky")).text(),
			await (await call("/v1/jobs?agent=leaky")).text(),
		].join("\n");
		const stored = await everythingStored("leaky");

		// The run itself happened: the redaction took the secret out, not the work.
		expect(responses).toContain("[REDACTED]");
		expect(stored).toContain("config dump");
		for (const [where, text] of [
			["API responses", responses],
			["D1, R2 and the agent's storage", stored],
			["logs", logged.join("\n")],
		] as const) {
			expect(text.includes("PLANTEDfakeKEY"), `the planted key was found in ${where}`).toBe(false);
		}
	});
});

describe("a webhook tool's URL secret", () => {
	it("is cut from what its target answers before the model or the job's output sees it, error or not", async () => {
		// TEST_SLACK_URL's path is its credential; the target echoes it, as error pages and frameworks do.
		let calls = 0;
		fake("https://slack.example.test", (req) =>
			++calls === 1
				? new Response(`Cannot POST ${new URL(req.url).pathname}`, { status: 404 })
				: Response.json({ ok: true, self: req.url }),
		);
		const emulator = useEmulator();
		const tool = { type: "webhook", name: "notify", description: "Notify.", url_secret: "TEST_SLACK_URL" };
		emulator.enqueue({ tool_use: [{ name: "notify", input: { n: 1 } }, { name: "notify", input: { n: 2 } }] }, { text: "done" });
		await createAgent({ name: "echoing-target", tools: [tool] });
		const job = await runToRest("echoing-target");
		expect(job.status).toBe("completed");
		expect(calls).toBe(2);
		const results = (await outputOf("echoing-target", job.id)).filter((l) => l.type === "tool_result");
		expect(results).toMatchObject([
			{ success: false, error: "webhook answered 404: Cannot POST <webhook url>" },
			{ success: true, result: expect.stringContaining('"self":"<webhook url>"') },
		]);
		const sentToModel = JSON.stringify(emulator.requests.at(-1)!.messages);
		expect(sentToModel).toContain("Cannot POST <webhook url>");
		expect(sentToModel.includes("/services/T0/B0/xyz")).toBe(false);
		expect((await everythingStored("echoing-target")).includes("/services/T0/B0/xyz")).toBe(false);
	});
});

describe("a webhook tool's URL echoed in other spellings, and credentials in JSON text", () => {
	it("is cut when its target echoes it JSON-escaped (PHP's \\/) or percent-encoded", async () => {
		let calls = 0;
		fake("https://slack.example.test", (req) =>
			++calls === 1
				? new Response(JSON.stringify({ ok: true, self: req.url }).replaceAll("/", "\\/"), { headers: { "content-type": "application/json" } })
				: new Response(`see ${encodeURIComponent(req.url)}`),
		);
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: [{ name: "notify", input: { n: 1 } }, { name: "notify", input: { n: 2 } }] }, { text: "done" });
		await createAgent({ name: "escaping-target", tools: [{ type: "webhook", name: "notify", description: "Notify.", url_secret: "TEST_SLACK_URL" }] });
		const job = await runToRest("escaping-target");
		expect(job.status).toBe("completed");
		const listed = await (await call(`/v1/jobs/${job.id}/tool-calls`)).text();
		const sentToModel = JSON.stringify(emulator.requests.at(-1)!.messages);
		for (const text of [listed, sentToModel, await everythingStored("escaping-target")]) {
			expect(text).not.toMatch(/T0(?:\\\/|%2F|\/)B0(?:\\\/|%2F|\/)xyz/i);
		}
		expect(listed).toContain("<webhook url>");
	});

	it("redacts a key on a new line of a tool's JSON result, and an AWS secret under its JSON name", async () => {
		const key = `sk-ant-api03-${"PLANTEDfakeKEY0123456789abcdefghijklmnop"}`;
		const aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9aVr1234";
		fake("https://leaky.example.test", () => Response.json({ note: `rotated keys:\n${key}`, creds: { AccessKeyId: "ASIAY34FZKBOKMUTVV7A", SecretAccessKey: aws } }));
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "http_fetch", input: { url: "https://leaky.example.test/config" } } }, { text: "done" });
		await createAgent({ name: "leaky-json", tools: [{ type: "http_fetch", allow_hosts: ["leaky.example.test"] }] });
		const job = await runToRest("leaky-json");
		const listed = await (await call(`/v1/jobs/${job.id}/tool-calls`)).text();
		const output = await (await call(`/v1/jobs/${job.id}/output`)).text();
		const sentToModel = JSON.stringify(emulator.requests.at(-1)!.messages);
		for (const text of [listed, output, sentToModel, await everythingStored("leaky-json")]) {
			expect(text).not.toContain("PLANTEDfakeKEY");
			expect(text).not.toContain(aws);
		}
		// The call ran and its result reached the model and the record, each secret cut out in place and
		// the rest kept: a result dropped or failed whole holds no secret either.
		expect(job.status).toBe("completed");
		const redacted = `HTTP 200\ncontent-type: application/json\n\n${JSON.stringify({ note: "rotated keys:\nsk-ant-api03-[REDACTED]", creds: { AccessKeyId: "ASIA[REDACTED]", SecretAccessKey: "[REDACTED]" } })}`;
		expect((JSON.parse(listed) as { tool_calls: unknown[] }).tool_calls).toEqual([expect.objectContaining({ status: "completed", is_error: false, result: redacted })]);
		expect(emulator.requests.at(-1)!.messages!.at(-1)!.content).toEqual([expect.objectContaining({ type: "tool_result", content: redacted })]);
	});
});

describe("a secret named as a delivery or hook URL", () => {
	it("never appears in the delivery's error, the incident or the logs, whether it is no URL at all or a URL the request fails on", async () => {
		const logged: string[] = [];
		for (const method of ["log", "warn", "error"] as const) {
			vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(" ")));
		}
		fake("https://alerts.example.test", () => new Response("ok"));
		// A network error that quotes the URL, as runtimes' messages do; TEST_SLACK_URL's path is its credential.
		fake("https://slack.example.test", (req) => {
			throw new TypeError(`connection reset by ${req.url}`);
		});
		useEmulator().enqueue({ text: "done" }, { text: "done again" });
		// TRIAGE_WEBHOOK_SECRET holds an inbound webhook's signing secret, not a URL: as a delivery target
		// the agent cannot run (paused, naming the secret), as a hook's its calls are given up.
		await createAgent({ name: "misnamed-target", delivery: { type: "webhook", url_secret: "TRIAGE_WEBHOOK_SECRET" } });
		const paused = await (await call("/v1/agents/misnamed-target", { as: "read" })).text();
		expect(JSON.parse(paused)).toMatchObject({ paused: { by: "auto", reason: "auto: secret TRIAGE_WEBHOOK_SECRET (delivery) does not hold an http(s) URL" } });
		await createAgent({ name: "misnamed", hooks: { after_run: [{ url_secret: "TRIAGE_WEBHOOK_SECRET" }] } });
		await createAgent({ name: "unreachable", delivery: { type: "slack", url_secret: "TEST_SLACK_URL" } });
		const misnamed = await runToRest("misnamed");
		const unreachable = await runToRest("unreachable");
		// Retried to the end: the outcome of a request that may have arrived is unknown.
		for (let i = 0; i < MAX_ATTEMPTS; i++) {
			await runInDurableObject(env.AGENT.getByName("unreachable"), (_i: AgentDO, state) => {
				state.storage.sql.exec("UPDATE deliveries SET next_at = 0 WHERE status IN ('pending', 'sending')");
			});
			await settle("unreachable");
		}
		expect(await jobOf("misnamed", misnamed.id)).toMatchObject({ status: "completed" });
		expect(await jobOf("unreachable", unreachable.id)).toMatchObject({ delivery: { target: "slack", outcome: "unknown" } });

		const incidents = await (await call("/v1/incidents", { as: "read" })).text();
		// The hook's call given up says which secret, not what it holds.
		expect(logged.join("\n")).toContain("secret TRIAGE_WEBHOOK_SECRET does not hold an http(s) URL");
		expect(incidents).toContain("connection reset by <url>");
		const stored = (await everythingStored("misnamed")) + (await everythingStored("unreachable"));
		for (const [where, text] of [
			["the incidents a read token sees", incidents],
			["the paused agent's record", paused],
			["D1, R2 and the agents' storage", stored],
			["logs", logged.join("\n")],
		] as const) {
			expect(text.includes(WEBHOOK_SECRET), `the webhook secret was found in ${where}`).toBe(false);
			expect(text.includes("/services/T0/B0/xyz"), `the Slack URL's credential was found in ${where}`).toBe(false);
		}
	});

	it("is refused when it names one of drover's own secrets, and nothing is created", async () => {
		// The alert webhook's too: a target named so would be signed with its key, and its receiver take a
		// delivery or a tool's body for a signed alert.
		for (const name of ["API_TOKENS", "ANTHROPIC_API_KEY", "ALERT_WEBHOOK_URL", "ALERT_WEBHOOK_URL_SIGNING_KEY", "PUBLIC_URL"]) {
			const res = await call("/v1/agents", { method: "POST", as: "admin", body: { name: "greedy", prompt: "x", delivery: { type: "webhook", url_secret: name } } });
			expect(res.status).toBe(400);
			expect(await res.text()).toContain("names one of drover's own secrets");
		}
		expect((await call("/v1/agents/greedy")).status).toBe(404);
	});
});

describe("a cancel's reason", () => {
	it("is stored redacted, as every record is: a credential pasted into it is shown to no one; a blank one is none", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "never read" });
		const { arrived: calling, release } = heldModel(emulator);
		await createAgent({ name: "cancel-with-a-key", max_concurrent: 1 });
		// One run calling the model, one queued behind it: a cancel takes each its own way.
		const blank = (await trigger("cancel-with-a-key")).id;
		await calling;
		const keyed = (await trigger("cancel-with-a-key")).id;
		const cancel = (id: string, reason: string) => call(`/v1/jobs/${id}/cancel`, { method: "POST", as: "operate", body: { reason } });
		expect((await cancel(keyed, `rotating ${PLANTED}`)).status).toBe(200);
		expect((await cancel(blank, "   ")).status).toBe(200);
		release();
		await settle("cancel-with-a-key");

		const reasonOf = async (id: string) => {
			const job = (await (await call(`/v1/jobs/${id}`)).json()) as { status: string; transitions: { to: string; reason: string | null }[] };
			expect(job.status).toBe("cancelled");
			return job.transitions.at(-1)!.reason;
		};
		// The key cut out where it stood, marked: the rest of the reason kept.
		expect(await reasonOf(keyed)).toBe("cancelled by operator: rotating sk-ant-api03-[REDACTED]");
		expect(await reasonOf(blank)).toBe("cancelled by operator");
		expect(await everythingStored("cancel-with-a-key")).not.toContain(PLANTED);
	});
});

describe("the Worker's own secrets, pasted where a read token can see them", () => {
	// No pattern knows these: a drover token, an inbound webhook's secret, a signing key.
	const owned = [TOKENS.admin, TOKENS.operate, WEBHOOK_SECRET];

	it("are stored redacted in a notepad value, as an env dump or bare in prose, so a read token cannot become admin", async () => {
		await createAgent({ name: "pasted-notes" });
		const notes = {
			"deploy-env": `API_TOKENS=${API_TOKENS}`,
			prose: `use ${TOKENS.admin} for the deploy, and sign the hook with ${WEBHOOK_SECRET}`,
		};
		for (const [key, value] of Object.entries(notes)) {
			expect((await call(`/v1/agents/pasted-notes/notepad/${key}`, { method: "PUT", as: "operate", body: { value } })).status).toBe(200);
		}
		const read = await (await call("/v1/agents/pasted-notes/notepad", { as: "read" })).json();
		expect(read).toEqual({ "deploy-env": "API_TOKENS=[REDACTED]", prose: "use [REDACTED] for the deploy, and sign the hook with [REDACTED]" });
		const stored = await everythingStored("pasted-notes");
		for (const secret of owned) expect(stored.includes(secret), "a secret's value was stored").toBe(false);
	});

	it("are stored redacted in a continue's and a fork's prompt and never sent to the model", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "Ready." }, { text: "Continued." }, { text: "Forked." });
		await createAgent({ name: "pasted-followup" });
		const done = await runToRest("pasted-followup");
		const pasted = `Use the admin credential ${TOKENS.admin} with the webhook secret ${WEBHOOK_SECRET}, and ghp_${"a1B2c3D4e5F6".repeat(3)}.`;
		const ids: string[] = [];
		for (const kind of ["continue", "fork"]) {
			const res = await call(`/v1/jobs/${done.id}/${kind}`, { method: "POST", as: "operate", body: { prompt: pasted } });
			expect(res.status).toBe(201);
			ids.push(((await res.json()) as { id: string }).id);
			await settle("pasted-followup");
		}
		for (const id of ids) {
			const job = await jobOf("pasted-followup", id);
			expect(job).toMatchObject({ status: "completed", prompt: "Use the admin credential [REDACTED] with the webhook secret [REDACTED], and ghp_[REDACTED]." });
		}
		const sent = JSON.stringify(emulator.requests.slice(1).map((r) => r.messages));
		expect(sent).toContain("with the webhook secret [REDACTED]");
		for (const secret of [...owned, `ghp_${"a1B2c3D4e5F6".repeat(3)}`]) expect(sent.includes(secret), "a secret's value was sent to the model").toBe(false);
	});

	it("are stored redacted in a manual run's prompt and never sent to the model", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "Deployed." });
		await createAgent({ name: "pasted-prompt" });
		const job = await runToRest("pasted-prompt", `Deploy with the admin credential ${TOKENS.admin} (or ${TOKENS.operate}); the webhook secret is ${WEBHOOK_SECRET}.`);
		expect(job.prompt).toBe("Deploy with the admin credential [REDACTED] (or [REDACTED]); the webhook secret is [REDACTED].");
		const sent = JSON.stringify(emulator.requests.at(-1)!.messages);
		// The model was sent the prompt, as stored: a request without it holds no secret either.
		expect(sent).toContain("Deploy with the admin credential [REDACTED] (or [REDACTED]); the webhook secret is [REDACTED].");
		const shown = await (await call(`/v1/jobs/${job.id}`, { as: "read" })).text();
		for (const secret of owned) {
			expect(sent.includes(secret), "a secret's value was sent to the model").toBe(false);
			expect(shown.includes(secret), "a secret's value was shown to a read token").toBe(false);
		}
	});
});
