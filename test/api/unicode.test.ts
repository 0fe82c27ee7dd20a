import { describe, expect, it } from "vitest";
import { signWebhook } from "../../src/api/webhook-signature.ts";
import { createAgent, runsOf, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { trigger } from "../helpers/jobs.ts";
import { WEBHOOK_SECRET } from "../helpers/tokens.ts";

// Raw JSON text: the escapes are what a client sends, not characters this file holds.
const LONE = String.raw`\ud800`;
const PAIR = String.raw`\ud83d\ude00`;

describe("a lone UTF-16 surrogate in a body", () => {
	it("is a 400 naming the field, on every route with a body, and changes nothing (no storage keeps one)", async () => {
		await createAgent({ name: "surrogates" });
		const trigger = await call("/v1/agents/surrogates/jobs", { method: "POST", as: "operate", body: `{"prompt":"Check a${LONE}b."}` });
		expect(trigger.status).toBe(400);
		expect(await errorOf(trigger)).toMatchObject({ details: { issues: [{ path: "prompt", message: expect.stringContaining("unpaired UTF-16 surrogate") }] } });
		const note = await call("/v1/agents/surrogates/notepad/k", { method: "PUT", as: "operate", body: `{"value":"x${LONE}"}` });
		expect(note.status).toBe(400);
		const pause = await call("/v1/agents/surrogates/pause", { method: "POST", as: "operate", body: `{"reason":"${LONE}"}` });
		expect(pause.status).toBe(400);
		expect(await runsOf("surrogates")).toEqual([]);
		expect(await (await call("/v1/agents/surrogates/notepad")).json()).toEqual({});
		expect(((await (await call("/v1/agents/surrogates")).json()) as { paused: unknown }).paused).toBeNull();
	});

	it("is no problem as a pair: an emoji sent as escapes is taken as the emoji", async () => {
		await createAgent({ name: "surrogate-pair" });
		const res = await call("/v1/agents/surrogate-pair/notepad/mood", { method: "PUT", as: "operate", body: `{"value":"${PAIR}"}` });
		expect(res.status).toBe(200);
		expect(await res.json()).toEqual({ mood: "😀" });
	});
});

/** JSON text around bytes that are no UTF-8: `X` in `json` marks where they go. */
function withBytes(json: string, bad: readonly number[]): Uint8Array {
	const [before, after] = json.split("X") as [string, string];
	const enc = new TextEncoder();
	return new Uint8Array([...enc.encode(before), ...bad, ...enc.encode(after)]);
}

// 0xC3 opens a two-byte sequence that "(" does not continue; 0xFF opens none; 0xED 0xA0 0x80 would be
// a UTF-16 surrogate; 0xE2 0x82 is a sequence cut short.
const NOT_UTF8: readonly (readonly number[])[] = [[0xc3, 0x28], [0xff], [0xed, 0xa0, 0x80], [0xe2, 0x82]];

/** A body each route would take, but for the bytes at X; any other route gets `{"reason": …}`. */
const BODIES: Record<string, string> = {
	"POST /v1/agents": `{"name":"utf8-new","prompt":"Do X."}`,
	"PUT /v1/agents/{agent}": `{"name":"utf8-target","prompt":"Do X."}`,
	"POST /v1/agents/{agent}/jobs": `{"prompt":"Check X."}`,
	"PUT /v1/agents/{agent}/notepad/{key}": `{"value":"caf X"}`,
	"POST /v1/jobs/{id}/approval": `{"decision":"approve","tool_use_id":"toolu_utf8","tool_input":{"title":"X"}}`,
	"POST /v1/jobs/{id}/continue": `{"prompt":"X"}`,
	"POST /v1/jobs/{id}/fork": `{"prompt":"X"}`,
};

describe("a body that is not valid UTF-8", () => {
	/** What a refused request must leave as it was. */
	async function snapshot(jobId: string): Promise<unknown> {
		const read = async (path: string) => {
			const res = await call(path);
			expect(res.status, path).toBe(200);
			return res.json();
		};
		const agent = (await read("/v1/agents/utf8-target")) as Record<string, unknown>;
		const job = (await read(`/v1/jobs/${jobId}`)) as Record<string, unknown>;
		return {
			agent,
			job: { status: job.status, revision: job.revision },
			notepad: await read("/v1/agents/utf8-target/notepad"),
			agents: ((await read("/v1/agents?limit=200")) as { agents: { name: string }[] }).agents.map((a) => a.name),
			jobs: ((await read("/v1/jobs?agent=utf8-target")) as { jobs: unknown[] }).jobs.length,
			runs: (await runsOf("utf8-target")).length,
		};
	}

	it("is a 400 saying so, on every route that reads a body, and changes nothing (it was never turned into U+FFFD)", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "t" }, id: "toolu_utf8" } });
		await createAgent({
			name: "utf8-target",
			tools: [{ type: "webhook", name: "create_ticket", description: "Create a ticket.", url_secret: "TEST_TICKETS_URL", requires_approval: true }],
		});
		await call("/v1/agents/utf8-target/notepad/kept", { method: "PUT", as: "operate", body: { value: "unchanged" } });
		const waiting = await trigger("utf8-target");
		await settle("utf8-target");
		const before = await snapshot(waiting.id);
		expect(before).toMatchObject({ job: { status: "approval_pending" }, notepad: { kept: "unchanged" } });

		const doc = (await (await call("/openapi.json", { as: null })).json()) as { paths: Record<string, Record<string, unknown>> };
		const ops = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
		// Webhooks are signed: they have their own test below.
		const writes = ops.filter((op) => !op.startsWith("GET ") && !op.includes("/v1/hooks/"));
		expect(writes.length).toBeGreaterThan(10);
		for (const op of writes) {
			const [method, template] = op.split(" ") as [string, string];
			const path = template
				.replace("{agent}", "utf8-target")
				.replace("{key}", "kept")
				.replace("{id}", template.startsWith("/v1/jobs/") ? waiting.id : "inc-0000");
			for (const bad of NOT_UTF8) {
				const res = await call(path, { method, as: "admin", body: withBytes(BODIES[op] ?? `{"reason":"X"}`, bad) });
				const label = `${op} with ${bad.map((b) => b.toString(16)).join(" ")}`;
				expect(res.status, label).toBe(400);
				const error = await errorOf(res);
				expect(error.code, label).toBe("bad_request");
				expect(error.message, label).toMatch(/^the request body is not valid UTF-8: bytes? [0-9a-f ]+ at offset \d+ /);
				expect(error.details?.issues, label).toEqual([{ path: "body", message: expect.stringContaining("not valid UTF-8") }]);
			}
		}
		expect(await snapshot(waiting.id)).toEqual(before);
		expect((await call("/v1/agents/utf8-new")).status).toBe(404);
	});

	it("names the offset of the first bad byte, and takes the same body written in UTF-8", async () => {
		await createAgent({ name: "utf8-note" });
		// "café" in Latin-1: é is E9, a byte that opens a three-byte UTF-8 sequence the closing quote does not continue.
		const bad = await call("/v1/agents/utf8-note/notepad/dish", { method: "PUT", as: "operate", body: withBytes(`{"value":"cafX"}`, [0xe9]) });
		expect(bad.status).toBe(400);
		expect((await errorOf(bad)).message).toBe("the request body is not valid UTF-8: bytes e9 22 at offset 13 are no UTF-8 character; send the body as UTF-8 text");
		const lone = await call("/v1/agents/utf8-note/notepad/dish", { method: "PUT", as: "operate", body: withBytes(`{"value":"X"}`, [0xff]) });
		expect((await errorOf(lone)).message).toBe("the request body is not valid UTF-8: byte ff at offset 10 is no UTF-8 character; send the body as UTF-8 text");
		const cut = await call("/v1/agents/utf8-note/notepad/dish", { method: "PUT", as: "operate", body: withBytes(`{"value":"x"}X`, [0xf0, 0x9f]) });
		expect((await errorOf(cut)).message).toBe("the request body is not valid UTF-8: bytes f0 9f at offset 13 end the body inside a UTF-8 character; send the body as UTF-8 text");
		expect(await (await call("/v1/agents/utf8-note/notepad")).json()).toEqual({});
		// The same text in UTF-8 (é is C3 A9) is taken.
		const good = await call("/v1/agents/utf8-note/notepad/dish", { method: "PUT", as: "operate", body: withBytes(`{"value":"cafX"}`, [0xc3, 0xa9]) });
		expect(good.status).toBe(200);
		expect(await good.json()).toEqual({ dish: "café" });
	});

	it("is a 415 when declared in another charset, even where its bytes happen to be UTF-8, and changes nothing", async () => {
		await createAgent({ name: "utf8-declared" });
		// "cafÃ©" in Latin-1 is the bytes of "café" in UTF-8: read as UTF-8, it would be stored as text the client never sent.
		const latin = withBytes(`{"value":"cafX"}`, [0xc3, 0xa9]);
		const declared = await call("/v1/agents/utf8-declared/notepad/dish", { method: "PUT", as: "operate", body: latin, headers: { "content-type": "application/json; charset=ISO-8859-1" } });
		expect(declared.status).toBe(415);
		expect(await errorOf(declared)).toEqual({ code: "unsupported_media_type", message: 'the request body must be UTF-8: charset "ISO-8859-1" is not taken (send charset=utf-8, or none)' });
		const twice = await call("/v1/agents/utf8-declared/jobs", { method: "POST", as: "operate", body: `{"prompt":"x"}`, headers: { "content-type": "application/json; charset=utf-8; charset=latin1" } });
		expect(twice.status).toBe(415);
		expect(await (await call("/v1/agents/utf8-declared/notepad")).json()).toEqual({});
		expect(await runsOf("utf8-declared")).toEqual([]);
		// UTF-8 by any of its names is read.
		const named = await call("/v1/agents/utf8-declared/notepad/dish", { method: "PUT", as: "operate", body: latin, headers: { "content-type": 'application/json; charset="utf8"' } });
		expect(await named.json()).toEqual({ dish: "café" });
	});
});

describe("a webhook body that is not valid UTF-8", () => {
	const post = async (body: Uint8Array, secret = WEBHOOK_SECRET) => {
		const timestamp = Math.floor(Date.now() / 1000);
		return call("/v1/hooks/utf8-hook", {
			method: "POST",
			as: null,
			body,
			headers: { "x-drover-timestamp": String(timestamp), "x-drover-signature": await signWebhook(secret, timestamp, body) },
		});
	};

	it("is a 400 once its signature over the bytes sent checks out (a 401 before), and creates no job", async () => {
		await createAgent({ name: "utf8-hook", max_concurrent: 10, prompt: "Triage this.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
		const body = withBytes(`{"title":"Login fails X"}`, [0xc3, 0x28]);
		const forged = await post(body, "not-the-secret-at-all");
		expect(forged.status).toBe(401);
		const signed = await post(body);
		expect(signed.status).toBe(400);
		const error = await errorOf(signed);
		expect(error.code).toBe("bad_request");
		expect(error.message).toBe("the request body is not valid UTF-8: bytes c3 28 at offset 22 are no UTF-8 character; send the body as UTF-8 text");
		expect(await runsOf("utf8-hook")).toEqual([]);
	});

	it("is verified over the bytes sent: a body with a UTF-8 byte order mark, signed with it, is taken", async () => {
		await createAgent({ name: "utf8-hook-bom", max_concurrent: 10, prompt: "Triage this.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
		const body = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(`{"title":"Login fails"}`)]);
		const timestamp = Math.floor(Date.now() / 1000);
		const res = await call("/v1/hooks/utf8-hook-bom", {
			method: "POST",
			as: null,
			body,
			headers: { "x-drover-timestamp": String(timestamp), "x-drover-signature": await signWebhook(WEBHOOK_SECRET, timestamp, body) },
		});
		expect(res.status, await res.clone().text()).toBe(202);
		expect(((await res.json()) as { prompt: string }).prompt).toContain('"title": "Login fails"');
	});
});

describe("malformed percent-encoding in a path", () => {
	const SAYS = /^the path segment "[^"]+" has malformed percent-encoding: /;

	async function refused(method: string, path: string, as: "read" | "operate" | null = "operate", body?: unknown) {
		const res = await call(path, { method, as, body });
		expect(res.status, `${method} ${path}`).toBe(400);
		const error = await errorOf(res);
		expect(error.code).toBe("bad_request");
		expect(error.message, `${method} ${path}`).toMatch(SAYS);
		expect(error.details?.issues, `${method} ${path}`).toEqual([{ path: "path", message: expect.stringContaining("malformed percent-encoding") }]);
		return error;
	}

	it("is a 400 saying which segment, for a notepad key, and is never taken as the literal text", async () => {
		await createAgent({ name: "escapes" });
		// A literal percent sign, spelled as one: the key is "%ZZ".
		const literal = await call("/v1/agents/escapes/notepad/%25ZZ", { method: "PUT", as: "operate", body: { value: "kept" } });
		expect(literal.status).toBe(200);
		expect(await literal.json()).toEqual({ "%ZZ": "kept" });

		const error = await refused("PUT", "/v1/agents/escapes/notepad/%ZZ", "operate", { value: "overwritten" });
		expect(error.message).toBe('the path segment "%ZZ" has malformed percent-encoding: each % must begin an escape of two hex digits (%XX), and the escapes must spell UTF-8; send a % itself as %25');
		// Escapes of bytes that are no UTF-8: E0 A4 is a character cut short, FF starts none.
		await refused("PUT", "/v1/agents/escapes/notepad/%E0%A4", "operate", { value: "x" });
		await refused("PUT", "/v1/agents/escapes/notepad/a%FFb", "operate", { value: "x" });
		await refused("PUT", "/v1/agents/escapes/notepad/50%", "operate", { value: "x" });
		await refused("GET", "/v1/agents/escapes/notepad/%ZZ", "read");
		await refused("DELETE", "/v1/agents/escapes/notepad/%ZZ");
		expect(await (await call("/v1/agents/escapes/notepad")).json()).toEqual({ "%ZZ": "kept" });
	});

	it("is a 400 in an agent name or a job id too, on every kind of route, rather than a complaint about the name", async () => {
		await createAgent({ name: "escapes-too" });
		await refused("GET", "/v1/agents/%ZZ", "read");
		await refused("GET", "/v1/agents/escapes-too%E0%A4/runs", "read");
		await refused("POST", "/v1/agents/%E0%A4/jobs", "operate", { prompt: "Go." });
		await refused("GET", "/v1/jobs/job-2026-11-30-%ZZ", "read");
		await refused("POST", "/v1/jobs/job-2026-11-30-ab%E0%A4/cancel", "operate", {});
		// A webhook's sender has no token: the path is refused before anything else is looked at.
		await refused("POST", "/v1/hooks/%ZZ", null, { n: 1 });
		expect(await runsOf("escapes-too")).toEqual([]);
	});
});

describe("a dashboard address", () => {
	it("for an agent, as a person types it, leads to its page (its runs), the name kept as sent; /agents to the fleet", async () => {
		for (const [path, to] of [
			["/agents/site-watch", "/agents/site-watch/runs"],
			["/agents/%E2%80%AEgnp.exe", "/agents/%E2%80%AEgnp.exe/runs"],
			["/agents", "/"],
		] as const) {
			const res = await call(path, { as: null, headers: { accept: "text/html" } });
			expect(res.status, path).toBe(302);
			expect(res.headers.get("location"), path).toBe(to);
		}
	});

	it("shows a bidi control from the link escaped in the page's title and heading, never raw (a crafted link would read reversed), and asks the API of the name as sent", async () => {
		const res = await call("/agents/%E2%80%AEgnp.exe/runs", { as: null, headers: { accept: "text/html" } });
		const html = await res.text();
		expect(html).toContain("<title>Runs · \\u202egnp.exe · drover</title>");
		expect(html).toContain("Runs · <span>\\u202egnp.exe</span>");
		// What the page's script reads and asks the API of: the name itself, so the API's 400 names
		// U+202E, not a backslash. An attribute's value is never laid out as text.
		expect(html).toContain('data-subject="\u202egnp.exe"');
		expect(html).toContain('href="/agents/%E2%80%AEgnp.exe/logs"');
		expect(html.replace('data-subject="\u202egnp.exe"', "")).not.toContain("\u202e");
	});
});
