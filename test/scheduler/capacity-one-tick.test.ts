import { afterEach, describe, expect, it } from "vitest";
import { createAgent, runsOf, settle, settleClaimedRuns } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { ticketTool } from "../helpers/tools.ts";
import { dayFromToday, minuteOn, tick } from "../helpers/ticks.ts";

// Yesterday's minutes, not a literal day's: the days a shard deals job ids for, and the ledger's
// retention (a skip row goes 30 days after its claim), are counted from the real clock.
const day = dayFromToday(-1);
const at = (hhmm: string) => minuteOn(day, hhmm);
const iso = (hhmm: string) => new Date(at(hhmm)).toISOString();

// herdctl's max_concurrent had no effect on schedules: here several schedules due in one tick share it.
// The runs this file's ticks claimed (for every agent then due) run in the test that claimed them,
// not by their start alarms during a later one (see settleClaimedRuns).
afterEach(settleClaimedRuns);

describe("max_concurrent across schedules due in one tick", () => {
	it("max_concurrent 2, overlap skip: three schedules due at once claim two, the third skipped saying why", async () => {
		await createAgent({ name: "cap-three-due", max_concurrent: 2, schedules: { a: { interval: "1h" }, b: { cron: "0 * * * *" }, c: { interval: "30m" } } });
		await tick(at("09:50"));
		await tick(at("10:00"));
		const runs = (await runsOf("cap-three-due")).filter((r) => r.scheduled_instant === iso("10:00"));
		expect(runs.map((r) => r.status).sort()).toEqual(["claimed", "claimed", "skipped"]);
		expect(runs.find((r) => r.status === "skipped")!.skip_reason).toBe("at capacity (max_concurrent 2): 2 runs claimed and not started yet");
	});

	it("max_concurrent 2, overlap queue: four schedules due at once claim three (one queued, waiting for a slot), the fourth skipped", async () => {
		// Each job's first call asks for an approval, which holds its slot until it is decided.
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "a" } } }, { tool_use: { name: "create_ticket", input: { title: "b" } } });
		fake("https://tickets.example.test", () => Response.json({ ok: true }));
		const name = "cap-four-due";
		await createAgent({ name, max_concurrent: 2, overlap: "queue", tools: [ticketTool], schedules: { a: { interval: "1h" }, b: { cron: "0 * * * *" }, c: { interval: "30m" }, d: { interval: "2h" } } });
		await tick(at("11:50"));
		await tick(at("12:00"));
		const runs = (await runsOf(name)).filter((r) => r.scheduled_instant === iso("12:00"));
		expect(runs.map((r) => r.status).sort()).toEqual(["claimed", "claimed", "claimed", "skipped"]);
		expect(runs.find((r) => r.status === "skipped")!.skip_reason).toBe("at capacity (max_concurrent 2) with a run already queued");

		// Started: two take the two slots and wait for their approvals; the third waits for a slot.
		await settle(name);
		const claimed = runs.filter((r) => r.status === "claimed").map((r) => r.job_id!);
		const statuses = async () => Promise.all(claimed.map(async (id) => (await jobOf(name, id)).status));
		expect((await statuses()).sort()).toEqual(["approval_pending", "approval_pending", "pending"]);
		// A slot freed (one approval denied, its job answering and ending), the third starts.
		const held = await statuses();
		const waiting = claimed.filter((_id, i) => held[i] === "approval_pending");
		emulator.enqueue({ text: "Denied, done." }, { text: "Ran third." });
		expect((await call(`/v1/jobs/${waiting[0]}/approval`, { method: "POST", as: "operate", body: { decision: "deny" } })).status).toBe(200);
		await settle(name);
		const third = claimed.find((id) => !waiting.includes(id))!;
		expect((await jobOf(name, waiting[0]!)).status).toBe("completed");
		expect((await jobOf(name, third)).status).toBe("completed");
	});
});
