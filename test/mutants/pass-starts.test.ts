import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { breakD1, createAgent, queueForAlarm, settle } from "../helpers/agents.ts";
import { heldModelFor, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, runToRest, trigger } from "../helpers/jobs.ts";
import { readEvents } from "../helpers/sse.ts";
import { alarmOf } from "../helpers/retention.ts";
import { wakeupsByHand } from "../helpers/timers.ts";
import { ticketTool } from "../helpers/tools.ts";

const post = (path: string, body: unknown) => call(path, { method: "POST", as: "operate", body });

// pass.ts startPending: what a pass starts when a slot frees.
describe("a queued run of a disabled agent", () => {
	it("waits while the agent is disabled, though a slot frees, and starts once it is enabled again", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		const definition = { name: "disabled-holds", prompt: "Do the thing.", tools: [ticketTool] };
		await createAgent(definition);
		const holder = await runToRest("disabled-holds");
		expect(holder.status).toBe("approval_pending");
		const queued = await trigger("disabled-holds");
		await settle("disabled-holds");
		expect((await jobOf("disabled-holds", queued.id)).status).toBe("pending");

		const off = await call("/v1/agents/disabled-holds", { method: "PUT", as: "admin", body: { ...definition, enabled: false } });
		expect(off.status, await off.clone().text()).toBe(200);
		// The slot frees: a disabled agent, like a paused one, starts nothing.
		expect((await post(`/v1/jobs/${holder.id}/cancel`, {})).status).toBe(200);
		await settle("disabled-holds");
		expect((await jobOf("disabled-holds", holder.id)).status).toBe("cancelled");
		expect((await jobOf("disabled-holds", queued.id)).status).toBe("pending");
		expect(emulator.requests).toHaveLength(1);

		emulator.enqueue({ text: "Ran once enabled." });
		const on = await call("/v1/agents/disabled-holds", { method: "PUT", as: "admin", body: definition });
		expect(on.status, await on.clone().text()).toBe(200);
		await settle("disabled-holds");
		expect(await jobOf("disabled-holds", queued.id)).toMatchObject({ status: "completed", summary: "Ran once enabled." });
	});
});

// pass.ts loop: a job whose wait begins while another job's loop holds the pass gets a timer of the pass's.
describe("a rate-limit wait that begins during a pass another job's call holds", () => {
	it("is taken up when it ends, by a timer of the pass, not when the other call returns", async () => {
		// The test's clock, standing still until the test moves it: R's wait ends when the test says so.
		const start = Date.now();
		vi.useFakeTimers({ toFake: ["Date"], now: start });
		onTestFinished(() => void vi.useRealTimers());
		const name = "wait-begins-mid-pass";
		await createAgent({ name, max_concurrent: 2 });
		const stub = env.AGENT.getByName(name);
		const wakeups = await wakeupsByHand(name);
		onTestFinished(() => wakeups.restore());
		const emulator = useEmulator();
		// A's call is held; R's first call is refused with a two-minute Retry-After, its second answered.
		const { arrived: arrivedA, release: releaseA } = heldModelFor(emulator, "A-job");
		emulator.enqueue({ error: 429, retry_after: 120 }, { text: "R done." }, { text: "A done." });
		await queueForAlarm(name, "A-job");
		await queueForAlarm(name, "R-job");
		const rId = await runInDurableObject(stub, (_i: AgentDO, state) =>
			state.storage.sql.exec<{ id: string }>("SELECT id FROM jobs WHERE json_extract(record, '$.prompt') = 'R-job'").one().id,
		);
		// One pass starts both.
		const pass = runDurableObjectAlarm(stub);
		await arrivedA;
		// R's loop ends waiting while A's call holds the pass: the pass keeps a timer for R's wait.
		const limited = await readEvents(await call(`/v1/jobs/${rId}/stream`), (e) => e.event === "line" && JSON.parse(e.data).subtype === "rate_limited");
		expect(limited.at(-1)?.event).toBe("line");
		expect(wakeups.pending()).toEqual([120_000]);
		vi.setSystemTime(start + 120_000);
		await wakeups.fire();
		await readEvents(await call(`/v1/jobs/${rId}/stream`));
		expect(await jobOf(name, rId)).toMatchObject({ status: "completed", summary: "R done." });
		releaseA();
		await pass;
		await settle(name);
		const listed = (await (await call(`/v1/jobs?agent=${name}`)).json()) as { jobs: { status: string }[] };
		expect(listed.jobs.map((j) => j.status)).toEqual(["completed", "completed"]);
	});
});


// pass.ts startPending: a queued follow-up cancelled at its start (its agent changed) takes no slot.
describe("a queued run behind a continue cancelled at its start", () => {
	it("starts in the pass that frees the slot, not at the next alarm (10 s on while D1 refuses the index)", async () => {
		const name = "behind-cancelled-continue";
		const emulator = useEmulator();
		emulator.enqueue({ text: "Zero." }, { tool_use: { name: "create_ticket", input: { title: "x" } } });
		const definition = { name, prompt: "Do the thing.", tools: [ticketTool] };
		await createAgent(definition);
		const done = await runToRest(name);
		const holder = await runToRest(name);
		expect(holder.status).toBe("approval_pending");
		// First in line a continue, then a manual run, both behind the one slot the holder takes.
		const cont = await post(`/v1/jobs/${done.id}/continue`, { prompt: "And then?" });
		expect(cont.status).toBe(201);
		const continued = (await cont.json()) as { id: string };
		const queued = await trigger(name);
		// The agent changes while they wait: the continue will not run on it unasked.
		const put = await call(`/v1/agents/${name}`, { method: "PUT", as: "admin", body: { ...definition, system_prompt: "Version B." } });
		expect(put.status).toBe(200);
		await settle(name);
		// D1 refuses the index from here on: the pass's next alarm is the outbox's retry, 10 s on.
		await breakD1(name);
		vi.spyOn(console, "warn").mockImplementation(() => {});
		onTestFinished(() => void vi.restoreAllMocks());
		emulator.enqueue({ text: "Not filed." }, { text: "Ran behind it." });
		expect((await post(`/v1/jobs/${holder.id}/approval`, { decision: "deny" })).status).toBe(200);
		// The decision's pass, in the object: the holder ends, the continue is cancelled at its start.
		const stub = env.AGENT.getByName(name);
		await runInDurableObject(stub, async (instance: AgentDO) => {
			const passes = (instance as unknown as { passes: { working: Promise<void> | null } }).passes;
			while (passes.working) await passes.working;
		});
		expect((await jobOf(name, holder.id)).status).toBe("completed");
		expect((await jobOf(name, continued.id)).status).toBe("cancelled");
		// The run behind it took the slot in that same pass.
		expect(await jobOf(name, queued.id)).toMatchObject({ status: "completed", summary: "Ran behind it." });
		expect(await alarmOf(name)).toBeGreaterThan(Date.now() + 5_000);
	});
});
