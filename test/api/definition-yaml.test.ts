import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createAgent } from "../helpers/agents.ts";
import { call, errorOf } from "../helpers/http.ts";

const YAML = { "content-type": "application/yaml" };

async function definitionOf(name: string) {
	const res = await call(`/v1/agents/${name}/definition`);
	expect(res.status, await res.clone().text()).toBe(200);
	return { text: await res.text(), etag: res.headers.get("etag")!, type: res.headers.get("content-type"), source: res.headers.get("x-drover-source") };
}

async function detailOf(name: string) {
	return (await (await call(`/v1/agents/${name}`)).json()) as { definition: Record<string, unknown> & { prompt: string }; definition_revision: string };
}

const put = (name: string, body: string, headers: Record<string, string> = {}) => call(`/v1/agents/${name}`, { method: "PUT", as: "admin", body, headers: { ...YAML, ...headers } });

describe("an agent's definition as YAML", () => {
	it("is read as YAML with its revision as ETag, revalidated, and written back as YAML changing only what was edited", async () => {
		await createAgent({ name: "yaml-edit", prompt: "Check the queue.", schedules: { quarter: { interval: "15m" } } });
		const before = await detailOf("yaml-edit");
		const read = await definitionOf("yaml-edit");
		expect(read.type).toBe("application/yaml; charset=utf-8");
		expect(read.etag).toBe(`"${before.definition_revision}"`);
		expect(read.source).toBe("api");
		expect(parse(read.text)).toEqual(before.definition);
		expect(read.text).toContain("prompt: Check the queue.\n");

		const unchanged = await call("/v1/agents/yaml-edit/definition", { headers: { "if-none-match": read.etag } });
		expect(unchanged.status).toBe(304);
		expect(await unchanged.text()).toBe("");

		const edited = read.text.replace("prompt: Check the queue.", "prompt: Check the queue twice.");
		const saved = await put("yaml-edit", edited, { "if-match": read.etag });
		expect(saved.status, await saved.clone().text()).toBe(200);
		const after = (await saved.json()) as { definition_revision: string; definition: { prompt: string } };
		expect(after.definition.prompt).toBe("Check the queue twice.");
		expect(after.definition_revision).not.toBe(before.definition_revision);
		expect({ ...(await detailOf("yaml-edit")).definition, prompt: before.definition.prompt }).toEqual(before.definition);
		expect((await definitionOf("yaml-edit")).etag).toBe(`"${after.definition_revision}"`);
		// The old ETag no longer matches: the definition is sent again.
		expect((await call("/v1/agents/yaml-edit/definition", { headers: { "if-none-match": read.etag } })).status).toBe(200);
	});

	it("refuses a change made on a revision that is no longer the agent's with a 412, changing nothing; of two at once, one wins", async () => {
		await createAgent({ name: "yaml-race", prompt: "First." });
		const read = await definitionOf("yaml-race");
		const [a, b] = await Promise.all([
			put("yaml-race", read.text.replace("First.", "From A."), { "if-match": read.etag }),
			put("yaml-race", read.text.replace("First.", "From B."), { "if-match": read.etag }),
		]);
		expect([a.status, b.status].sort()).toEqual([200, 412]);
		const [won, lost] = a.status === 200 ? [a, b] : [b, a];
		const winner = (await won.json()) as { definition: { prompt: string }; definition_revision: string };
		const error = await errorOf(lost);
		expect(error.code).toBe("precondition_failed");
		expect(error.message).toBe(`agent yaml-race has changed since revision ${read.etag.slice(1, -1)}: it is at revision ${winner.definition_revision} now; read it again and make the change there`);
		expect((await detailOf("yaml-race")).definition.prompt).toBe(winner.definition.prompt);

		// Without If-Match the last write wins, as before; with * any current definition is replaced.
		expect((await put("yaml-race", read.text.replace("First.", "Blind."))).status).toBe(200);
		expect((await put("yaml-race", read.text.replace("First.", "Starred."), { "if-match": "*" })).status).toBe(200);
		expect((await detailOf("yaml-race")).definition.prompt).toBe("Starred.");
	});

	it("is created by POST as YAML, and reads back as the same definition, a multi-line prompt and all", async () => {
		const created = await call("/v1/agents", {
			method: "POST",
			as: "admin",
			headers: YAML,
			body: "name: yaml-made\nprompt: |\n  Read the report: all of it.\n    # an indented line, not a comment\n  Say \"done\" when finished.\nschedules:\n  daily: { cron: '0 6 * * *', timezone: Europe/Berlin }\n",
		});
		expect(created.status, await created.clone().text()).toBe(201);
		const { definition, definition_revision } = await detailOf("yaml-made");
		expect(definition.prompt).toBe('Read the report: all of it.\n  # an indented line, not a comment\nSay "done" when finished.\n');
		expect(definition.schedules).toMatchObject({ daily: { cron: "0 6 * * *", timezone: "Europe/Berlin" } });
		const read = await definitionOf("yaml-made");
		expect(parse(read.text)).toEqual(definition);
		const again = await put("yaml-made", read.text, { "if-match": read.etag });
		expect(((await again.json()) as { definition_revision: string }).definition_revision).toBe(definition_revision);
	});

	it("says where in the YAML a field the injection scan refuses is", async () => {
		const res = await call("/v1/agents", { method: "POST", as: "admin", headers: YAML, body: 'name: yaml-hidden\nprompt: "Open report\\u202etxt.exe"\n' });
		expect(res.status).toBe(400);
		expect((await errorOf(res)).details?.issues).toEqual([{ path: "prompt", line: 2, column: 9, message: "refused by the injection scan: invisible unicode U+202E (bidi control) at character 12" }]);
		expect((await call("/v1/agents/yaml-hidden")).status).toBe(404);
	});

	it("answers a file agent's too, saying where it comes from", async () => {
		const read = await definitionOf("site-watch");
		expect(read.source).toBe("file");
		expect((parse(read.text) as { name: string }).name).toBe("site-watch");
	});
});

describe("a YAML definition that cannot be taken", () => {
	it("is a 400 whose issues say the line and column, changing nothing", async () => {
		await createAgent({ name: "yaml-bad", prompt: "Stay." });
		const { etag } = await definitionOf("yaml-bad");
		const cases: [string, string, { path: string; message: string; line?: number; column?: number }[]][] = [
			// An unclosed bracket or quote is said where it was opened: the parser meets it lines later.
			["a syntax error", "name: yaml-bad\nprompt: [Stay.\n", [{ path: "body", line: 2, column: 9, message: expect.stringMatching(/^Flow sequence .*: opened here and still open at the end of the text$/) as unknown as string }]],
			["an unclosed bracket met by the next key", "name: yaml-bad\nprompt: [Stay.\nmax_turns: 3\n", [{ path: "body", line: 2, column: 9, message: expect.stringMatching(/^Flow sequence .*: opened here and still open at line 3$/) as unknown as string }]],
			// The body ends at a closed inner bracket: the outer, unclosed one is the one named.
			["an unclosed map ending at a closed list", '{"name": "yaml-bad", "tags": ["x"]', [{ path: "body", line: 1, column: 1, message: expect.stringMatching(/^Flow map .*: opened here and still open at the end of the text$/) as unknown as string }]],
			["an unclosed quote", "name: yaml-bad\nprompt: \"Stay.\nmax_turns: 3\n\n", [{ path: "body", line: 2, column: 9, message: 'Missing closing "quote: opened here and still open at the end of the text' }]],
			["a field of the wrong type", "name: yaml-bad\nprompt: Stay.\nmax_turns: lots\n", [{ path: "max_turns", line: 3, column: 12, message: expect.stringContaining("number") as unknown as string }]],
			["an unknown key", "name: yaml-bad\nprompt: Stay.\nschedules:\n  nightly:\n    cron: '0 3 * * *'\n    timezon: UTC\n", [{ path: "schedules.nightly.timezon", line: 6, column: 5, message: expect.stringContaining("timezon") as unknown as string }]],
			["a merge key", "base: &b { prompt: Stay. }\nname: yaml-bad\n<<: *b\n", [{ path: "body", line: 3, column: 1, message: expect.stringContaining("merge keys") as unknown as string }]],
			["a key given twice", "name: yaml-bad\nprompt: Stay.\nprompt: Go.\n", [{ path: "body", line: 3, column: 1, message: expect.stringContaining("unique") as unknown as string }]],
		];
		for (const [what, body, issues] of cases) {
			const res = await put("yaml-bad", body, { "if-match": etag });
			expect(res.status, what).toBe(400);
			const error = await errorOf(res);
			expect(error.details?.issues, what).toEqual(issues);
			expect(error.message, what).toMatch(/^invalid body: .*line \d+:\d+: /);
		}
		expect((await definitionOf("yaml-bad")).etag).toBe(etag);
	});

	it("is refused for an If-Match that names no revision, or a body of another type, changing nothing", async () => {
		await createAgent({ name: "yaml-typed", prompt: "Stay." });
		const { text, etag } = await definitionOf("yaml-typed");
		for (const bad of ["3f2a", 'W/"3f2a"', `${etag}, "00"`]) {
			const res = await put("yaml-typed", text.replace("Stay.", "Moved."), { "if-match": bad });
			expect(res.status, bad).toBe(400);
			expect((await errorOf(res)).details?.issues, bad).toEqual([{ path: "If-Match", message: expect.stringContaining("must be one definition_revision in quotes") }]);
		}
		const plain = await put("yaml-typed", text, { "content-type": "text/plain" });
		expect(plain.status).toBe(415);
		expect((await errorOf(plain)).message).toBe('the request body must be JSON or YAML, sent with Content-Type: application/json or application/yaml, not "text/plain"');
		expect((await definitionOf("yaml-typed")).etag).toBe(etag);
		expect(await env.DB.prepare("SELECT definition_revision FROM agents WHERE name = ?").bind("yaml-typed").first("definition_revision")).toBe(etag.slice(1, -1));
	});
});

describe("a dry run of a definition (dry_run=true)", () => {
	it("answers what a create or a change would do, with next runs and warnings, storing nothing", async () => {
		const yaml = "name: dry-new\nprompt: Go.\nwebhook: { secret: DRY_NEW_WEBHOOK_SECRET }\nschedules:\n  nightly: { cron: '0 3 * * *', timezone: Europe/Berlin }\n";
		const res = await call("/v1/agents?dry_run=true", { method: "POST", as: "admin", headers: YAML, body: yaml });
		expect(res.status, await res.clone().text()).toBe(200);
		const planned = (await res.json()) as { action: string; definition: { max_turns: number }; definition_revision: string; previous_revision: string | null; schedules: { name: string; next_run: string }[]; warnings: string[] };
		expect(planned).toMatchObject({ dry_run: true, name: "dry-new", action: "create", previous_revision: null, definition: { max_turns: 20 } });
		expect(planned.schedules).toEqual([expect.objectContaining({ name: "nightly", expression: "0 3 * * *", timezone: "Europe/Berlin" })]);
		// 03:00 in Berlin: 02:00 UTC in winter, 01:00 UTC in summer (so read in Berlin's time), within a day.
		const next = Date.parse(planned.schedules[0]!.next_run);
		expect(new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit", second: "2-digit" }).format(next)).toBe("03:00:00");
		expect(next - Date.now()).toBeLessThanOrEqual(25 * 3_600_000);
		expect(planned.warnings).toEqual(["secret DRY_NEW_WEBHOOK_SECRET (webhook trigger) is not set: POST /v1/hooks/dry-new answers 503"]);
		expect((await call("/v1/agents/dry-new")).status).toBe(404);
		expect(await env.DB.prepare("SELECT name FROM agents WHERE name = 'dry-new'").first()).toBeNull();

		// The revision it said is the one the create gives; then a create is refused as the real one would be.
		const created = (await (await call("/v1/agents", { method: "POST", as: "admin", headers: YAML, body: yaml })).json()) as { definition_revision: string };
		expect(created.definition_revision).toBe(planned.definition_revision);
		const again = await call("/v1/agents?dry_run=true", { method: "POST", as: "admin", headers: YAML, body: yaml });
		expect(again.status).toBe(409);

		const changed = yaml.replace("Go.", "Go now.");
		const plan = async (body: string, headers: Record<string, string> = {}) => call("/v1/agents/dry-new?dry_run=true", { method: "PUT", as: "admin", headers: { ...YAML, ...headers }, body });
		const update = (await (await plan(changed)).json()) as { action: string; previous_revision: string; definition_revision: string };
		expect(update).toMatchObject({ action: "update", previous_revision: created.definition_revision });
		expect(((await (await plan(yaml)).json()) as { action: string }).action).toBe("unchanged");
		expect((await plan(changed, { "if-match": '"0000000000000000"' })).status).toBe(412);
		expect((await plan(changed, { "if-match": `"${created.definition_revision}"` })).status).toBe(200);
		const bad = await plan("name: dry-new\nprompt: Go.\nmax_turns: -1\n");
		expect(bad.status).toBe(400);
		expect((await errorOf(bad)).details?.issues).toEqual([expect.objectContaining({ path: "max_turns", line: 3 })]);
		expect((await call("/v1/agents/dry-none?dry_run=true", { method: "PUT", as: "admin", headers: YAML, body: "name: dry-none\nprompt: Go.\n" })).status).toBe(404);
		expect((await call("/v1/agents?dry_run=maybe", { method: "POST", as: "admin", headers: YAML, body: yaml.replace("dry-new", "dry-other") })).status).toBe(400);
		// Nothing of it was stored: the agent is at its created revision, and the real change gives the revision the plan said.
		expect((await detailOf("dry-new")).definition_revision).toBe(created.definition_revision);
		const saved = (await (await put("dry-new", changed)).json()) as { definition_revision: string };
		expect(saved.definition_revision).toBe(update.definition_revision);
	});

	it("warns that a definition would be paused at once (its delivery secret not set), and of a cron that likely does not mean what it says", async () => {
		const yaml = "name: dry-paused\nprompt: Go.\ndelivery: { type: slack, url_secret: DRY_PAUSED_SLACK_URL }\nschedules:\n  morning: { cron: '* 9 * * *' }\n";
		const res = await call("/v1/agents?dry_run=true", { method: "POST", as: "admin", headers: YAML, body: yaml });
		expect(res.status, await res.clone().text()).toBe(200);
		expect(((await res.json()) as { warnings: string[] }).warnings).toEqual([
			"it would be paused at once, until this is mended: secret DRY_PAUSED_SLACK_URL (delivery) is not set",
			'schedule morning: cron "* 9 * * *" runs every minute of hour 9, 60 runs an hour; for one run at its start write "0 9 …"',
		]);
		// The real create is paused so, as the dry run said.
		const created = await call("/v1/agents", { method: "POST", as: "admin", headers: YAML, body: yaml });
		expect(created.status).toBe(201);
		expect(((await created.json()) as { paused: { reason: string } | null }).paused?.reason).toContain("secret DRY_PAUSED_SLACK_URL (delivery) is not set");
	});

	it("says of an agent an operator paused that the pause stands, where it would otherwise be paused at once", async () => {
		const yaml = "name: dry-held\nprompt: Go.\n";
		expect((await call("/v1/agents", { method: "POST", as: "admin", headers: YAML, body: yaml })).status).toBe(201);
		const broken = `${yaml}delivery: { type: slack, url_secret: DRY_HELD_SLACK_URL }\n`;
		const dry = async () => ((await (await call("/v1/agents/dry-held?dry_run=true", { method: "PUT", as: "admin", headers: YAML, body: broken })).json()) as { warnings: string[] }).warnings;
		expect(await dry()).toEqual(["it would be paused at once, until this is mended: secret DRY_HELD_SLACK_URL (delivery) is not set"]);
		expect((await call("/v1/agents/dry-held/pause", { method: "POST", as: "operate", body: { reason: "maintenance" } })).status).toBe(200);
		expect(await dry()).toEqual(["it is paused (by operator) and stays so; resumed, it would be paused again at once until this is mended: secret DRY_HELD_SLACK_URL (delivery) is not set"]);
		// So the real write does: the operator's pause and its reason stay.
		const saved = await put("dry-held", broken);
		expect(saved.status).toBe(200);
		expect(((await saved.json()) as { paused: { by: string; reason: string } | null }).paused).toMatchObject({ by: "operator", reason: "maintenance" });
	});

	it("refuses a JSON body that writes a key twice in one object, as YAML does, storing nothing", async () => {
		const body = '{"name":"json-twice","prompt":"Go.","schedules":{"daily":{"cron":"0 9 * * *","cron":"0 10 * * *"}}}';
		const res = await call("/v1/agents", { method: "POST", as: "admin", headers: { "content-type": "application/json" }, body });
		expect(res.status).toBe(400);
		const error = await errorOf(res);
		expect(error.message).toBe('invalid body: schedules.daily.cron: key "cron" is written twice in one object (JSON would keep the last without a word); write it once');
		expect(error.details?.issues).toEqual([{ path: "schedules.daily.cron", message: expect.stringContaining("written twice") }]);
		expect(await env.DB.prepare("SELECT name FROM agents WHERE name = 'json-twice'").first()).toBeNull();
		const once = await call("/v1/agents", { method: "POST", as: "admin", headers: { "content-type": "application/json" }, body: body.replace(',"cron":"0 10 * * *"', "") });
		expect(once.status).toBe(201);
	});

	it("says a whole fleet file sent as one agent is one, as YAML or JSON, storing nothing", async () => {
		const fleet = { version: 1, agents: [{ name: "fleet-sent", prompt: "Go." }] };
		const expected = "invalid body: this is a fleet file (its agents under agents:), not one agent's definition: send each agent on its own (an item of its agents list), or run `drover apply <file>`, which does";
		for (const [headers, body] of [[YAML, "version: 1\nagents:\n  - name: fleet-sent\n    prompt: Go.\n"], [{ "content-type": "application/json" }, JSON.stringify(fleet)]] as const) {
			const res = await call("/v1/agents", { method: "POST", as: "admin", headers, body });
			expect(res.status).toBe(400);
			expect((await errorOf(res)).message).toBe(expected);
		}
		expect((await call("/v1/agents/fleet-sent")).status).toBe(404);
	});
});
