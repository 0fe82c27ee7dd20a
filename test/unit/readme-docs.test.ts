import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MAX_ATTEMPTS, MAX_RETRY_AFTER_MS, SEND_TIMEOUT_MS } from "../../durable-objects/agent/effects.ts";
import { NOTEPAD_KEY_CHARS, NOTEPAD_VALUE_BYTES } from "../../durable-objects/agent/notepad.ts";
import { ALARM_BUDGET_MS } from "../../durable-objects/agent/pass-budget.ts";
import { MODEL_TOOL_RESULT_CHARS, TOOL_RESULTS_BUDGET_CHARS } from "../../durable-objects/agent/runner/context.ts";
import { SUMMARY_CHARS } from "../../durable-objects/agent/runner/step-common.ts";
import { MAX_SESSION_JOBS } from "../../durable-objects/agent/sessions.ts";
import { MAX_BACKLOG_BYTES, MAX_STREAMS_PER_AGENT, MAX_STREAMS_PER_JOB } from "../../durable-objects/agent/streams.ts";
import { MAX_QUEUED } from "../../durable-objects/agent/triggers.ts";
import { TOOL_TIMEOUT_MS } from "../../src/agent/tools/http-common.ts";
import { WEBHOOK_MAX_RESPONSE_BYTES } from "../../src/agent/tools/webhook.ts";
import { RESULT_PREVIEW_CHARS } from "../../src/api/jobs/tool-calls.ts";
import { DEFINITION_BODY_BYTES, ERROR_CODES, MAX_BODY_BYTES, PROMPT_BODY_BYTES } from "../../src/api/schemas.ts";
import { app } from "../../src/app.ts";
import { parseFleet } from "../../src/config/fleet.ts";
import { MIN_WEBHOOK_SECRET_CHARS } from "../../src/config/readiness.ts";
import { AgentSchema, DEFAULT_MAX_CONTEXT_TOKENS, MAX_DEFINITION_BYTES, MAX_PROMPT_CHARS, MAX_SCHEDULES, ScheduleSchema, SessionSchema } from "../../src/config/schema.ts";
import { numberVar, numberVarProblem, type NumberVarName } from "../../src/config/vars.ts";
import { dashboardApp } from "../../src/dashboard/routes.tsx";
import { SLACK_MAX_BLOCKS } from "../../src/delivery/format.ts";
import { QUEUED_ANSWER_UNITS } from "../../src/delivery/queued.ts";
import { UNPAGED_AFTER_MS } from "../../src/incidents/alert.ts";
import { MIN_SESSION_PREFIX } from "../../src/jobs/session-id-format.ts";
import { BEHIND_MINUTES } from "../../src/scheduler/backlog.ts";
import { SCHEDULER_SHARDS } from "../../src/scheduler/shards.ts";
import { MAX_JSON_DEPTH } from "../../src/shared/json-depth.ts";
import { SUBREQUEST_SHARE } from "../../src/shared/subrequests.ts";
import { OPEN_COUNTED, UNPAGED_COUNTED } from "../../src/store/incidents.ts";
import { INDEX_SUMMARY_CHARS } from "../../src/store/job-index.ts";

// README.md and cli/README.md are the manual: what they name must be what the code has, both ways.
const docs = import.meta.glob(["/README.md", "/cli/README.md", "/worker-configuration.d.ts", "/wrangler.toml", "/package.json"], { query: "?raw", import: "default", eager: true }) as Record<string, string>;
const sources = import.meta.glob(["/src/**/*.ts", "/durable-objects/**/*.ts"], { query: "?raw", import: "default", eager: true }) as Record<string, string>;
const cliSources = import.meta.glob(["/cli/commands/*.ts", "/cli/program.ts"], { query: "?raw", import: "default", eager: true }) as Record<string, string>;
const code = Object.values(sources).join("\n");
const readme = docs["/README.md"]!;

/** The rows of the Markdown table whose header line starts with `header`, each split into its cells. */
function tableRows(text: string, header: string): string[][] {
	const at = text.indexOf(header);
	expect(at, header).toBeGreaterThanOrEqual(0);
	const table = text.slice(at);
	return table
		.slice(0, table.search(/\n(?!\|)/))
		.split("\n")
		.slice(2)
		.map((row) => row.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim()));
}

const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

interface Operation {
	security?: unknown[];
	"x-drover-role"?: string;
	parameters?: { name?: string; in?: string; schema?: { default?: number; minimum?: number; maximum?: number } }[];
}
/** The OpenAPI document the Worker serves. */
const openapi = async () => (await (await app.request("/openapi.json", {}, env)).json()) as { paths: Record<string, Record<string, Operation>> };

describe("README's secrets and variables", () => {
	const rows = tableRows(readme, "| name | kind | meaning |");
	const listed = new Map(rows.map(([name, , meaning]) => [ticked(name!)[0]!, meaning!]));
	const declared = [...(/interface __BaseEnv_Env \{([^}]*)\}/.exec(docs["/worker-configuration.d.ts"]!)?.[1] ?? "").matchAll(/^\s*([A-Z][A-Z0-9_]*): string;$/gm)].map((m) => m[1]!);

	it("are the Worker's own, every one of them: each variable Env declares is a row, and each row (but fleet.yaml's names) is declared and read by the code", () => {
		expect(declared.length).toBeGreaterThan(5);
		expect(new Set([...listed.keys()].filter((name) => name !== "<NAME>"))).toEqual(new Set(declared));
		for (const name of declared) expect(code, name).toMatch(new RegExp(`\\benv\\.${name}\\b|numberVar\\([^)]*"${name}"\\)`));
	});

	it("give each numeric var the default and range the code uses", () => {
		const numeric = ["RETENTION_DAYS", "HEARTBEAT_STALE_SECONDS", "SUBREQUEST_LIMIT"] as const satisfies NumberVarName[];
		const spelt = (n: number) => `(?:${n}|${n.toLocaleString("en-US")})`;
		for (const name of numeric) {
			const fallback = numberVar({}, name);
			const [, min, max] = /\((\d+)\.\.(\d+)\)/.exec(numberVarProblem(name, "x") ?? "")!.map(Number) as [number, number, number];
			const meaning = listed.get(name) ?? "";
			expect(meaning, name).toMatch(new RegExp(`default ${spelt(fallback)}\\b|\\b${spelt(fallback)} by default`));
			expect(meaning, name).toMatch(new RegExp(`\\b${spelt(min)} to ${spelt(max)}\\b`));
		}
	});

	it("name the release DROVER_VERSION is set to", () => {
		const version = /^DROVER_VERSION = "([^"]+)"$/m.exec(docs["/wrangler.toml"]!)?.[1];
		expect(version).toBe((JSON.parse(docs["/package.json"]!) as { version: string }).version);
		expect(listed.get("DROVER_VERSION")).toContain(`\`${version}\` for this one`);
	});
});

describe("README's HTTP API table", () => {
	/** Each row's routes, as `METHOD /path`, with the role its second cell gives each. */
	function documented(): Map<string, string> {
		const routes = new Map<string, string>();
		for (const [cell, role] of tableRows(readme, "| route | role | what |")) {
			let methods: string[] = [];
			let last: { methods: string[]; path: string } | null = null;
			const add = (ms: string[], path: string) => {
				for (const m of ms) {
					const [read, write] = role!.split(" / ");
					const key = `${m} ${path}`;
					expect(routes.has(key), `${key} is in two rows`).toBe(false);
					routes.set(key, write !== undefined && m !== "GET" ? write : read!);
				}
			};
			for (const token of ticked(cell!)) {
				const full = /^([A-Z]+(?:\/[A-Z]+)*) (\/\S*)$/.exec(token);
				if (full) {
					last = { methods: [...methods, ...full[1]!.split("/")], path: full[2]! };
					methods = [];
					add(last.methods, last.path);
				} else if (/^[A-Z]+(?:\/[A-Z]+)*$/.test(token)) methods.push(...token.split("/"));
				else if (/^[a-z][a-z.-]*$/.test(token) && last) add(last.methods, `${last.path.slice(0, last.path.lastIndexOf("/") + 1)}${token}`);
				else throw new Error(`unread route cell ${cell}`);
			}
		}
		return routes;
	}

	it("lists every route the Worker serves, and only those, with the role each needs", async () => {
		const doc = await openapi();
		const served = new Map<string, string>([["GET /openapi.json", "none"]]);
		for (const [path, ops] of Object.entries(doc.paths)) {
			for (const [method, op] of Object.entries(ops)) {
				const role = op["x-drover-role"] ?? (path.startsWith("/v1/hooks/") ? "signature" : op.security?.length === 0 ? "none" : "?");
				served.set(`${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`, role);
			}
		}
		// The document is checked against the app's routes in test/api/contract.test.ts; here, that it is all of them.
		const pages = new Set(dashboardApp.routes.map((r) => `${r.method} ${r.path}`));
		const routed = app.routes.filter((r) => r.method !== "ALL" && !pages.has(`${r.method} ${r.path}`)).map((r) => `${r.method} ${r.path}`);
		expect(new Set(routed)).toEqual(new Set(served.keys()));
		expect(Object.fromEntries([...documented()].sort())).toEqual(Object.fromEntries([...served].sort()));
	});

	it("gives each paged route's `limit` the range and default the route takes", async () => {
		const doc = await openapi();
		const rows = new Map(tableRows(readme, "| route | role | what |").flatMap(([cell, , what]) => ticked(cell!).flatMap((route) => (/^GET[ /]/.test(route) ? [[route.replace(/^[A-Z/]+ /, ""), what!] as const] : []))));
		let paged = 0;
		for (const [path, ops] of Object.entries(doc.paths)) {
			const limit = ops.get?.parameters?.find((p) => p.in === "query" && p.name === "limit")?.schema;
			if (!limit) continue;
			paged++;
			const what = rows.get(path.replace(/\{(\w+)\}/g, ":$1"));
			expect(what, path).toMatch(new RegExp(`\`limit\` \\(${limit.minimum}[-–]${limit.maximum}, default ${limit.default}\\)`));
		}
		expect(paged).toBeGreaterThan(6);
	});

	it("names fields the API has: each snake_case name in the table and in Beyond the design document's fields is a property, parameter or value of the OpenAPI document", async () => {
		const doc = await openapi();
		const names = new Set<string>();
		const walk = (value: unknown): void => {
			if (Array.isArray(value)) return value.forEach(walk);
			if (value === null || typeof value !== "object") return;
			for (const [key, inner] of Object.entries(value)) {
				if (key === "properties") for (const name of Object.keys(inner as object)) names.add(name);
				if ((key === "enum" && Array.isArray(inner)) || (key === "name" && typeof inner === "string")) for (const name of [inner].flat()) names.add(String(name));
				walk(inner);
			}
		};
		walk(doc);
		const table = readme.slice(readme.indexOf("| route | role | what |"));
		const fields = readme.slice(readme.indexOf("- **Fields:**"));
		const text = `${table.slice(0, table.indexOf("\n\n"))}\n${fields.slice(0, fields.indexOf("\n- **"))}`;
		const named = new Set(ticked(text).filter((name) => /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?:\.[a-z_]+)*$/.test(name)));
		expect(named.size).toBeGreaterThan(40);
		for (const name of named) expect(name.split(".").every((part) => names.has(part)), name).toBe(true);
	});

	it("lists the error codes an answer gives, every one", () => {
		const said = readme.slice(readme.indexOf("`error.code` is an enum of these codes:"));
		expect(new Set(ticked(said.slice(0, said.indexOf("\n\n"))).slice(1))).toEqual(new Set(ERROR_CODES));
	});

	it("is where every route the manuals name elsewhere is found: each `METHOD /path` README and cli/README.md write is a route of it", () => {
		const routes = [...documented().keys()].map((route) => new RegExp(`^${route.replace(/[.]/g, "\\.").replace(/:\w+/g, "[^/]+")}$`));
		let named = 0;
		for (const text of [readme, docs["/cli/README.md"]!]) {
			for (const [, methods, path] of text.matchAll(/\b((?:GET|POST|PUT|DELETE|PATCH)(?:\/(?:GET|POST|PUT|DELETE|PATCH))*) (\/(?:v1\/[A-Za-z0-9_:.\/<>-]*[A-Za-z0-9_>]|v1|healthz|openapi\.json))/g)) {
				// A cut-off id (`/v1/sessions/ses-…`) is left to its whole form elsewhere.
				if (/-$|-<[^/]*$/.test(path!)) continue;
				for (const method of methods!.split("/")) {
					named++;
					expect(routes.some((route) => route.test(`${method} ${path}`)), `${method} ${path}`).toBe(true);
				}
			}
		}
		expect(named).toBeGreaterThan(100);
	});
});

describe("the CLI's manuals", () => {
	const commands = Object.values(cliSources).flatMap((source) => [...source.matchAll(/\.command\("([a-z-]+)"\)/g)].map((m) => m[1]!));
	const options = new Set(Object.values(cliSources).flatMap((source) => [...source.matchAll(/(?:\.option|\.requiredOption|new Option)\(\s*"(?:-\w, )?(--[a-z-]+)/g)].map((m) => m[1]!)));
	// commander's own.
	for (const given of ["--version", "--help"]) options.add(given);
	const cliReadme = docs["/cli/README.md"]!;
	const table = tableRows(cliReadme, "| command | API |");
	const heads = table.flatMap(([cell]) => ticked(cell!));

	it("cli/README.md's table has a row for every command and subcommand, and names only options the CLI has", () => {
		expect(commands.length).toBeGreaterThan(20);
		for (const command of commands) expect(heads.some((head) => new RegExp(`^(?:[a-z]+ )?${command}(?: |$)`).test(head)), command).toBe(true);
		for (const head of heads) {
			const name = head.split(" ")[0]!;
			if (/^[a-z]/.test(name)) expect(commands, head).toContain(name);
			for (const [flag] of head.matchAll(/--[a-z-]+/g)) expect(options, head).toContain(flag);
		}
	});

	it("cli/README.md's Layout names every file of cli/, and only those", () => {
		// The bundle (drover.bundle.*) is built by npm install, not kept in git: not every checkout has it.
		const files = Object.keys(import.meta.glob(["/cli/*", "!/cli/README.md", "!/cli/drover.bundle.*"], { query: "?raw" })).map((file) => file.slice("/cli/".length));
		const layout = cliReadme.slice(cliReadme.lastIndexOf("\nLayout: "));
		const named = ticked(layout).filter((name) => /^[a-z][a-z.-]*\.(?:ts|mjs|json)$/.test(name) && !name.startsWith("drover.bundle."));
		expect(files.length).toBeGreaterThan(10);
		expect(new Set(named)).toEqual(new Set(files));
		expect(layout).toContain("`commands/*.ts`");
	});

	// A command with subcommands (`const incidents = program.command("incidents")`, then `incidents.command("close")`),
	// and whether it takes an argument of its own: without one, a word after it can only be a subcommand.
	const parents = new Map(
		Object.values(cliSources).flatMap((source) =>
			[...source.matchAll(/const (\w+) = program\s*\.command\("([a-z-]+)"\)([\s\S]*?)\.action\(/g)].map((m) => {
				const subs = [...source.matchAll(new RegExp(`\\b${m[1]}\\s*\\.command\\("([a-z-]+)"\\)`, "g"))].map((sub) => sub[1]!);
				return [m[2]!, { subs, takesArgument: m[3]!.includes(".argument(") }] as const;
			}),
		),
	);

	it("names each subcommand after its own command: a word after a command that takes none of its own is one of its subcommands", () => {
		expect(parents.get("incidents")).toEqual({ subs: ["close", "resolve"], takesArgument: false });
		const written = [readme, cliReadme].flatMap((text) => [...text.matchAll(/(?:^drover|·|`drover) ([a-z-]+) ([a-z][a-z-]*)\b/gm)]);
		let checked = 0;
		for (const [line, command, next] of written) {
			const parent = parents.get(command!);
			if (!parent || parent.takesArgument) continue;
			expect(parent.subs, line).toContain(next);
			checked++;
		}
		expect(checked).toBeGreaterThan(3);
	});

	it("the CLI lines of README's and cli/README.md's shell blocks use only commands and options the CLI has", () => {
		const lines = [readme, cliReadme].flatMap((text) => [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].flatMap((m) => m[1]!.split("\n"))).filter((line) => /^drover /.test(line));
		let used = 0;
		for (const line of lines) {
			const shell = line.replace(/\s+#.*$/, "");
			for (const [, command] of shell.matchAll(/(?:^drover|·) ([a-z-]+)/g)) {
				expect(commands, line).toContain(command);
				used++;
			}
			// Its comments' options too: they are what a reader types next.
			for (const [flag] of line.matchAll(/(?<=[\s[(])--[a-z-]+/g)) expect(options, line).toContain(flag);
		}
		expect(used).toBeGreaterThan(20);
	});
});

describe("README's fleet.yaml", () => {
	const at = readme.indexOf("```yaml\nversion: 1\n");
	const example = readme.slice(at + "```yaml\n".length, readme.indexOf("\n```", at) + 1);

	it("is a fleet the Worker loads, naming every key an agent, a schedule and a session may have", () => {
		const fleet = parseFleet(example, "README.md");
		const agent = fleet.agents[0]!;
		const keysOf = (text: string, indent: number) => new Set([...text.matchAll(new RegExp(`^(?: {${indent}}| {${indent - 2}}- )([a-z_]+):`, "gm"))].map((m) => m[1]!));
		expect(fleet.agents).toHaveLength(1);
		for (const key of Object.keys(AgentSchema.shape)) expect(keysOf(example, 4), `agent key ${key}`).toContain(key);
		for (const key of Object.keys(ScheduleSchema.in.shape)) expect(keysOf(example, 8), `schedule key ${key}`).toContain(key);
		for (const key of Object.keys(SessionSchema.shape)) expect(keysOf(example, 6), `session key ${key}`).toContain(key);
		expect(Object.keys(agent.schedules)).toHaveLength(2);
	});

	it("gives each whole-number key the range its schema takes", () => {
		let checked = 0;
		for (const [key, field] of Object.entries({ ...AgentSchema.shape, ...SessionSchema.shape })) {
			let inner: unknown = field;
			while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional) inner = inner.unwrap();
			if (!(inner instanceof z.ZodNumber)) continue;
			checked++;
			const comment = new RegExp(`^ +${key}: \\S+ +# (.*)$`, "m").exec(example)?.[1];
			expect(comment, key).toContain(`${inner.minValue}..${inner.maxValue}`);
		}
		expect(checked).toBeGreaterThan(3);
	});
});

describe("README's numbers", () => {
	it("are the code's: each limit and default a user acts on, as the constant that sets it has it", () => {
		const n = (value: number) => value.toLocaleString("en-US");
		const MiB = 1024 * 1024;
		const phrases = [
			`429 once ${MAX_QUEUED} runs are queued`,
			`${MAX_STREAMS_PER_JOB} live streams a job and ${MAX_STREAMS_PER_AGENT} an agent`,
			`more than ${MAX_BACKLOG_BYTES / MiB} MiB wait unread`,
			`${PROMPT_BODY_BYTES / MiB} MiB for the routes that carry a prompt`,
			`${DEFINITION_BODY_BYTES / MiB} MiB for those that carry an agent's definition`,
			`${MAX_BODY_BYTES / 1024} KiB for every other`,
			`its first ${n(RESULT_PREVIEW_CHARS)} characters`,
			`at least ${MIN_SESSION_PREFIX} characters after \`ses-\``,
			`the newest ${MAX_SESSION_JOBS}`,
			`${NOTEPAD_VALUE_BYTES / 1024} KiB a value`,
			`keys 1–${NOTEPAD_KEY_CHARS} characters`,
			`Up to ${MAX_ATTEMPTS} attempts, each given ${SEND_TIMEOUT_MS / 1000} s to answer`,
			`waits as long as it asks if that is longer, up to ${MAX_RETRY_AFTER_MS === 3_600_000 ? "an hour" : `${MAX_RETRY_AFTER_MS / 1000} s`}`,
			`at most ${MAX_JSON_DEPTH} levels deep`,
			`not paged ${UNPAGED_AFTER_MS / 60_000} minutes after they opened`,
			`counted up to ${OPEN_COUNTED}`,
			`(up to ${UNPAGED_COUNTED}; past that, \`more than ${UNPAGED_COUNTED}\`)`,
			`past the ${n(QUEUED_ANSWER_UNITS)} UTF-16 units a queued delivery keeps`,
			`past Slack's ${SLACK_MAX_BLOCKS} blocks`,
			`it is given ${TOOL_TIMEOUT_MS / 1000} s`,
			`up to ${n(WEBHOOK_MAX_RESPONSE_BYTES)} bytes`,
			`hands over to a fresh alarm run after ${ALARM_BUDGET_MS / 60_000} minutes, or once it has sent ${SUBREQUEST_SHARE * 100} % of \`SUBREQUEST_LIMIT\``,
			`A tick makes ${SCHEDULER_SHARDS} calls`,
			`**${BEHIND_MINUTES} minutes** or more older`,
			`final answer's first ${INDEX_SUMMARY_CHARS} characters`,
			`has its first ${n(SUMMARY_CHARS)}`,
			`refuse a secret under ${MIN_WEBHOOK_SECRET_CHARS} characters`,
			`cut to ${n(MODEL_TOOL_RESULT_CHARS)} characters`,
			`together keep at most ${n(TOOL_RESULTS_BUDGET_CHARS)} characters`,
			`(at most ${MAX_SCHEDULES};`,
			`at most ${MAX_DEFINITION_BYTES / 1024} KiB as JSON`,
			`up to ${n(MAX_PROMPT_CHARS)} characters`,
			`default ${DEFAULT_MAX_CONTEXT_TOKENS})`,
		];
		const text = readme.replace(/\s+/g, " ");
		for (const phrase of phrases) expect(text.includes(phrase), phrase).toBe(true);
	});
});

describe("README's JSONL", () => {
	it("lists every `system` line's subtype the agent writes", () => {
		const written = new Set([...code.matchAll(/\bsubtype: "([a-z_]+)"/g)].map((m) => m[1]!));
		const bullet = readme.slice(readme.indexOf("- **JSONL `system` subtypes:**"));
		const listed = new Set(ticked(bullet.slice(0, bullet.indexOf("\n- "))).filter((name) => /^[a-z_]+$/.test(name)));
		expect(written.size).toBeGreaterThan(5);
		for (const subtype of written) expect(listed, subtype).toContain(subtype);
	});
});

describe("README's npm commands", () => {
	it("are package.json's scripts: each `npm run` the manuals name, and each row of the scripts table", () => {
		const scripts = Object.keys((JSON.parse(docs["/package.json"]!) as { scripts: Record<string, string> }).scripts);
		const named = [readme, docs["/cli/README.md"]!].flatMap((text) => [...text.matchAll(/\bnpm run (?:--silent )?([a-z][a-z:-]*)/g)].map((m) => m[1]!));
		expect(named.length).toBeGreaterThan(30);
		for (const script of named) expect(scripts, `npm run ${script}`).toContain(script);
		const rows = tableRows(readme, "| script | what it does |").map(([cell]) => /^`npm run ([a-z:-]+)`$/.exec(cell!)?.[1]);
		expect(rows.length).toBeGreaterThan(5);
		for (const script of rows) expect(scripts).toContain(script);
	});
});

describe("README's Layout", () => {
	// Names only (lazy, never loaded): which files the checkout has, outside node_modules and build output.
	const files = Object.keys(
		import.meta.glob(["/src/**/*.{ts,tsx,js}", "/durable-objects/**/*.ts", "/cli/**/*.{ts,mjs,md}", "/emulator/**/*.ts", "/migrations/*.sql", "/test/**/*.ts", "/bench/**/*.{mjs,md}", "/scripts/*.{mjs,ts}", "/*.{ts,mts,toml,yaml,json}"], { query: "?raw" }),
	).map((file) => file.slice(1));
	const after = readme.slice(readme.indexOf("## Layout"));
	const block = after.slice(after.indexOf("```\n") + 4);
	const named = block
		.slice(0, block.indexOf("\n```"))
		.split("\n")
		.map((line) => /^(\S+(?:, \S+)*)\s{2,}/.exec(line)?.[1])
		.filter((cell) => cell !== undefined)
		.flatMap((cell) => {
			const [first, ...rest] = cell.split(", ");
			// `src/errors.ts, log.ts`: the others are in the first one's folder.
			return [first!, ...rest.map((name) => `${first!.slice(0, first!.lastIndexOf("/") + 1)}${name}`)];
		});

	it("names paths the checkout has: each folder holds files, each file exists", () => {
		expect(named.length).toBeGreaterThan(20);
		for (const path of named) expect(path.endsWith("/") ? files.some((file) => file.startsWith(path)) : files.includes(path), path).toBe(true);
	});

	it("names every top-level folder, and every folder of src/ and durable-objects/", () => {
		const folders = new Set(files.flatMap((file) => [/^[^/]+\//, /^(?:src|durable-objects)\/[^/]+\//].map((re) => re.exec(file)?.[0]).filter((f) => f !== undefined)));
		expect(folders.size).toBeGreaterThan(15);
		for (const folder of folders) if (folder !== "src/" && folder !== "durable-objects/") expect(named, folder).toContain(folder);
	});
});
