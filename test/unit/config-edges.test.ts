// src/config at edges a mutation walk found unchecked (fleet.yaml's reading, readiness, allow_hosts,
// tool schemas, model ids, reserved secrets, vars, timezones, the schema's bounds and defaults): each
// case failed on a mutant of the module it names, which the suite let through.
import { describe, expect, it } from "vitest";
import { definitionRevision, parseFleet } from "../../src/config/fleet.ts";
import { readinessProblems, readinessWarnings, webhookSecretProblem } from "../../src/config/readiness.ts";
import { numberVar, numberVarIssues, publicUrl } from "../../src/config/vars.ts";
import { modelIdProblem } from "../../src/config/models.ts";
import { jsonSchemaProblems } from "../../src/config/json-schema.ts";
import { ConfigError } from "../../src/errors.ts";
import { parseAgent } from "../helpers/definitions.ts";

function refusal(text: string): string {
	try {
		parseFleet(text);
	} catch (error) {
		expect(error).toBeInstanceOf(ConfigError);
		return (error as ConfigError).message;
	}
	throw new Error("expected the file to be refused");
}

describe("fleet.ts: a definition's revision", () => {
	it("is the same for schedules written in another order (a map's keys are sorted, not only the schema's)", async () => {
		const one = parseAgent({ name: "rev", prompt: "p", schedules: { a: { interval: "1h" }, b: { interval: "2h" } } });
		const other = parseAgent({ name: "rev", prompt: "p", schedules: { b: { interval: "2h" }, a: { interval: "1h" } } });
		expect(Object.keys(other.schedules)).toEqual(["b", "a"]);
		expect(await definitionRevision(other)).toBe(await definitionRevision(one));
	});
});

describe("yaml.ts: where a fleet file's fault is said", () => {
	it("says a missing top-level key at the document's start (line 1:1), where no deeper part of the path is written", () => {
		expect(refusal("agents: []\n")).toBe("fleet.yaml is invalid:\n  - version: version must be 1 (line 1:1)");
	});

	it('refuses a quoted "<<" as an unknown key, not as a merge key (only a plain << merges)', () => {
		const message = refusal('version: 1\nagents:\n  - name: a\n    prompt: p\n    "<<": x\n');
		expect(message).toMatch(/^ {2}- agents\[0\]\.<<: unknown key; allowed: name, .* \(line 5:5, agent a\)$/m);
		expect(message).not.toContain("merge keys");
	});
});

describe("schema.ts: agents of one name in a fleet file", () => {
	it("says each repeat of a name at its own path, naming the first agent of it", () => {
		const text = "version: 1\nagents:\n  - { name: same, prompt: p }\n  - { name: same, prompt: p }\n  - { name: same, prompt: p }\n";
		const lines = refusal(text).split("\n").slice(1);
		expect(lines).toEqual([
			'  - agents[1].name: duplicate agent name "same" (also agents[0]) (line 4:13, agent same)',
			'  - agents[2].name: duplicate agent name "same" (also agents[0]) (line 5:13, agent same)',
		]);
	});
});

describe("readiness.ts: what pauses an agent, and what it is warned of", () => {
	const env = { ANTHROPIC_API_KEY: "sk-ant-test-0000000000000000" };

	it("pauses an agent whose one model is retired from the first moment of its end-of-life day, not the moment before", () => {
		const agent = parseAgent({ name: "old", prompt: "p", model: "claude-sonnet-4-5" });
		expect(readinessProblems(agent, env, new Date("2026-11-30T00:00:00.000Z"))).toEqual(["model claude-sonnet-4-5 is retired (end of life 2026-11-30) and no fallback model is current"]);
		expect(readinessProblems(agent, env, new Date("2026-11-29T23:59:59.999Z"))).toEqual([]);
		// A current fallback runs it.
		expect(readinessProblems(parseAgent({ name: "old", prompt: "p", model: "claude-sonnet-4-5", fallback_models: ["claude-sonnet-5-5"] }), env, new Date("2027-01-01T00:00:00Z"))).toEqual([]);
	});

	it("pauses an API agent whose cost limit is on a model fleet.yaml prices no more (each run would pay, then fail), not one on a priced model", () => {
		const limited = (model: string) => parseAgent({ name: "costly", prompt: "p", model, usage_limits: { max_cost_usd: 1 } });
		expect(readinessProblems(limited("claude-opus-5-5"), env, new Date("2026-12-01T00:00:00Z"))).toEqual([expect.stringMatching(/^max_cost_usd cannot apply: claude-opus-5-5 has no price in fleet\.yaml's pricing/)]);
		expect(readinessProblems(limited("claude-haiku-5-5"), env, new Date("2026-12-01T00:00:00Z"))).toEqual([]);
	});

	it("takes a webhook trigger's secret whose value another secret has too, when drover signs nothing with that one", () => {
		const key = "k3y-0f-its-own-0123456789abcdef";
		expect(webhookSecretProblem({ TRIGGER_SECRET: key, OTHER_TRIGGER_SECRET: key }, "TRIGGER_SECRET")).toBeNull();
		expect(webhookSecretProblem({ TRIGGER_SECRET: key, TICKETS_URL: "https://tickets.example.test/hook", TICKETS_URL_SIGNING_KEY: key }, "TRIGGER_SECRET")).toMatch(/^has the value of TICKETS_URL_SIGNING_KEY: /);
	});

	it("warns of no signing key for a webhook tool whose URL secret is one of drover's own (not read for it: a problem, said as one), only for one of its own", () => {
		const tool = (url_secret: string) => ({ type: "webhook" as const, name: "file_it", url_secret, requires_approval: false });
		const summary = (url_secret: string) => ({ ...parseAgent({ name: "tools", prompt: "p" }), tools: [tool(url_secret)] });
		expect(readinessWarnings(summary("DROVER_TICKETS_URL"), env).filter((w) => w.includes("_SIGNING_KEY"))).toEqual([]);
		expect(readinessWarnings(summary("TICKETS_URL"), env).filter((w) => w.includes("_SIGNING_KEY"))).toEqual([expect.stringMatching(/^secret TICKETS_URL_SIGNING_KEY \(tool file_it\) is not set: /)]);
	});
});

describe("hostname.ts: an allow_hosts entry", () => {
	const issues = (host: string) => {
		try {
			parseAgent({ name: "hosts", prompt: "p", tools: [{ type: "http_fetch", allow_hosts: [host] }] });
			return [];
		} catch (error) {
			return (error as ConfigError).issues;
		}
	};
	const bare = 'must be a bare lowercase hostname like "example.com" (no scheme, port or path)';

	it("takes a label of 63 characters and refuses one of 64 (DNS's limit)", () => {
		expect(issues(`${"a".repeat(63)}.example.com`)).toEqual([]);
		expect(issues(`${"a".repeat(64)}.example.com`)).toEqual([{ path: "tools[0].allow_hosts[0]", message: bare }]);
	});

	it("suggests no IP address for an address written with a port or a scheme (the tool never fetches one)", () => {
		expect(issues("192.0.2.1:8080")).toEqual([{ path: "tools[0].allow_hosts[0]", message: bare }]);
		expect(issues("https://192.0.2.1/")).toEqual([{ path: "tools[0].allow_hosts[0]", message: bare }]);
	});
});

describe("json-schema.ts: a tool's input_schema", () => {
	it("refuses an empty list of types and a multipleOf of 0, each at its path", () => {
		expect(jsonSchemaProblems({ type: "object", properties: { a: { type: [] }, n: { type: "number", multipleOf: 0 } } })).toEqual([
			{ path: ["properties", "n", "multipleOf"], message: "must be a number above 0" },
			{ path: ["properties", "a", "type"], message: expect.stringMatching(/^must be one of null, boolean, .* not \[\]$/) },
		]);
	});

	it("refuses an enum that is no list, a pattern that is no string, and one that is a regex only without the u flag (patterns are read with it)", () => {
		expect(jsonSchemaProblems({ type: "object", properties: { e: { enum: "a" }, p: { type: "string", pattern: 5 }, q: { type: "string", pattern: "a{" } } })).toEqual([
			{ path: ["properties", "q", "pattern"], message: expect.stringMatching(/^is not a valid regular expression: /) },
			{ path: ["properties", "p", "pattern"], message: "must be a string" },
			{ path: ["properties", "e", "enum"], message: "must be a list of values" },
		]);
	});

	it("reads draft 7's items as a list of schemas, each at its index", () => {
		expect(jsonSchemaProblems({ type: "array", items: [{ type: "string" }, { type: "strnig" }] })).toEqual([{ path: ["items", 1, "type"], message: expect.stringMatching(/^must be one of /) }]);
	});
});

describe("models.ts: the id a misspelt model id is said to be near", () => {
	it("is, of two as close, the one the SDK lists first (the newer), and never a dated snapshot", () => {
		expect(modelIdProblem("claude-mythos-5-x")).toContain("(did you mean claude-mythos-5-2?)");
		expect(modelIdProblem("claude-haiku-4-5-2025100")).toMatch(/^claude-haiku-4-5-2025100 is not a model id this release knows: /);
	});
});

describe("reserved-secrets.ts: a secret a definition may not name", () => {
	it("is each of drover's own, by name or prefix (PUBLIC_URL, ALERT_WEBHOOK_URL and its signing key, DROVER_*), and not a name that merely holds one", () => {
		const named = (secret: string) => {
			try {
				parseAgent({ name: "secrets", prompt: "p", webhook: { secret } });
				return [];
			} catch (error) {
				return (error as ConfigError).issues;
			}
		};
		for (const secret of ["PUBLIC_URL", "ALERT_WEBHOOK_URL", "ALERT_WEBHOOK_URL_SIGNING_KEY", "DROVER_TRIGGER_SECRET", "API_TOKENS"]) {
			expect(named(secret), secret).toEqual([{ path: "webhook.secret", message: expect.stringMatching(/^names one of drover's own secrets or settings \(API_TOKENS, ANTHROPIC_\*, DROVER_\*, ALERT_WEBHOOK_URL\*, PUBLIC_URL\): /) }]);
		}
		for (const secret of ["MY_PUBLIC_URL", "MY_API_TOKENS", "TRIGGER_DROVER_SECRET"]) expect(named(secret), secret).toEqual([]);
	});
});

describe("vars.ts: SUBREQUEST_LIMIT and PUBLIC_URL", () => {
	it("takes SUBREQUEST_LIMIT 10 and 10000000 as set (README: 10 to 10,000,000), and refuses 9 and 10000001", () => {
		expect(numberVar({ SUBREQUEST_LIMIT: "10" }, "SUBREQUEST_LIMIT")).toBe(10);
		expect(numberVar({ SUBREQUEST_LIMIT: "10000000" }, "SUBREQUEST_LIMIT")).toBe(10_000_000);
		expect(numberVarIssues({ SUBREQUEST_LIMIT: "9" })).toEqual([{ path: "SUBREQUEST_LIMIT", message: "SUBREQUEST_LIMIT 9 is outside 10..10000000 subrequests; the default 10000 is used" }]);
		expect(numberVarIssues({ SUBREQUEST_LIMIT: "10000001" })).toHaveLength(1);
	});

	it("reads PUBLIC_URL as its origin: no trailing slash (a link is the origin and its path), the host lower-case", () => {
		expect(publicUrl({ PUBLIC_URL: " https://Drover.Example.test/ " })).toBe("https://drover.example.test");
	});
});

describe("timezone.ts: a schedule's timezone", () => {
	it("says an offset written with the minus sign (U+2212), which Intl takes, is a UTC offset", () => {
		try {
			parseAgent({ name: "zones", prompt: "p", schedules: { a: { cron: "0 9 * * *", timezone: "\u221205:00" } } });
			expect.unreachable("the offset was taken as a zone");
		} catch (error) {
			expect((error as ConfigError).issues).toEqual([{ path: "schedules.a.timezone", message: expect.stringMatching(/^timezone "\u221205:00" is a UTC offset, not an IANA zone; /) }]);
		}
	});
});

describe("schema.ts: a definition's bounds and defaults README.md states", () => {
	const issues = (fields: Record<string, unknown>) => {
		try {
			parseAgent({ name: "bounds", prompt: "p", ...fields });
			return [];
		} catch (error) {
			return (error as ConfigError).issues.map((i) => i.path);
		}
	};

	it("takes max_turns 1..500 and max_concurrent 1..100, and refuses one past either", () => {
		expect(issues({ max_turns: 500, max_concurrent: 100 })).toEqual([]);
		expect(issues({ max_turns: 501, max_concurrent: 101 })).toEqual(["max_turns", "max_concurrent"]);
	});

	it("takes an approval_timeout of 30d and refuses a minute more", () => {
		expect(issues({ approval_timeout: "30d" })).toEqual([]);
		expect(issues({ approval_timeout: "30d1m" })).toEqual(["approval_timeout"]);
	});

	it('refuses the name "scheduler", which the scheduler files its own incidents under, and a key of sk-ant- and 8 characters in a prompt', () => {
		expect(issues({ name: "scheduler" })).toEqual(["name"]);
		expect(issues({ name: "schedulers" })).toEqual([]);
		expect(issues({ prompt: "use sk-ant-abcd1234 for it" })).toEqual(["prompt"]);
		expect(issues({ prompt: "use sk-ant-abcd123 for it" })).toEqual([]);
	});

	it("fires on_error on failed and indeterminate by default, after_run on every final status", () => {
		const { hooks } = parseAgent({ name: "hooked", prompt: "p", hooks: { after_run: [{ url_secret: "AUDIT_URL" }], on_error: [{ url_secret: "PAGER_URL" }] } });
		expect(hooks).toEqual({ after_run: [{ url_secret: "AUDIT_URL", events: ["completed", "failed", "cancelled", "indeterminate"] }], on_error: [{ url_secret: "PAGER_URL", events: ["failed", "indeterminate"] }] });
	});
});
