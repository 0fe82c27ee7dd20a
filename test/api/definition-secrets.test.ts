import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { agentRpc } from "../../durable-objects/agent/client.ts";
import { bundleFleetForTest } from "../../src/config/bundled.ts";
import { definitionRevision } from "../../src/config/fleet.ts";
import { agentsHoldingSecrets, PAGE_ROWS } from "../../src/security/definition-secrets-warning.ts";
import { REDACTED } from "../../src/security/redact.ts";
import { getRegisteredAgent } from "../../src/store/agent-registry.ts";
import { createAgent } from "../helpers/agents.ts";
import { parseAgent } from "../helpers/definitions.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";
import { captureLogs } from "../helpers/logs.ts";
import { TOKENS, WEBHOOK_SECRET } from "../helpers/tokens.ts";

// Values of the Worker's secrets (vitest.config.mts's bindings): a read token must see none of them.
const TICKETS_URL = "https://tickets.example.test/hook";
const SECRETS = [TOKENS.admin, TOKENS.operate, TOKENS.read, WEBHOOK_SECRET, TICKETS_URL, "tickets.example.test/hook"];

interface Status {
	warnings: string[];
	warning_kinds: string[];
}

async function statusOf(): Promise<Status> {
	const res = await call("/v1/status");
	expect(res.status).toBe(200);
	return res.json();
}

const heldWarning = (s: Status) => s.warnings.filter((_, i) => s.warning_kinds[i] === "definition_secret");

function expectNoSecret(text: string): void {
	for (const secret of SECRETS) expect(text).not.toContain(secret);
}

afterEach(() => {
	vi.restoreAllMocks();
	bundleFleetForTest(undefined);
});

describe("a fleet.yaml agent whose definition holds one of the Worker's secret values", () => {
	// Written as an operator might: the webhook URL spelt out, a drover token pasted into a schedule's prompt.
	const FLEET = [
		"version: 1",
		"agents:",
		"  - name: leaky-file",
		`    system_prompt: "Post findings to ${TICKETS_URL} when done."`,
		"    prompt: Look around.",
		"    schedules:",
		"      nightly:",
		'        cron: "0 3 * * *"',
		`        prompt: "Call the API with ${TOKENS.admin}."`,
		"",
	].join("\n");

	it("is shown to read tokens with the marker in the value's place, and the operator is told the agent and fields, never the value", async () => {
		bundleFleetForTest(new TextEncoder().encode(FLEET));
		const lines = captureLogs();

		const res = await call("/v1/agents/leaky-file");
		const text = await res.clone().text();
		expect(res.status, text).toBe(200);
		expectNoSecret(text);
		const { definition } = (await res.json()) as { definition: { system_prompt: string; schedules: { nightly: { prompt: string } } } };
		expect(definition.system_prompt).toBe(`Post findings to ${REDACTED} when done.`);
		expect(definition.schedules.nightly.prompt).toBe(`Call the API with ${REDACTED}.`);

		const yaml = await call("/v1/agents/leaky-file/definition");
		expect(yaml.status).toBe(200);
		const yamlText = await yaml.text();
		expectNoSecret(yamlText);
		expect(yamlText).toContain(`Post findings to ${REDACTED} when done.`);

		const status = await statusOf();
		const warned = heldWarning(status);
		expect(warned).toHaveLength(1);
		expect(warned[0]).toMatch(/leaky-file \(fleet\.yaml: system_prompt, schedules\.nightly\.prompt\)/);
		expectNoSecret(JSON.stringify(status));

		vi.restoreAllMocks();
		const said = lines.filter((l) => l.event === "agent.definition_secret");
		expect(said).toEqual([expect.objectContaining({ level: "warn", agent: "leaky-file", source: "file", fields: ["system_prompt", "schedules.nightly.prompt"] })]);
		expectNoSecret(JSON.stringify(lines));
	});

	it("still names fleet.yaml's agents when D1 cannot be read for the API's, saying why", async () => {
		bundleFleetForTest(new TextEncoder().encode(FLEET));
		const broken = new Proxy(env.DB, {
			get(target, prop) {
				if (prop === "prepare") return () => { throw new Error("D1_ERROR: no such table: agents"); };
				const value = Reflect.get(target, prop) as unknown;
				return typeof value === "function" ? value.bind(target) : value;
			},
		});
		const why: unknown[] = [];
		const held = await agentsHoldingSecrets(broken, (err) => why.push(err));
		expect(held.map((h) => `${h.agent} ${h.source}`)).toEqual(["leaky-file file"]);
		expect(why).toEqual([expect.objectContaining({ message: "D1_ERROR: no such table: agents" })]);
	});

	it("leaves a fleet that holds none unwarned and its reads as written", async () => {
		bundleFleetForTest(new TextEncoder().encode("version: 1\nagents:\n  - name: clean-file\n    prompt: Post to TEST_TICKETS_URL's site, https://tickets.example.test/, daily.\n"));
		expect(heldWarning(await statusOf())).toEqual([]);
		const { definition } = (await (await call("/v1/agents/clean-file")).json()) as { definition: { prompt: string } };
		expect(definition.prompt).toBe("Post to TEST_TICKETS_URL's site, https://tickets.example.test/, daily.");
	});
});

describe("an API agent stored before its secret values were refused", () => {
	/** Stored as an older release stored it: through the agent's own object, past the API's refusal. */
	async function storeUnchecked(input: Record<string, unknown>, how: "create" | "replace" = "create"): Promise<void> {
		const definition = parseAgent(input);
		const stored = await agentRpc(env, definition.name).define(definition.name, definition, await definitionRevision(definition), null, how, "older-release");
		expect(stored).toHaveProperty("revision");
	}

	it("is read with the marker, warned of, and a read-edit-PUT that would store the marker over the value is refused", async () => {
		await storeUnchecked({ name: "leaky-api", prompt: "Look around.", system_prompt: `Sign with ${WEBHOOK_SECRET} please.`, tools: [] });
		const lines = captureLogs();

		const res = await call("/v1/agents/leaky-api");
		const text = await res.clone().text();
		expect(res.status, text).toBe(200);
		expectNoSecret(text);
		const read = (await res.json()) as { definition: Record<string, unknown> & { system_prompt: string }; definition_revision: string };
		expect(read.definition.system_prompt).toBe(`Sign with ${REDACTED} please.`);
		expectNoSecret(await (await call("/v1/agents/leaky-api/definition")).text());

		const warned = heldWarning(await statusOf());
		expect(warned).toHaveLength(1);
		expect(warned[0]).toMatch(/leaky-api \(API: system_prompt\)/);

		// The read, its prompt edited, sent back: the marker would replace the secret's value, unasked.
		const edited = { ...read.definition, prompt: "Look around twice." };
		for (const query of ["?dry_run=true", ""]) {
			const put = await call(`/v1/agents/leaky-api${query}`, { method: "PUT", as: "admin", body: edited, headers: { "if-match": `"${read.definition_revision}"` } });
			expect(put.status).toBe(400);
			expect((await errorOf(put)).details?.issues).toEqual([{ path: "system_prompt", message: expect.stringMatching(/holds \[REDACTED\], which a read shows where the stored definition holds the value/) }]);
		}
		const stored = await getRegisteredAgent(env.DB, "leaky-api");
		expect(stored?.definition?.prompt).toBe("Look around.");
		expect(stored?.definitionRevision).toBe(read.definition_revision);

		vi.restoreAllMocks();
		expect(lines.filter((l) => l.event === "agent.definition_secret")).toEqual([
			expect.objectContaining({ level: "warn", agent: "leaky-api", source: "api", fields: ["system_prompt"], definition_revision: read.definition_revision }),
		]);
		expectNoSecret(JSON.stringify(lines));

		// Written anew (the marker elsewhere is text like any other): taken, and the warning goes.
		const fixed = { ...read.definition, system_prompt: "Sign with TRIAGE_WEBHOOK_SECRET.", prompt: `Say ${REDACTED} for what you may not show.` };
		const put = await call("/v1/agents/leaky-api", { method: "PUT", as: "admin", body: fixed });
		expect(put.status, await put.clone().text()).toBe(200);
		expect(heldWarning(await statusOf())).toEqual([]);
	});

	it("is shown with the marker in a job's manifest too (its definition, system blocks and tools)", async () => {
		await storeUnchecked({ name: "leaky-manifest", prompt: "Look around.", system_prompt: `Report to ${TICKETS_URL} only.`, tools: [] });
		useEmulator().enqueue({ text: "Done." });
		const job = await runToRest("leaky-manifest", "Check.");
		const res = await call(`/v1/jobs/${job.id}/manifest`);
		const text = await res.clone().text();
		expect(res.status, text).toBe(200);
		expectNoSecret(text);
		const manifest = (await res.json()) as { definition: { system_prompt: string }; system: { text: string }[] };
		expect(manifest.definition.system_prompt).toBe(`Report to ${REDACTED} only.`);
		expect(manifest.system[0]!.text).toBe(`Report to ${REDACTED} only.`);
	});

	it("is found by the status's page-a-request look through the registry, past a page of agents that hold none, and drops out once written anew", async () => {
		for (let i = 0; i < PAGE_ROWS + 2; i++) await createAgent({ name: `paged-${String(i).padStart(2, "0")}` });
		await storeUnchecked({ name: "paged-zz", prompt: `Use ${TOKENS.read}.`, tools: [] });
		const registry = (await env.DB.prepare("SELECT count(*) AS n FROM agents WHERE deleted_at IS NULL").first<{ n: number }>())!.n;
		// Each request reads one page where the last left off: within a pass over the registry, it is named.
		let asked = 0;
		let warned: string[] = [];
		while (asked <= Math.ceil(registry / PAGE_ROWS) && !warned.some((w) => w.includes("paged-zz"))) {
			warned = heldWarning(await statusOf());
			asked++;
		}
		expect(asked).toBeGreaterThan(1);
		expect(warned.join(" ")).toMatch(/paged-zz \(API: prompt\)/);
		const put = await call("/v1/agents/paged-zz", { method: "PUT", as: "admin", body: { name: "paged-zz", prompt: "Use the read token you were given.", tools: [] } });
		expect(put.status, await put.clone().text()).toBe(200);
		expect(heldWarning(await statusOf()).join(" ")).not.toContain("paged-zz");
	});

	it("reads a definition once at its revision: a pass over agents unchanged since asks D1 for names and revisions alone, and still names the one that holds a value", async () => {
		for (let i = 0; i < PAGE_ROWS + 3; i++) await createAgent({ name: `steady-${String(i).padStart(2, "0")}` });
		await storeUnchecked({ name: "steady-zz", prompt: `Use ${TOKENS.operate}.`, tools: [] });
		// The real D1, each statement it is asked noted: a status request is hot (every 10 s by each
		// dashboard tab), and a definition is up to 256 KiB.
		const asked: string[] = [];
		const db = new Proxy(env.DB, {
			get(target, prop) {
				if (prop === "prepare") return (sql: string) => (asked.push(sql), target.prepare(sql));
				const value = Reflect.get(target, prop) as unknown;
				return typeof value === "function" ? value.bind(target) : value;
			},
		});
		const registry = (await env.DB.prepare("SELECT count(*) AS n FROM agents WHERE deleted_at IS NULL").first<{ n: number }>())!.n;
		// Requests enough for a whole pass, wherever the last left off.
		const pass = async () => {
			let held: string[] = [];
			for (let i = 0; i <= Math.ceil(registry / PAGE_ROWS); i++) held = (await agentsHoldingSecrets(db, (err) => { throw err; })).map((h) => h.agent);
			return held;
		};
		expect(await pass()).toContain("steady-zz");
		const readDefinitions = () => asked.filter((sql) => /\bdefinition\b/.test(sql)).length;
		expect(readDefinitions()).toBeGreaterThan(0);
		asked.length = 0;
		expect(await pass()).toContain("steady-zz");
		expect(asked.length).toBeGreaterThan(0);
		expect(readDefinitions()).toBe(0);
		// Changed (here through the agent's own object, as another isolate would): read again at its new revision.
		await storeUnchecked({ name: "steady-zz", prompt: "Use the operate token you were given.", tools: [] }, "replace");
		expect(await pass()).not.toContain("steady-zz");
		expect(readDefinitions()).toBe(1);
	});
});
