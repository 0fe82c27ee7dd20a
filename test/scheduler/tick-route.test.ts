import { afterEach, describe, expect, it, vi } from "vitest";
import { createAgent, runsOf, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";

afterEach(() => vi.useRealTimers());

// A fixed quarter hour well in the past, not the real clock's: what the tick finds due must not
// depend on when the file runs. Seven minutes past it no fleet.yaml slot falls (digests at :00,
// site-watch every 15m).
const QUARTER = Date.parse("2025-03-04T10:00:00Z");
const at = (minutes: number, seconds = 0) => QUARTER + minutes * 60_000 + seconds * 1000;

describe("POST /v1/tick", () => {
	it("runs one scheduler tick now, as the cron trigger would: due slots claimed once, the heartbeat updated; admin only", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: at(7, 10) });
		await createAgent({ name: "ticked-by-hand", schedules: { every: { interval: "1m" } } });
		useEmulator().enqueue({ text: "Ticked." });
		vi.setSystemTime(at(9, 20));

		for (const as of ["read", "operate"] as const) {
			const refused = await call("/v1/tick", { method: "POST", as });
			expect(refused.status).toBe(403);
			expect((await errorOf(refused)).code).toBe("forbidden");
		}
		expect(await runsOf("ticked-by-hand")).toEqual([]);

		const res = await call("/v1/tick", { method: "POST", as: "admin" });
		expect(res.status).toBe(200);
		const summary = (await res.json()) as { scheduled_time: string; outcome: string; claimed: number; skipped: number; shards_failed: number; agents_called: number };
		expect(summary).toMatchObject({ scheduled_time: new Date(at(9)).toISOString(), outcome: "ok", shards_failed: 0 });
		expect(summary.claimed).toBeGreaterThanOrEqual(1);
		// The agent's slot of this minute (the one after its definition before it: at(8)) is run or settled, each once.
		const runs = await runsOf("ticked-by-hand");
		expect(runs.filter((r) => r.status !== "skipped")).toMatchObject([{ source: "cron", scheduled_instant: new Date(at(9)).toISOString() }]);
		await settle("ticked-by-hand");

		const status = (await (await call("/v1/status")).json()) as { scheduler: { last_tick_at: string; outcome: string; claimed: number } };
		expect(status.scheduler).toMatchObject({ last_tick_at: new Date(at(9, 20)).toISOString(), outcome: "ok" });

		// The cron's own tick of the same minute, or a second one by hand, claims nothing more.
		const again = (await (await call("/v1/tick", { method: "POST", as: "admin" })).json()) as { claimed: number };
		expect(again.claimed).toBe(0);
		expect((await runsOf("ticked-by-hand")).filter((r) => r.status !== "skipped")).toHaveLength(1);
	});

	it("logs its tick.done as asked for by hand, by whom, without a cron tick's late_ms", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: at(7, 40) });
		const lines: Record<string, unknown>[] = [];
		for (const method of ["log", "warn", "error"] as const) vi.spyOn(console, method).mockImplementation((line: unknown) => void lines.push(JSON.parse(String(line)) as Record<string, unknown>));
		try {
			expect((await call("/v1/tick", { method: "POST", as: "admin" })).status).toBe(200);
		} finally {
			vi.restoreAllMocks();
		}
		const done = lines.filter((l) => l.event === "tick.done");
		expect(done).toEqual([expect.objectContaining({ minute: new Date(at(7)).toISOString(), trigger: "api", by: "root" })]);
		// 40 s past its minute, but asked for now: it ran late for no cron.
		expect(done[0]).not.toHaveProperty("late_ms");
	});
});
