import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app.ts";
import { createAgent } from "../helpers/agents.ts";
import { call, errorOf } from "../helpers/http.ts";
import { TOKENS } from "../helpers/tokens.ts";

interface AgentView {
	name: string;
	source: string;
	enabled: boolean;
	model: string;
	schedules: { name: string; kind: string; expression: string; timezone: string | null; catch_up: boolean; next_run: string | null }[];
}

describe("GET /v1/agents", () => {
	it("lists fleet.yaml's agents with each schedule's next run", async () => {
		const before = Date.now();
		const res = await call("/v1/agents");
		expect(res.status).toBe(200);
		// The file's other tests' API agents aside, whichever ran first: fleet.yaml's are the file's.
		const agents = ((await res.json()) as { agents: AgentView[] }).agents.filter((a) => a.source === "file");
		expect(agents.map((a) => a.name)).toEqual(["daily-digest", "site-watch", "triage"]);
		expect(agents.every((a) => a.enabled)).toBe(true);

		const digest = agents[0]!.schedules.find((s) => s.name === "weekday-morning")!;
		expect(digest).toMatchObject({ kind: "cron", expression: "0 9 * * 1-5", timezone: "Europe/Berlin", catch_up: true });
		const next = new Date(digest.next_run!);
		expect(next.getTime()).toBeGreaterThan(before);
		// 09:00 in Berlin, on a weekday: 08:00 UTC in winter, 07:00 UTC in summer.
		const berlin = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit", weekday: "short" }).format(next);
		expect(berlin).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 09:00$/);

		const watch = agents[1]!.schedules[0]!;
		expect(watch).toMatchObject({ kind: "interval", expression: "15m", timezone: null, catch_up: false });
		const slot = Date.parse(watch.next_run!);
		expect(slot % (15 * 60_000)).toBe(0);
		// The first slot after the server's clock, read between `before` and now: a quarter hour may turn in between.
		expect(slot - Date.now()).toBeLessThanOrEqual(15 * 60_000);
		expect(slot).toBeGreaterThan(before - 1000);

		expect(agents[2]!.schedules).toEqual([]);
	});

	it("returns one agent by name", async () => {
		const res = await call("/v1/agents/site-watch");
		expect(res.status).toBe(200);
		expect(((await res.json()) as AgentView).model).toBe("claude-haiku-5-5");
	});

	it("answers 404 for an unknown agent and 400 for a name that cannot be one", async () => {
		const missing = await call("/v1/agents/nobody");
		expect(missing.status).toBe(404);
		expect((await errorOf(missing)).message).toBe("no agent named nobody");
		for (const name of ["Upper", "..%2Fx", "-dash", "a%20b"]) {
			const res = await call(`/v1/agents/${name}`);
			expect(res.status).toBe(400);
			expect((await errorOf(res)).details?.issues?.[0]?.path).toBe("agent");
		}
	});

	it("names the character that makes a look-alike name no agent's, and the name it looks like", async () => {
		const rule = "must be an agent name, 1-63 lowercase letters, digits or -, starting with a letter or digit";
		for (const [name, problem] of [
			["daily%E2%80%90digest", 'has U+2010 at character 6 (did you mean "daily-digest"?)'],
			["daily-digest%E2%80%8B", 'has U+200B at character 13 (did you mean "daily-digest"?)'],
			["%EF%BD%84aily-digest", 'has U+FF44 at character 1 (did you mean "daily-digest"?)'],
		]) {
			const res = await call(`/v1/agents/${name}`);
			expect(res.status).toBe(400);
			expect((await errorOf(res)).details?.issues, name).toEqual([{ path: "agent", message: `${rule}; it ${problem}` }]);
		}
	});
});

/** `db`, counting the bytes of what its queries answer (as JSON) into `read.bytes`. */
function measuredDb(db: D1Database, read: { bytes: number }): D1Database {
	const passThrough = <T extends object>(target: T, prop: string | symbol) => {
		const value: unknown = Reflect.get(target, prop, target);
		return typeof value === "function" ? value.bind(target) : value;
	};
	const statement = (stmt: D1PreparedStatement): D1PreparedStatement =>
		new Proxy(stmt, {
			get(target, prop) {
				if (prop === "bind") return (...values: unknown[]) => statement(target.bind(...values));
				if (prop === "all" || prop === "first" || prop === "raw" || prop === "run") {
					return async (...args: unknown[]) => {
						const answer: unknown = await (target[prop] as (...a: unknown[]) => Promise<unknown>).apply(target, args);
						read.bytes += JSON.stringify(answer)?.length ?? 0;
						return answer;
					};
				}
				return passThrough(target, prop);
			},
		});
	return new Proxy(db, { get: (target, prop) => (prop === "prepare" ? (sql: string) => statement(target.prepare(sql)) : passThrough(target, prop)) });
}

describe("GET /v1/agents with large definitions", () => {
	it("shows an API agent as its own page does, without reading the text of its definition from D1", async () => {
		await createAgent({
			name: "listed-large",
			system_prompt: "S".repeat(90_000),
			prompt: "P".repeat(90_000),
			// Listed in the order written, the second first by name.
			schedules: { zeta: { cron: "0 9 * * 1-5", timezone: "Europe/Berlin", prompt: "Z".repeat(30_000), catch_up: false }, alpha: { interval: "15m", enabled: false } },
			tools: [
				{ type: "webhook", name: "file_it", description: "D".repeat(20_000), url_secret: "TEST_TICKETS_URL", requires_approval: true, input_schema: { type: "object", properties: { title: { type: "string", description: "T".repeat(5_000) } } } },
				{ type: "http_fetch", allow_hosts: ["example.com"], requires_approval: true },
				{ type: "server", definition: { type: "web_search_20250305", name: "web_search", max_uses: 3 } },
			],
			hooks: { after_run: [{ url_secret: "NEVER_SET_AUDIT_URL" }] },
			fallback_models: ["claude-haiku-5-5"],
			max_concurrent: 3,
			overlap: "queue",
		});
		const read = { bytes: 0 };
		const res = await app.fetch(
			new Request("https://drover.test/v1/agents?limit=200", { headers: { authorization: `Bearer ${TOKENS.read}` } }),
			{ ...env, DB: measuredDb(env.DB, read) },
			createExecutionContext(),
		);
		expect(res.status).toBe(200);
		const listed = ((await res.json()) as { agents: Record<string, unknown>[] }).agents.find((a) => a.name === "listed-large");
		const { definition, definition_revision, ...own } = (await (await call("/v1/agents/listed-large")).json()) as Record<string, unknown>;
		expect(definition).toMatchObject({ system_prompt: "S".repeat(90_000) });
		expect(listed).toEqual(own);
		expect(own).toMatchObject({
			has_default_prompt: true,
			schedules: [
				{ name: "zeta", kind: "cron", expression: "0 9 * * 1-5", timezone: "Europe/Berlin", catch_up: false, enabled: true },
				{ name: "alpha", kind: "interval", expression: "15m", enabled: false, next_run: null },
			],
			warnings: [expect.stringContaining("NEVER_SET_AUDIT_URL"), expect.stringContaining("TEST_TICKETS_URL_SIGNING_KEY"), expect.stringContaining("approval_timeout 24h is not shorter than timeout 30m (tool file_it, http_fetch")],
		});
		// The definition is 235 KB; the page's answer from D1 a few.
		expect(read.bytes).toBeLessThan(8 * 1024);
	});
});

describe("GET /v1/agents?view=names", () => {
	/** env with its AGENT namespace wrapped to count the objects a request addresses (as fleet-scale.test.ts does). */
	function countingAgents(calls: { n: number }): Env {
		const AGENT = new Proxy(env.AGENT, {
			get(target, prop) {
				const value: unknown = Reflect.get(target, prop, target);
				if (prop === "getByName" || prop === "get") return (...args: unknown[]) => (calls.n++, (value as (...a: unknown[]) => unknown).apply(target, args));
				return typeof value === "function" ? value.bind(target) : value;
			},
		});
		return { ...env, AGENT } as Env;
	}
	const read = async (path: string, calls: { n: number }) => {
		const res = await app.fetch(new Request(`https://drover.test${path}`, { headers: { authorization: `Bearer ${TOKENS.read}` } }), countingAgents(calls), createExecutionContext());
		expect(res.status, path).toBe(200);
		return (await res.json()) as { agents: Record<string, unknown>[]; next_cursor: string | null };
	};

	it("lists the names and sources the full list does, paged alike, asking no agent's object", async () => {
		await createAgent({ name: "names-b" });
		await createAgent({ name: "names-a" });
		await createAgent({ name: "names-gone" });
		expect((await call("/v1/agents/names-gone", { method: "DELETE", as: "admin" })).status).toBe(200);
		// A registry row a deploy gave fleet.yaml's name to (retired at the next tick): listed once, as the file's.
		await env.DB.prepare("INSERT INTO agents (name, definition, definition_revision, created_by, created_at, updated_at) VALUES ('triage', ?, 'r1', 'root', 1, 1)")
			.bind(JSON.stringify({ name: "triage" }))
			.run();

		const names = { n: 0 };
		const all = await read("/v1/agents?view=names&limit=200", names);
		expect(names.n).toBe(0);
		expect(all.next_cursor).toBeNull();
		// This file's other tests' agents (listed-large, pfx-…), whichever ran first, aside.
		const own = (a: Record<string, unknown>) => a.source === "file" || String(a.name).startsWith("names-");
		expect(all.agents.filter(own)).toEqual([
			{ name: "daily-digest", source: "file" },
			{ name: "names-a", source: "api" },
			{ name: "names-b", source: "api" },
			{ name: "site-watch", source: "file" },
			{ name: "triage", source: "file" },
		]);
		// The same agents as the full list, which asks each one's object for its state.
		const full = { n: 0 };
		const listed = await read("/v1/agents?limit=200", full);
		expect(listed.agents.map((a) => ({ name: a.name, source: a.source }))).toEqual(all.agents);
		expect(full.n).toBe(all.agents.length);

		// Paged by name, file and API agents merged, with the full list's cursors.
		const pages: unknown[][] = [];
		let cursor: string | null = null;
		do {
			const page = await read(`/v1/agents?view=names&limit=2${cursor ? `&cursor=${cursor}` : ""}`, names);
			pages.push(page.agents.map((a) => a.name));
			cursor = page.next_cursor;
		} while (cursor);
		const names2 = all.agents.map((a) => a.name);
		expect(pages).toEqual(Array.from({ length: Math.ceil(names2.length / 2) }, (_, i) => names2.slice(2 * i, 2 * i + 2)));
		// After names-a: names-b, then whichever agent follows it by name.
		const afterA = names2.slice(names2.indexOf("names-a") + 1, names2.indexOf("names-a") + 3);
		expect(afterA[0]).toBe("names-b");
		expect((await read("/v1/agents?view=names&limit=2&cursor=names-a", names)).agents.map((a) => a.name)).toEqual(afterA);
		expect((await read("/v1/agents?limit=2&cursor=names-a", full)).agents.map((a) => a.name)).toEqual(afterA);
		expect(names.n).toBe(0);
	});

	it("refuses a view it does not have with a 400 naming it", async () => {
		const res = await call("/v1/agents?view=all");
		expect(res.status).toBe(400);
		expect((await errorOf(res)).message).toContain("view");
	});
});

describe("GET /v1/agents?prefix=", () => {
	const names = async (path: string) => {
		const res = await call(path);
		expect(res.status, path).toBe(200);
		return (await res.json()) as { agents: { name: string; source: string }[]; next_cursor: string | null };
	};

	it("lists only the agents whose name starts with the prefix, file and API agents merged, paged by name, in both views", async () => {
		for (const name of ["pfx-b", "pfx-a", "pfx-c", "pfy-a", "pf"]) await createAgent({ name });
		await createAgent({ name: "pfx-gone" });
		expect((await call("/v1/agents/pfx-gone", { method: "DELETE", as: "admin" })).status).toBe(200);
		// Deleted agents, names past the prefix's range and names that only contain it are left out.
		expect((await names("/v1/agents?prefix=pfx-")).agents.map((a) => a.name)).toEqual(["pfx-a", "pfx-b", "pfx-c"]);
		expect((await names("/v1/agents?prefix=pfx-&view=names")).agents).toEqual([
			{ name: "pfx-a", source: "api" },
			{ name: "pfx-b", source: "api" },
			{ name: "pfx-c", source: "api" },
		]);
		expect((await names("/v1/agents?prefix=pf&view=names")).agents.map((a) => a.name)).toEqual(["pf", "pfx-a", "pfx-b", "pfx-c", "pfy-a"]);
		// fleet.yaml's agents too, by the same rule.
		expect((await names("/v1/agents?prefix=t")).agents.map((a) => [a.name, a.source])).toEqual([["triage", "file"]]);
		expect((await names("/v1/agents?prefix=site-watch")).agents.map((a) => a.name)).toEqual(["site-watch"]);
		// Paged: the cursor goes on within the prefix.
		const first = await names("/v1/agents?prefix=pfx-&limit=2");
		expect(first.agents.map((a) => a.name)).toEqual(["pfx-a", "pfx-b"]);
		expect(first.next_cursor).toBe("pfx-b");
		const second = await names(`/v1/agents?prefix=pfx-&limit=2&cursor=${first.next_cursor}`);
		expect(second.agents.map((a) => a.name)).toEqual(["pfx-c"]);
		expect(second.next_cursor).toBeNull();
		expect((await names("/v1/agents?prefix=zzz")).agents).toEqual([]);
	});

	it("refuses a prefix no agent name could start with, saying why", async () => {
		for (const bad of ["PFX", "-pfx", "pfx_a", "a".repeat(64)]) {
			const res = await call(`/v1/agents?prefix=${bad}`);
			expect(res.status, bad).toBe(400);
			expect((await errorOf(res)).message, bad).toMatch(/^invalid query: prefix: must be an agent name/);
		}
	});
});
