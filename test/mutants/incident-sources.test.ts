// What an incident waits on (src/incidents/sources.ts), where a mutation walk found the suite blind:
// a webhook run's failure filed as a one-off's ("manual", which any clean run clears), the webhook
// not among the sources the agent still runs (so a clean manual run resolved its failure), and the
// agent's hooks not among them either (so a clean run resolved a broken on_error hook's incident,
// though that hook is called only when a run fails: the pager's path stays broken, unpaged), and a
// hook's call getting through taken for a clean run (so the after_run hook of a failed run resolved
// the failure it was called for, as it did with "manual" not among the sources any run clears), and
// a rate limit taken for one schedule's failure (its incident held open past a clean run), and a
// disabled agent's schedules still counted as run (a failure of one held open by a run that ends
// clean after the agent was disabled, though that schedule will never run again).
import { afterEach, describe, expect, it } from "vitest";
import { signWebhook } from "../../src/api/webhook-signature.ts";
import { createAgent, settle, settleClaimedRuns } from "../helpers/agents.ts";
import { heldModel, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest, trigger } from "../helpers/jobs.ts";
import { dayFromToday, minuteOn, tick } from "../helpers/ticks.ts";
import { fake } from "../helpers/outbound.ts";
import { WEBHOOK_SECRET } from "../helpers/tokens.ts";

// A tick claims fleet.yaml's agents' runs too: they end with the test that claimed them.
afterEach(() => settleClaimedRuns());

interface Incident {
	class: string;
	error: string;
	state: string;
	count: number;
	failing: string[] | null;
}

async function incidentsOf(agent: string): Promise<Incident[]> {
	const res = await call(`/v1/incidents?agent=${agent}`);
	expect(res.status).toBe(200);
	return ((await res.json()) as { incidents: Incident[] }).incidents;
}

/** A signed webhook trigger, run to rest (each issue its own body: the same one twice in a second is a replay). */
async function hooked(agent: string, issue: number): Promise<void> {
	const body = JSON.stringify({ issue });
	const timestamp = Math.floor(Date.now() / 1000);
	const res = await call(`/v1/hooks/${agent}`, {
		method: "POST",
		as: null,
		body,
		headers: { "x-drover-timestamp": String(timestamp), "x-drover-signature": await signWebhook(WEBHOOK_SECRET, timestamp, body) },
	});
	expect(res.status, await res.clone().text()).toBe(202);
	await settle(agent);
}

const failing = (emulator: ReturnType<typeof useEmulator>) => emulator.enqueue({ error: 400, message: "messages.0: tool_result block without tool_use" });

describe("an incident opened by a webhook run", () => {
	it("waits on the webhook: a clean manual run leaves it open, a clean webhook run resolves it", async () => {
		fake("https://alerts.example.test", () => new Response("ok"));
		const emulator = useEmulator();
		await createAgent({ name: "hook-fails", prompt: "Triage this.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
		failing(emulator);
		await hooked("hook-fails", 1);
		expect(await incidentsOf("hook-fails")).toMatchObject([{ state: "alerted", count: 1, failing: ["webhook"] }]);

		emulator.enqueue({ text: "fine" });
		await runToRest("hook-fails");
		await settle("hook-fails");
		expect(await incidentsOf("hook-fails")).toMatchObject([{ state: "alerted", count: 1, failing: ["webhook"] }]);

		emulator.enqueue({ text: "fine" });
		await hooked("hook-fails", 2);
		expect(await incidentsOf("hook-fails")).toMatchObject([{ state: "resolved", failing: null }]);
	});
});

describe("an incident opened by a hook's call given up", () => {
	it("waits on that hook: a clean run, which calls no on_error hook, leaves it open", async () => {
		fake("https://alerts.example.test", () => new Response("ok"));
		fake("https://hooks.example.test", () => new Response("", { status: 404 }));
		const emulator = useEmulator();
		await createAgent({ name: "pager-broken", hooks: { on_error: [{ url_secret: "TEST_ERROR_HOOK_URL" }] } });
		failing(emulator);
		await runToRest("pager-broken");
		await settle("pager-broken");
		const opened = await incidentsOf("pager-broken");
		const hookIncident = (list: Incident[]) => list.filter((i) => i.error.includes("404"));
		expect(hookIncident(opened)).toMatchObject([{ state: "alerted", failing: ["hook:on_error:TEST_ERROR_HOOK_URL"] }]);

		emulator.enqueue({ text: "fine" });
		await runToRest("pager-broken");
		await settle("pager-broken");
		const after = await incidentsOf("pager-broken");
		expect(hookIncident(after)).toMatchObject([{ state: "alerted", failing: ["hook:on_error:TEST_ERROR_HOOK_URL"] }]);
		// The run's own failure, a one-off's, is resolved by the clean run.
		expect(after.filter((i) => !i.error.includes("404"))).toMatchObject([{ state: "resolved" }]);
	});
});

describe("a hook's call that gets through", () => {
	it("is no clean run: a failed run's after_run hook delivered leaves the run's incident open", async () => {
		fake("https://alerts.example.test", () => new Response("ok"));
		const calls: string[] = [];
		fake("https://hooks.example.test", (req) => {
			calls.push(new URL(req.url).pathname);
			return new Response("ok");
		});
		const emulator = useEmulator();
		await createAgent({ name: "hook-after-failure", hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		failing(emulator);
		await runToRest("hook-after-failure");
		await settle("hook-after-failure");
		expect(calls).toEqual(["/after-run"]);
		expect(await incidentsOf("hook-after-failure")).toMatchObject([{ state: "alerted", count: 1, failing: ["manual"] }]);
	});
});

describe("an incident of a rate limit, opened by a scheduled run", () => {
	it("resolves at any clean run, as one of bad credentials does: the limit is the agent's, not its schedule's", async () => {
		fake("https://alerts.example.test", () => new Response("ok"));
		const emulator = useEmulator();
		const day = dayFromToday(-1);
		await createAgent({ name: "limited", schedules: { hourly: { cron: "0 * * * *" } } });
		emulator.enqueue({ error: 400, message: "your organization's rate limit for this model is exhausted" });
		await tick(minuteOn(day, "10:00"));
		await settle("limited");
		expect(await incidentsOf("limited")).toMatchObject([{ class: "rate_limit", state: "alerted", failing: ["schedule:hourly"] }]);

		emulator.enqueue({ text: "fine" });
		await runToRest("limited");
		await settle("limited");
		expect(await incidentsOf("limited")).toMatchObject([{ class: "rate_limit", state: "resolved", failing: null }]);
	});
});

describe("an incident of a scheduled run's failure, when the agent is disabled", () => {
	it("resolves at the next clean run's end: the schedule will never run clean", async () => {
		fake("https://alerts.example.test", () => new Response("ok"));
		const emulator = useEmulator();
		const definition = { name: "switched-off", prompt: "Do the thing.", schedules: { hourly: { cron: "0 * * * *" } } };
		await createAgent(definition);
		failing(emulator);
		await tick(minuteOn(dayFromToday(-1), "10:00"));
		await settle("switched-off");
		expect(await incidentsOf("switched-off")).toMatchObject([{ state: "alerted", failing: ["schedule:hourly"] }]);

		// A manual run in flight when the agent is disabled ends clean after it.
		emulator.enqueue({ text: "fine" });
		const { arrived, release } = heldModel(emulator);
		await trigger("switched-off");
		await arrived;
		const disabled = await call("/v1/agents/switched-off", { method: "PUT", as: "admin", body: { ...definition, enabled: false } });
		expect(disabled.status, await disabled.clone().text()).toBe(200);
		release();
		await settle("switched-off");
		expect(await incidentsOf("switched-off")).toMatchObject([{ state: "resolved", failing: null }]);
	});
});
