// A mutation walk of the scheduler shard (durable-objects/shard/shard-do.ts) found these unchecked.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { dealtJobId, idDay } from "../../src/jobs/id-blocks.ts";
import { shardName, shardOf } from "../../src/scheduler/shards.ts";
import { createAgent, runsOf } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { trigger } from "../helpers/jobs.ts";
import { tick } from "../helpers/ticks.ts";
import { namesInShard, shardWithVars } from "../helpers/vars.ts";

// Far ahead of the real clock, so no alarm set here fires on its own.
beforeEach(() => {
	vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2037-12-12T09:01:30Z") });
});
afterEach(() => {
	vi.useRealTimers();
});

/** How many job ids the shard has dealt for `day`. */
function dealtSoFar(shard: number, day: string): Promise<number> {
	return runInDurableObject(env.SCHEDULER_SHARD.getByName(shardName(shard)), (_instance, state) => {
		return state.storage.sql.exec<{ next: number }>("SELECT next FROM job_id_counters WHERE day = ?", day).toArray()[0]?.next ?? 0;
	});
}

describe("the job ids a tick deals", () => {
	it("gives each agent it calls one to spare: a manual run just after takes it, and asks the shard for no block", async () => {
		useEmulator();
		let name = "";
		for (let i = 0; !name; i++) if (shardOf(`spare-id-${i}`) === 2) name = `spare-id-${i}`;
		const shard = 2;
		await createAgent({ name, schedules: { often: { interval: "1m" } } });
		const day = idDay(Date.parse("2037-12-12T09:02:00Z"));
		const before = await dealtSoFar(shard, day);
		await tick("2037-12-12T09:02:00Z");
		const afterTick = await dealtSoFar(shard, day);
		const [claimed] = await runsOf(name);
		// Its claim took one of the ids the tick dealt (fleet.yaml's agents of the shard are dealt theirs too).
		const k = Array.from({ length: afterTick - before }, (_, i) => before + i).find((n) => dealtJobId(day, shard, n) === claimed?.job_id);
		expect(k).toBeDefined();
		const manual = await trigger(name);
		// The tick's second id for it, not the first of a block of 32 asked for after the tick's.
		expect(manual.id).toBe(dealtJobId(day, shard, k! + 1));
		expect(await dealtSoFar(shard, day)).toBe(afterTick);
	});
});

/** The structured lines of `event` written while `fn` ran. */
async function logged(event: string, fn: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
	const lines: Record<string, unknown>[] = [];
	const keep = (line: unknown) => {
		if (typeof line !== "string" || !line.startsWith("{")) return;
		const parsed = JSON.parse(line) as Record<string, unknown>;
		if (parsed.event === event) lines.push(parsed);
	};
	const spies = [vi.spyOn(console, "log").mockImplementation(keep), vi.spyOn(console, "warn").mockImplementation(keep), vi.spyOn(console, "error").mockImplementation(keep)];
	try {
		await fn();
	} finally {
		for (const spy of spies) spy.mockRestore();
	}
	return lines;
}

describe("a follow-up alarm's shard.follow_up line", () => {
	it("names the oldest minute it calls for as its minute, and every pending minute", async () => {
		// Between fleet.yaml's slots.
		const first = Date.parse("2031-09-05T10:02:00Z");
		vi.setSystemTime(first - 30_000);
		const shard = 9;
		for (const name of namesInShard("owed", shard, 24)) await createAgent({ name, schedules: { minutely: { cron: "* * * * *" } } });
		// 8 calls an invocation: two ticks leave 10:02 part called and 10:03 untouched.
		await shardWithVars(shard, { SUBREQUEST_LIMIT: "10" });
		for (const m of [0, 1]) {
			vi.setSystemTime(first + m * 60_000 + 5_000);
			await tick(first + m * 60_000);
		}
		const lines = await logged("shard.follow_up", () => runDurableObjectAlarm(env.SCHEDULER_SHARD.getByName(shardName(shard))));
		expect(lines).toEqual([
			expect.objectContaining({ shard, minute: "2031-09-05T10:02:00.000Z", minutes: ["2031-09-05T10:02:00.000Z", "2031-09-05T10:03:00.000Z"], failed: 0 }),
		]);
	});
});
