import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { call, errorOf } from "../helpers/http.ts";

const path = (agent: string, key: string) => `/v1/agents/${agent}/notepad/${encodeURIComponent(key)}`;
const put = (agent: string, key: string, value: string, headers: Record<string, string> = {}) => call(path(agent, key), { method: "PUT", as: "operate", body: { value }, headers });
const remove = (agent: string, key: string, headers: Record<string, string> = {}) => call(path(agent, key), { method: "DELETE", as: "operate", headers });
const notes = async (agent: string) => (await (await call(`/v1/agents/${agent}/notepad`)).json()) as Record<string, string>;

/** A value's version as the README documents it, computed here independently: its SHA-256 in base64url, quoted. */
async function versionOf(value: string): Promise<string> {
	const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value)));
	return `"${btoa(String.fromCharCode(...digest)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}"`;
}

describe("a notepad key's version", () => {
	it("is its ETag; a write made on it succeeds and gives the next one, a write made on an older one is a 412 changing nothing", async () => {
		await createAgent({ name: "noted-versions" });
		expect((await put("noted-versions", "cursor", "page 7")).status).toBe(200);
		const read = await call(path("noted-versions", "cursor"));
		const v7 = read.headers.get("etag");
		expect(v7).toBe(await versionOf("page 7"));
		expect(await read.json()).toEqual({ key: "cursor", value: "page 7" });
		expect((await call(path("noted-versions", "cursor"), { headers: { "if-none-match": v7! } })).status).toBe(304);

		const saved = await put("noted-versions", "cursor", "page 8", { "if-match": v7! });
		expect(saved.status, await saved.clone().text()).toBe(200);
		expect(saved.headers.get("etag")).toBe(await versionOf("page 8"));
		expect(await saved.json()).toEqual({ cursor: "page 8" });

		// Another operator's edit, made on page 7, would lose page 8 without the condition.
		const stale = await put("noted-versions", "cursor", "page 9", { "if-match": v7! });
		expect(stale.status).toBe(412);
		expect(await errorOf(stale)).toEqual({
			code: "precondition_failed",
			message: `notepad key "cursor" was changed since it was read: it is at version ${await versionOf("page 8")}, not ${v7}; nothing was changed`,
		});
		expect(await notes("noted-versions")).toEqual({ cursor: "page 8" });
		// The old version no longer revalidates.
		expect((await call(path("noted-versions", "cursor"), { headers: { "if-none-match": v7! } })).status).toBe(200);
	});

	it("lets one of two writes made on the same version through, and refuses the other", async () => {
		await createAgent({ name: "noted-race" });
		await put("noted-race", "owner", "nobody");
		const version = await versionOf("nobody");
		const [a, b] = await Promise.all([put("noted-race", "owner", "alice", { "if-match": version }), put("noted-race", "owner", "bob", { "if-match": version })]);
		expect([a.status, b.status].sort()).toEqual([200, 412]);
		const winner = a.status === 200 ? "alice" : "bob";
		expect(await notes("noted-race")).toEqual({ owner: winner });
		expect((await errorOf(a.status === 412 ? a : b)).message).toContain(`it is at version ${await versionOf(winner)}`);
	});

	it("creates a key only while it is unset with If-None-Match: *, and If-Match needs a value to match", async () => {
		await createAgent({ name: "noted-create" });
		expect((await put("noted-create", "todo", "first", { "if-match": "*" })).status).toBe(412);
		expect((await put("noted-create", "todo", "first", { "if-match": await versionOf("first") })).status).toBe(412);
		expect(await notes("noted-create")).toEqual({});

		expect((await put("noted-create", "todo", "first", { "if-none-match": "*" })).status).toBe(200);
		const again = await put("noted-create", "todo", "second", { "if-none-match": "*" });
		expect(again.status).toBe(412);
		expect((await errorOf(again)).message).toBe('notepad key "todo" is already set (If-None-Match: *); read it and write on its version, or leave the condition out to replace it');
		expect((await put("noted-create", "todo", "third", { "if-match": "*" })).status).toBe(200);
		expect(await notes("noted-create")).toEqual({ todo: "third" });
		// A key typed decomposed names the precomposed one: the condition is checked against it.
		expect((await put("noted-create", "cafe\u0301", "x", { "if-none-match": "*" })).status).toBe(200);
		expect((await put("noted-create", "caf\u00e9", "y", { "if-none-match": "*" })).status).toBe(412);
		expect((await put("noted-create", "caf\u00e9", "y", { "if-match": await versionOf("x") })).status).toBe(200);
		expect(await notes("noted-create")).toEqual({ "caf\u00e9": "y", todo: "third" });
	});

	it("is the version of the value as stored: a redacted write's ETag names the redacted value", async () => {
		await createAgent({ name: "noted-redacted" });
		const sent = "use sk-ant-api03-abcdefghijklmnopqrstuv";
		const saved = await put("noted-redacted", "key", sent);
		const stored = (await notes("noted-redacted")).key!;
		expect(stored).not.toBe(sent);
		expect(saved.headers.get("etag")).toBe(await versionOf(stored));
		expect((await put("noted-redacted", "key", "rotated", { "if-match": await versionOf(sent) })).status).toBe(412);
		expect((await put("noted-redacted", "key", "rotated", { "if-match": saved.headers.get("etag")! })).status).toBe(200);
	});

	it("conditions a delete: an older version is a 412 keeping the key, the current one deletes it, a key not set is a 404", async () => {
		await createAgent({ name: "noted-delete" });
		await put("noted-delete", "lock", "held by job 1");
		await put("noted-delete", "lock", "held by job 2");
		const refused = await remove("noted-delete", "lock", { "if-match": await versionOf("held by job 1") });
		expect(refused.status).toBe(412);
		expect((await errorOf(refused)).code).toBe("precondition_failed");
		expect(await notes("noted-delete")).toEqual({ lock: "held by job 2" });
		const deleted = await remove("noted-delete", "lock", { "if-match": await versionOf("held by job 2") });
		expect(deleted.status).toBe(200);
		expect(await deleted.json()).toEqual({ deleted: 1 });
		expect(await notes("noted-delete")).toEqual({});
		expect((await remove("noted-delete", "lock", { "if-match": await versionOf("held by job 2") })).status).toBe(404);
	});

	it("refuses a condition that names no one version with a 400, changing nothing", async () => {
		await createAgent({ name: "noted-bad-condition" });
		await put("noted-bad-condition", "k", "v");
		const version = await versionOf("v");
		const badIfMatch = [`W/${version}`, `${version}, ${version}`, version.slice(1, -1), '"abc"'];
		for (const bad of badIfMatch) {
			for (const res of [await put("noted-bad-condition", "k", "changed", { "if-match": bad }), await remove("noted-bad-condition", "k", { "if-match": bad })]) {
				expect(res.status, `${res.url} ${bad}`).toBe(400);
				expect((await errorOf(res)).details?.issues, bad).toEqual([{ path: "If-Match", message: expect.stringMatching(/^must be one version in quotes, as the key's ETag gives it/) }]);
			}
		}
		for (const bad of [version, '"x"', "*, *"]) {
			const res = await put("noted-bad-condition", "k", "changed", { "if-none-match": bad });
			expect(res.status, `${res.url} ${bad}`).toBe(400);
			expect((await errorOf(res)).details?.issues, bad).toEqual([{ path: "If-None-Match", message: expect.stringMatching(/^must be \*: a write made only if the key is not set/) }]);
		}
		expect(await notes("noted-bad-condition")).toEqual({ k: "v" });
	});

	it("refuses a condition a write does not read with a 400, where the write was made unconditionally: a key's delete under If-None-Match, the whole notepad's under either", async () => {
		await createAgent({ name: "noted-unread-condition" });
		await put("noted-unread-condition", "k", "v");
		await put("noted-unread-condition", "other", "w");
		const version = await versionOf("v");
		const keyDelete = await remove("noted-unread-condition", "k", { "if-none-match": "*" });
		expect(keyDelete.status).toBe(400);
		expect(await errorOf(keyDelete)).toEqual({
			code: "bad_request",
			message: "invalid header: DELETE /v1/agents/:agent/notepad/:key takes only If-Match: If-None-Match would not be checked; send it without",
			details: { issues: [{ path: "If-None-Match", message: "not taken by this route" }] },
		});
		const conditions: Record<string, string>[] = [{ "if-match": `"${"A".repeat(43)}"` }, { "if-none-match": "*" }, { "if-unmodified-since": "Sat, 01 Jan 2000 00:00:00 GMT" }];
		for (const condition of conditions) {
			const clear = await call("/v1/agents/noted-unread-condition/notepad", { method: "DELETE", as: "operate", headers: condition });
			expect(clear.status, JSON.stringify(condition)).toBe(400);
			expect((await errorOf(clear)).message).toMatch(/^invalid header: DELETE \/v1\/agents\/:agent\/notepad takes no condition: If-(Match|None-Match|Unmodified-Since) would not be checked; send it without$/);
		}
		expect(await notes("noted-unread-condition")).toEqual({ k: "v", other: "w" });
		// A write that reads none refuses one too (an agent's pause), and a read ignores it.
		const pause = await call("/v1/agents/noted-unread-condition/pause", { method: "POST", as: "operate", headers: { "if-match": version } });
		expect(pause.status).toBe(400);
		expect((await (await call("/v1/agents/noted-unread-condition")).json()) as { paused: unknown }).toMatchObject({ paused: null });
		expect((await call(path("noted-unread-condition", "k"), { headers: { "if-match": version } })).status).toBe(200);
		// The conditions a write reads still work.
		expect((await remove("noted-unread-condition", "k", { "if-match": version })).status).toBe(200);
	});
});
