import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { tick } from "../helpers/ticks.ts";
import { recordFailure, resolveOpen } from "../../src/store/incidents.ts";

const DAY = 86_400_000;
/** A minute-0 tick, far ahead of the real clock: a fleet.yaml run its ticks claim (site-watch's quarter hour) has a start alarm that fires only when run here. */
const HOUR = Date.parse("2037-12-03T15:00:00Z");

afterEach(() => {
	vi.restoreAllMocks();
	vi.useRealTimers();
});

interface Listed {
	id: string;
	agent: string;
	state: string;
}

async function listed(query = ""): Promise<Listed[]> {
	const res = await call(`/v1/incidents?limit=200${query}`);
	expect(res.status).toBe(200);
	return ((await res.json()) as { incidents: Listed[] }).incidents;
}

/** The tick of `at`'s minute, run a few seconds into it as the cron's are; the `incidents.pruned` lines it logged. */
async function tickAt(at: number): Promise<Record<string, unknown>[]> {
	vi.setSystemTime(at + 5_000);
	const lines: string[] = [];
	vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
	await tick(at);
	vi.restoreAllMocks();
	return lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === "incidents.pruned");
}

async function fails(agent: string, at: number): Promise<string> {
	return (await recordFailure(env.DB, { agent, error: `${agent}: upstream said no`, jobId: null, at })).incident.id;
}

async function close(id: string, at: number): Promise<void> {
	vi.setSystemTime(at);
	expect((await call(`/v1/incidents/${id}/close`, { method: "POST", as: "operate" })).status).toBe(200);
}

async function deleteAgent(agent: string, at: number): Promise<void> {
	vi.setSystemTime(at);
	expect((await call(`/v1/agents/${agent}`, { method: "DELETE", as: "admin" })).status).toBe(200);
}

describe("incidents past RETENTION_DAYS", () => {
	it("resolved ones go at the hour's tick once neither their last failure nor their resolution is within it; open, closed and recent ones stay", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: HOUR - 60 * DAY });
		// The deployment's (wrangler.toml), which the tick reads.
		expect(env.RETENTION_DAYS).toBe("30");
		await createAgent({ name: "retired-long" });
		await createAgent({ name: "retired-lately" });

		const old = await fails("resolved-old", HOUR - 40 * DAY);
		await resolveOpen(env.DB, "resolved-old", HOUR - 39 * DAY);
		const recent = await fails("resolved-recent", HOUR - 10 * DAY);
		await resolveOpen(env.DB, "resolved-recent", HOUR - 9 * DAY);
		// Failing still, unseen for 40 days (its agent paused, say): open, so kept.
		const open = await fails("open-old", HOUR - 40 * DAY);
		// Closed is terminal for its signature: gone, the same error would page again.
		const closed = await fails("closed-old", HOUR - 40 * DAY);
		await close(closed, HOUR - 40 * DAY);
		// A deleted agent's incidents resolve at its deletion and age from it, as its history does.
		const retiredLong = await fails("retired-long", HOUR - 40 * DAY);
		await close(retiredLong, HOUR - 40 * DAY);
		await deleteAgent("retired-long", HOUR - 31 * DAY);
		const retiredLately = await fails("retired-lately", HOUR - 40 * DAY);
		await deleteAgent("retired-lately", HOUR - 2 * DAY);
		const all = [old, recent, open, closed, retiredLong, retiredLately].sort();
		expect((await listed()).map((i) => i.id).sort()).toEqual(all);
		expect((await listed("&state=resolved")).map((i) => i.id).sort()).toEqual([old, recent, retiredLong, retiredLately].sort());

		// A tick of any other minute asks nothing of them.
		expect(await tickAt(HOUR - 60_000)).toEqual([]);
		expect((await listed()).map((i) => i.id).sort()).toEqual(all);

		const pruned = await tickAt(HOUR);
		expect((await listed()).map((i) => [i.id, i.state]).sort()).toEqual(
			[
				[recent, "resolved"],
				// Paged at the first tick (the standing alert fake answers), still open.
				[open, "alerted"],
				[closed, "closed"],
				[retiredLately, "resolved"],
			].sort(),
		);
		expect(pruned).toEqual([expect.objectContaining({ level: "info", count: 2, minute: new Date(HOUR).toISOString(), cutoff: new Date(HOUR + 5_000 - 30 * DAY).toISOString() })]);

		// The closed one stays closed: its error again is counted, not paged.
		const again = await recordFailure(env.DB, { agent: "closed-old", error: "closed-old: upstream said no", jobId: null, at: HOUR + 10_000 });
		expect(again).toMatchObject({ opened: false, alertDue: false, incident: { id: closed, state: "closed", count: 2 } });

		// Nothing more is due: the next hour's tick deletes nothing and says nothing.
		expect(await tickAt(HOUR + 3_600_000)).toEqual([]);
		expect(await listed()).toHaveLength(4);
	});

	it("go 500 a batch, up to 10 batches an hour's tick while a batch comes back full, those unseen longest first, so a backlog of more is worked off over the hours", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: HOUR });
		// 5,002 resolved ones, last seen a minute apart from 100 days back.
		await env.DB.prepare(
			`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 5001)
			 INSERT INTO incidents (id, agent, signature, class, state, error, count, first_seen_at, last_seen_at, resolved_at)
			 SELECT printf('backlo_%012x', i), 'backlog', printf('%012x', i), 'unknown', 'resolved', 'boom', 1, ?1 + i * 60000, ?1 + i * 60000, ?1 + i * 60000 + 1 FROM n`,
		)
			.bind(HOUR - 100 * DAY)
			.run();

		expect(await tickAt(HOUR)).toEqual([expect.objectContaining({ count: 5000, batches: 10 })]);
		// The two last seen remain.
		expect((await listed("&agent=backlog")).map((i) => i.id)).toEqual(["backlo_000000001389", "backlo_000000001388"]);

		expect(await tickAt(HOUR + 3_600_000)).toEqual([expect.objectContaining({ count: 2, batches: 1 })]);
		expect(await listed("&agent=backlog")).toEqual([]);
	});
});
