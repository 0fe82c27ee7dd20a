import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { incidentId, incidentSignature } from "../../src/incidents/signature.ts";
import { sha256Hex } from "../../src/shared/hash.ts";
import { recordFailure } from "../../src/store/incidents.ts";

// The signature now normalizes whitespace as Hermes' Python does (a byte order mark is kept, NEL and
// U+001C-U+001F collapse). An incident an earlier release opened for an error whose signature that
// changes keeps counting it, rather than a second incident opening (and paging) for the same error.
const jsWindow = (error: string, units: boolean) => {
	const js = error.replace(/\s+/g, " ").trim().toLowerCase();
	return units ? js.slice(0, 200) : Array.from(js).slice(0, 200).join("");
};

async function openedBefore(agent: string, error: string, units: boolean): Promise<string> {
	const at = Date.parse("2026-12-05T10:00:00Z");
	await recordFailure(env.DB, { agent, error, jobId: null, at });
	const old = (await sha256Hex(agent + jsWindow(error, units))).slice(0, 12);
	expect(old).not.toBe(await incidentSignature(agent, error));
	await env.DB.prepare("UPDATE incidents SET id = ?, signature = ? WHERE agent = ?").bind(incidentId(agent, old), old, agent).run();
	return old;
}

const incidents = async (agent: string) =>
	(await env.DB.prepare("SELECT id, signature, count FROM incidents WHERE agent = ?").bind(agent).all<{ id: string; signature: string; count: number }>()).results;

describe("an incident opened before the signature's whitespace was Python's", () => {
	it("keeps counting an error with a byte order mark and a NEL (opened 2026-12-02 to 2026-12-06)", async () => {
		const error = "\ufeffwebhook answered 500:\x85 internal error";
		const old = await openedBefore("bom-agent", error, false);
		const { incident, opened } = await recordFailure(env.DB, { agent: "bom-agent", error, jobId: null, at: Date.parse("2026-12-08T10:00:00Z") });
		expect(opened).toBe(false);
		expect(incident.id).toBe(incidentId("bom-agent", old));
		expect(await incidents("bom-agent")).toEqual([{ id: incidentId("bom-agent", old), signature: old, count: 2 }]);
	});

	it("keeps counting one whose window also held an emoji (opened before 2026-12-02, 200 UTF-16 units)", async () => {
		const error = `\ufeff🔥 ${"refused by upstream validation ".repeat(8)}`;
		const old = await openedBefore("bom-emoji", error, true);
		const { incident, opened } = await recordFailure(env.DB, { agent: "bom-emoji", error, jobId: null, at: Date.parse("2026-12-08T10:00:00Z") });
		expect(opened).toBe(false);
		expect(incident.id).toBe(incidentId("bom-emoji", old));
		expect(await incidents("bom-emoji")).toEqual([{ id: incidentId("bom-emoji", old), signature: old, count: 2 }]);
	});

	it("keeps counting one whose window held an emoji, opened 2026-12-02 to 2026-12-06 (200 code points)", async () => {
		// Its window is neither this release's (the byte order mark kept) nor the one before 12-02's (the
		// emoji two units): a mutation walk dropped this signature from the legacy ones and the suite passed.
		const error = `\ufeff🔥 ${"refused by upstream validation ".repeat(8)}`;
		expect(jsWindow(error, false)).not.toBe(jsWindow(error, true));
		const old = await openedBefore("bom-emoji-cp", error, false);
		const { incident, opened } = await recordFailure(env.DB, { agent: "bom-emoji-cp", error, jobId: null, at: Date.parse("2026-12-08T10:00:00Z") });
		expect(opened).toBe(false);
		expect(incident.id).toBe(incidentId("bom-emoji-cp", old));
		expect(await incidents("bom-emoji-cp")).toEqual([{ id: incidentId("bom-emoji-cp", old), signature: old, count: 2 }]);
	});

	it("opens a new incident under the new signature when none was opened before", async () => {
		const error = "\ufeffwebhook answered 502:\x85 bad gateway";
		const { incident, opened } = await recordFailure(env.DB, { agent: "bom-new", error, jobId: null, at: Date.parse("2026-12-08T10:00:00Z") });
		expect(opened).toBe(true);
		expect(incident.id).toBe(incidentId("bom-new", await incidentSignature("bom-new", error)));
	});

	it("does not count an error with a byte order mark on the incident this release opened for the same text without one", async () => {
		// Hermes hashes the two apart (Python keeps U+FEFF): an incident opened for the plain error is
		// not one an earlier release opened for the marked one, and the marked one pages its own.
		const plain = 'webhook answered 500: {"error":"upstream"}';
		const marked = 'webhook answered 500: \ufeff{"error":"upstream"}';
		const first = await recordFailure(env.DB, { agent: "bom-apart", error: plain, jobId: null, at: Date.parse("2026-12-08T10:00:00Z") });
		expect(first.incident.id).toBe(incidentId("bom-apart", await incidentSignature("bom-apart", plain)));
		const second = await recordFailure(env.DB, { agent: "bom-apart", error: marked, jobId: null, at: Date.parse("2026-12-08T10:01:00Z") });
		expect(second.opened).toBe(true);
		expect(second.incident.id).toBe(incidentId("bom-apart", await incidentSignature("bom-apart", marked)));
		expect((await incidents("bom-apart")).map((i) => i.count)).toEqual([1, 1]);
	});
});
