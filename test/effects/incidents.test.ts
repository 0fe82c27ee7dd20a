import { env, runInDurableObject } from "cloudflare:test";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAgent, settle, settleClaimedRuns } from "../helpers/agents.ts";
import { gate, heldModel, useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";
import { dayFromToday, minuteOn, tick } from "../helpers/ticks.ts";
import { fake } from "../helpers/outbound.ts";
import { incidentId, normalizeError } from "../../src/incidents/signature.ts";
import { sha256Hex } from "../../src/shared/hash.ts";
import { alertIncident } from "../../src/incidents/alert.ts";
import { claimAlert, getIncident, markAlerted, recordFailure, resolveIncident, resolveOpen } from "../../src/store/incidents.ts";
import { loseAnswer, writeBefore } from "../helpers/incidents.ts";
import { captureLogs } from "../helpers/logs.ts";

interface Incident {
	id: string;
	agent: string;
	class: string;
	state: string;
	count: number;
	error: string;
	failing: string[] | null;
}

// Ticks here claim fleet.yaml's site-watch too (yesterday's 10:00 to 12:00, and a tick a minute on
// that may fall on its quarter hour): its run, started by its own alarm up to 5 s on, would take a
// later test's scripted model answer. Each test's claimed runs end with it (see settleClaimedRuns).
afterEach(async () => {
	vi.useRealTimers();
	await settleClaimedRuns();
});

async function incidentsOf(agent: string): Promise<Incident[]> {
	const res = await call(`/v1/incidents?agent=${agent}`);
	expect(res.status).toBe(200);
	return ((await res.json()) as { incidents: Incident[] }).incidents;
}

/** Counts the statements the agent's object sends D1 about incidents from now on (its env's D1 swapped for a counting one). */
async function countD1Statements(agent: string): Promise<{ incidents: number }> {
	const counts = { incidents: 0 };
	await runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => {
		const swappable = instance as unknown as { env: Env };
		const real = swappable.env;
		const counting = new Proxy(real.DB, {
			get(target, prop) {
				if (prop !== "prepare") return Reflect.get(target, prop, target);
				return (query: string) => {
					if (/\bincidents\b/.test(query)) counts.incidents++;
					return target.prepare(query);
				};
			},
		});
		swappable.env = { ...real, DB: counting as D1Database };
	});
	return counts;
}

function alertSink(): unknown[] {
	const alerts: unknown[] = [];
	fake("https://alerts.example.test", async (req) => {
		alerts.push(await req.json());
		return new Response("ok");
	});
	return alerts;
}

describe("incidents", () => {
	it("dedupe identical failures into one incident, alerted once; a clean run resolves it; the same error re-opens it", async () => {
		const alerts = alertSink();
		const emulator = useEmulator();
		await createAgent({ name: "flaky" });
		const fail = () => emulator.enqueue({ error: 400, message: "messages.0: tool_result block without tool_use" });

		fail();
		await runToRest("flaky");
		fail();
		await runToRest("flaky");
		let [incident] = await incidentsOf("flaky");
		expect(incident).toMatchObject({ state: "alerted", count: 2, class: "agent" });
		expect(incident!.id).toMatch(/^flaky_[0-9a-f]{12}$/);
		expect(alerts).toHaveLength(1);

		emulator.enqueue({ text: "all good" });
		await runToRest("flaky");
		[incident] = await incidentsOf("flaky");
		expect(incident).toMatchObject({ state: "resolved", count: 2 });

		fail();
		await runToRest("flaky");
		[incident] = await incidentsOf("flaky");
		expect(incident).toMatchObject({ state: "alerted", count: 3 });
		expect(alerts).toHaveLength(2);
		expect((await incidentsOf("flaky")).length).toBe(1);
	});

	it("alert again when the alert did not go out: at the next failure, or at a tick once the webhook is back", async () => {
		// Its ticks, a minute and two on, reach fleet.yaml's agents too: on the real clock, one under a
		// minute before a quarter hour claimed a site-watch run that then ran during a later test. Five
		// past the hour, no fleet slot is that near. Tomorrow's, as the file's other ticks (yesterday's)
		// must stay behind the fleet's place in time, and no alarm comes due on its own; not years
		// ahead, where its ticks reached the file's other tests' agents (whichever ran first) with
		// years of their schedules and retention to go through, seconds each, past the test's timeout.
		vi.useFakeTimers({ toFake: ["Date"], now: minuteOn(dayFromToday(1), "14:05") });
		let down = true;
		// This test's agents' alerts: a tick also sends again one another test of the file left owed.
		const alerts: unknown[] = [];
		fake("https://alerts.example.test", async (req) => {
			if (down) return new Response("down", { status: 503 });
			const alert = (await req.json()) as { incident: { agent: string } };
			if (alert.incident.agent.startsWith("unpaged")) alerts.push(alert);
			return new Response("ok");
		});
		const emulator = useEmulator();
		await createAgent({ name: "unpaged" });
		await createAgent({ name: "unpaged-once" });
		const fail = (agent: string) => {
			emulator.enqueue({ error: 400, message: "messages.0: tool_result block without tool_use" });
			return runToRest(agent);
		};
		await fail("unpaged");
		await fail("unpaged-once");
		expect((await incidentsOf("unpaged"))[0]).toMatchObject({ state: "detected", count: 1 });

		down = false;
		// The same failure again: its alert is still due, so it goes out now.
		await fail("unpaged");
		expect((await incidentsOf("unpaged"))[0]).toMatchObject({ state: "alerted", count: 2 });
		expect(alerts).toHaveLength(1);
		// An incident whose failure does not recur is paged by the next tick, a minute on.
		expect((await incidentsOf("unpaged-once"))[0]).toMatchObject({ state: "detected" });
		await tick(Date.now() + 61_000);
		expect((await incidentsOf("unpaged-once"))[0]).toMatchObject({ state: "alerted", count: 1 });
		expect(alerts).toHaveLength(2);
		await tick(Date.now() + 121_000);
		expect(alerts).toHaveLength(2);
	});

	it("file a usage limit hit run after run as one incident of class agent, alerted once", async () => {
		const alerts = alertSink();
		fake("https://status.example.test", () => new Response("green"));
		const emulator = useEmulator();
		await createAgent({ name: "over-budget", usage_limits: { max_output_tokens: 1 }, tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"] }] });
		for (const text of ["short", "a much longer preamble of several words"]) {
			emulator.enqueue({ tool_use: { name: "http_fetch", input: { url: "https://status.example.test/a" } }, text });
			const job = await runToRest("over-budget");
			expect(job).toMatchObject({ status: "failed", exit_reason: "usage_limit", error: { type: "usage_limit", message: "usage limit reached: max_output_tokens 1" } });
		}
		const incidents = await incidentsOf("over-budget");
		expect(incidents).toHaveLength(1);
		expect(incidents[0]).toMatchObject({ class: "agent", count: 2, state: "alerted" });
		expect(alerts).toHaveLength(1);
	});

	it("file a rate limit past each run's deadline, run after run, as one incident, alerted once", async () => {
		const alerts = alertSink();
		const emulator = useEmulator();
		await createAgent({ name: "limited-each-run", timeout: "2m" });
		for (let run = 0; run < 2; run++) {
			emulator.enqueue({ error: 429, retry_after: 600 });
			expect(await runToRest("limited-each-run")).toMatchObject({ status: "failed", error: { type: "rate_limit" } });
		}
		const incidents = await incidentsOf("limited-each-run");
		expect(incidents).toHaveLength(1);
		expect(incidents[0]).toMatchObject({ count: 2, state: "alerted" });
		expect(alerts).toHaveLength(1);
	});

	it("stay closed once an operator closes them, while a changed error mints a new one", async () => {
		const alerts = alertSink();
		const emulator = useEmulator();
		await createAgent({ name: "closer" });
		emulator.enqueue({ error: 400, message: "first kind of failure" });
		await runToRest("closer");
		const [first] = await incidentsOf("closer");
		const closed = await call(`/v1/incidents/${first!.id}/close`, { method: "POST", as: "operate" });
		expect(closed.status).toBe(200);
		expect(await closed.json()).toMatchObject({ state: "closed", closed_by: "operator" });

		emulator.enqueue({ error: 400, message: "first kind of failure" });
		await runToRest("closer");
		emulator.enqueue({ text: "clean" });
		await runToRest("closer");
		expect((await incidentsOf("closer")).find((i) => i.id === first!.id)).toMatchObject({ state: "closed", count: 2 });
		expect(alerts).toHaveLength(1);

		emulator.enqueue({ error: 400, message: "a different failure" });
		await runToRest("closer");
		const all = await incidentsOf("closer");
		expect(all).toHaveLength(2);
		expect(all.find((i) => i.id !== first!.id)).toMatchObject({ state: "alerted", count: 1 });
		expect(alerts).toHaveLength(2);
	});

	it("are read one at a time by id, as the list has them, by any token; an id never filed is a 404 and a malformed one a 400", async () => {
		useEmulator().enqueue({ error: 400, message: "read me by id" });
		await createAgent({ name: "by-id" });
		await runToRest("by-id");
		const [listed] = await incidentsOf("by-id");
		const res = await call(`/v1/incidents/${listed!.id}`, { as: "read" });
		expect(res.status).toBe(200);
		expect(await res.json()).toEqual(listed);
		const missing = await call("/v1/incidents/abc_000000000000");
		expect(missing.status).toBe(404);
		expect(await errorOf(missing)).toEqual({ code: "not_found", message: "no incident abc_000000000000" });
		const malformed = await call("/v1/incidents/not-an-id");
		expect(malformed.status).toBe(400);
		expect((await errorOf(malformed)).details?.issues?.[0]?.path).toBe("id");
		expect((await call(`/v1/incidents/${listed!.id}`, { as: null })).status).toBe(401);
	});

	it("refuse a bad state filter or incident id, and need operate to close", async () => {
		const res = await call("/v1/incidents?state=bogus");
		expect(res.status).toBe(400);
		expect((await errorOf(res)).details?.issues?.[0]?.path).toBe("state");
		expect((await call("/v1/incidents/not-an-id/close", { method: "POST", as: "operate" })).status).toBe(400);
		expect((await call("/v1/incidents/abc_000000000000/close", { method: "POST", as: "operate" })).status).toBe(404);
		expect((await call("/v1/incidents/abc_000000000000/close", { method: "POST", as: "read" })).status).toBe(403);
		expect(await env.DB.prepare("SELECT count(*) AS n FROM incidents WHERE id = 'abc_000000000000'").first<{ n: number }>()).toEqual({ n: 0 });
	});

	it("files a queued failure once, and alerts once, when a trigger's index flush meets the alarm's", async () => {
		const alerts = alertSink();
		await createAgent({ name: "raced" });
		// Two flushes at once (a trigger indexing its job while the alarm flushes) see the same queue.
		await runInDurableObject(env.AGENT.getByName("raced"), async (instance: AgentDO, state) => {
			state.storage.sql.exec("INSERT INTO incident_events (kind, job_id, error, at) VALUES ('failure', NULL, 'tool ticket failed: 502', ?)", Date.now());
			const flush = () => (instance as unknown as { passes: { closing: { flushIndex(): Promise<boolean> } } }).passes.closing.flushIndex();
			expect(await Promise.all([flush(), flush()])).toEqual([true, true]);
		});
		const incidents = await incidentsOf("raced");
		expect(incidents).toHaveLength(1);
		expect(incidents[0]!.count).toBe(1);
		expect(alerts).toHaveLength(1);
	});

	it("keeps counting an error on the incident an earlier release opened for it, whose signature counted UTF-16 units", async () => {
		const alerts = alertSink();
		const emulator = useEmulator();
		await createAgent({ name: "emoji-fail" });
		const message = `🔥 ${"the request was refused by upstream validation ".repeat(6)}`;
		emulator.enqueue({ error: 400, message });
		const first = await runToRest("emoji-fail");
		expect(first.status).toBe("failed");
		// As the release before filed it: the same formula, its 200 counted in UTF-16 units.
		const old = (await sha256Hex(`emoji-fail${normalizeError(first.error!.message).slice(0, 200)}`)).slice(0, 12);
		await env.DB.prepare("UPDATE incidents SET id = ?, signature = ? WHERE agent = ?").bind(incidentId("emoji-fail", old), old, "emoji-fail").run();
		expect(alerts).toHaveLength(1);
		emulator.enqueue({ error: 400, message });
		expect((await runToRest("emoji-fail")).status).toBe("failed");
		const incidents = await incidentsOf("emoji-fail");
		expect(incidents).toEqual([expect.objectContaining({ id: incidentId("emoji-fail", old), count: 2 })]);
		expect(alerts).toHaveLength(1);
	});

	it("counts a failure once when D1 took it but its answer was lost: the event sent again is not a second failure, and logs the opening the lost answer did not", async () => {
		const alerts = alertSink();
		await createAgent({ name: "lost-answer" });
		const lines = captureLogs();
		await runInDurableObject(env.AGENT.getByName("lost-answer"), async (instance: AgentDO, state) => {
			const swappable = instance as unknown as { env: Env };
			const real = swappable.env;
			// The upsert's answer is lost, as a timed-out call whose write had landed.
			swappable.env = { ...real, DB: loseAnswer(real.DB, "INSERT INTO incidents") };
			state.storage.sql.exec("INSERT INTO incident_events (kind, job_id, error, at) VALUES ('failure', 'job-2026-01-01-aaaaaa', 'tool ticket failed: 502', ?)", Date.now());
			const flush = () => (instance as unknown as { passes: { closing: { flushIndex(): Promise<boolean> } } }).passes.closing.flushIndex();
			expect(await flush()).toBe(false);
			expect(await flush()).toBe(true);
			swappable.env = real;
		});
		const incidents = await incidentsOf("lost-answer");
		expect(incidents).toHaveLength(1);
		expect(incidents[0]!.count).toBe(1);
		expect(alerts).toHaveLength(1);
		expect(lines.filter((l) => l.event === "incident.opened")).toEqual([expect.objectContaining({ agent: "lost-answer", incident: incidents[0]!.id, job_id: "job-2026-01-01-aaaaaa" })]);
	});

	it("says a failure sent again opened its incident only when that failure was its opening", async () => {
		const at = Date.now();
		const first = { agent: "resent-opening", error: "tool ticket failed: 502", jobId: "job-2026-01-01-bbbbbb", at, source: "manual" as const };
		expect((await recordFailure(env.DB, first)).opened).toBe(true);
		// Sent again (its answer lost): still this failure's opening, to be logged by the one that hears it.
		expect(await recordFailure(env.DB, first)).toMatchObject({ opened: true, incident: { count: 1 } });
		const second = { ...first, jobId: "job-2026-01-01-cccccc", at: at + 1_000 };
		expect((await recordFailure(env.DB, second)).opened).toBe(false);
		expect(await recordFailure(env.DB, second)).toMatchObject({ opened: false, incident: { count: 2 } });
	});

	it("of a deleted agent resolve, open or closed, so an agent defined again under its name is paged for the same error", async () => {
		const alerts = alertSink();
		const emulator = useEmulator();
		await createAgent({ name: "reborn" });
		emulator.enqueue({ error: 400, message: "messages.0: tool_result block without tool_use" });
		await runToRest("reborn");
		emulator.enqueue({ error: 400, message: "prompt is too long" });
		await runToRest("reborn");
		const [tooLong, toolResult] = await incidentsOf("reborn");
		expect(toolResult!.error).toContain("tool_result");
		const closed = await call(`/v1/incidents/${toolResult!.id}/close`, { method: "POST", as: "operate" });
		expect(closed.status).toBe(200);
		expect(alerts).toHaveLength(2);

		const deleted = await call("/v1/agents/reborn", { method: "DELETE", as: "admin" });
		expect(deleted.status).toBe(200);
		const retired = await incidentsOf("reborn");
		expect(retired.map((i) => [i.id, i.state])).toEqual([
			[tooLong!.id, "resolved"],
			[toolResult!.id, "resolved"],
		]);

		await createAgent({ name: "reborn" });
		emulator.enqueue({ error: 400, message: "messages.0: tool_result block without tool_use" });
		await runToRest("reborn");
		const again = (await incidentsOf("reborn")).find((i) => i.id === toolResult!.id);
		expect(again).toMatchObject({ state: "alerted", count: 2, closed_at: null, closed_by: null, failing: ["manual"] });
		expect(alerts).toHaveLength(3);
	});

	it("are alerted beside the D1 write, not in it: a hung alert webhook does not hold up a trigger's answer", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "ok" });
		// The run stays on its model call: a clean end would resolve the incident before its alert.
		const model = heldModel(emulator);
		await createAgent({ name: "hung-alerts" });
		const stub = env.AGENT.getByName("hung-alerts");
		// The webhook's call and answer are settled in the agent's object, whose fetch they belong to:
		// workerd refuses a promise of one object's settled from another's.
		let arrived: { promise: Promise<void>; open: () => void } = gate();
		let answer = () => {};
		let calls = 0;
		await runInDurableObject(stub, (_i: AgentDO, state) => {
			arrived = gate();
			// A failure waiting to be filed in D1, as a pass queues one when a job fails.
			state.storage.sql.exec("INSERT INTO incident_events (kind, job_id, error, at, source) VALUES ('failure', NULL, 'tool ticket failed: 502', ?, 'manual')", Date.now());
		});
		fake("https://alerts.example.test", () => {
			calls++;
			arrived.open();
			return new Promise<Response>((resolve) => (answer = () => resolve(new Response("ok"))));
		});

		// The trigger's index write files the failure and answers; its alert goes on beside it. (It
		// waited for the alert, 10 s for a hung one, each, before it answered.)
		const res = await call("/v1/agents/hung-alerts/jobs", { method: "POST", as: "operate", body: { prompt: "Go." } });
		expect(res.status).toBe(201);
		await runInDurableObject(stub, () => arrived.promise);
		let [incident] = await incidentsOf("hung-alerts");
		expect(incident).toMatchObject({ state: "detected", error: "tool ticket failed: 502" });
		// The job it made is indexed and listed meanwhile, the webhook still silent.
		const { id } = (await res.json()) as { id: string };
		expect((await call(`/v1/jobs/${id}`)).status).toBe(200);

		// Once the webhook answers, the incident is alerted, once.
		await runInDurableObject(stub, (instance: AgentDO) => {
			answer();
			return AgentDO.alertsSent(instance);
		});
		[incident] = await incidentsOf("hung-alerts");
		expect(incident).toMatchObject({ state: "alerted" });
		expect(calls).toBe(1);
		model.release();
		await settle("hung-alerts");
		expect((await incidentsOf("hung-alerts"))[0]).toMatchObject({ state: "resolved" });
	});

	it.each([
		["refused", 410, "delivery"],
		["unauthorized", 401, "auth"],
	])("of a delivery target stay open across a [SILENT] run, which sent nothing, until an answer is delivered (%s)", async (_, status, cls) => {
		const alerts = alertSink();
		const answers = [status, status, 200];
		let posts = 0;
		fake("https://deliver.example.test", () => new Response("no", { status: answers[posts++] ?? 200 }));
		const emulator = useEmulator();
		const name = `silent-target-${status}`;
		await createAgent({ name, delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		emulator.enqueue({ text: "Report A" });
		await runToRest(name);
		expect(await incidentsOf(name)).toMatchObject([{ class: cls, state: "alerted", count: 1, failing: ["delivery"] }]);

		emulator.enqueue({ text: "[SILENT]" });
		expect((await runToRest(name)).delivery).toEqual({ target: "webhook", outcome: "suppressed" });
		expect(posts).toBe(1);
		expect(await incidentsOf(name)).toMatchObject([{ state: "alerted", count: 1, failing: ["delivery"] }]);

		// Still down: the same incident counts it, paged once.
		emulator.enqueue({ text: "Report B" });
		await runToRest(name);
		expect(await incidentsOf(name)).toMatchObject([{ state: "alerted", count: 2, failing: ["delivery"] }]);
		expect(alerts).toHaveLength(1);

		emulator.enqueue({ text: "Report C" });
		expect((await runToRest(name)).delivery).toEqual({ target: "webhook", outcome: "delivered" });
		expect(await incidentsOf(name)).toMatchObject([{ state: "resolved", failing: null }]);
	});

	it("record the page of an incident a clean run resolved while its alert was out", async () => {
		const at = Date.now();
		const { incident, opened } = await recordFailure(env.DB, { agent: "paged-resolved", error: "tool ticket failed: 502", jobId: null, at });
		expect(opened).toBe(true);
		expect(await claimAlert(env.DB, incident.id, at)).toEqual(expect.any(Number));
		// The clean run filed with the failure resolves it before the webhook answers.
		await resolveOpen(env.DB, "paged-resolved", at + 1);
		await markAlerted(env.DB, incident.id, at + 2);
		expect(await getIncident(env.DB, incident.id)).toMatchObject({ state: "resolved", alerted_at: new Date(at + 2).toISOString() });
	});

	it("say a failure opened its incident by what its own write met: an operator's resolve, or another failure, landing between its read and its write", async () => {
		const at = Date.now();
		const file = (db: D1Database, job: string, seen: number) => recordFailure(db, { agent: "opened-raced", error: "tool ticket failed: 502", jobId: `job-2026-12-06-${job}`, at: seen, source: "manual" });
		const first = await file(env.DB, "aaaaaa", at - 2_000);
		expect(first.opened).toBe(true);
		const { id } = first.incident;
		// The operator's resolve lands after the next failure read the incident open, before its write: that failure re-opens it.
		const second = await file(
			writeBefore(env.DB, "INSERT INTO incidents", (db) => resolveIncident(db, id, at - 1_000)),
			"bbbbbb",
			at,
		);
		expect(second).toMatchObject({ opened: true, alertDue: true, incident: { id, state: "detected", count: 2, failing: ["manual"] } });

		// Resolved again; two failures re-open it, the second landing between the first's read and its write: the second opened it, the first counts on it.
		expect(await resolveIncident(env.DB, id, at + 1)).toMatchObject({ resolved: true });
		let landed: Awaited<ReturnType<typeof file>> | null = null;
		const late = await file(
			writeBefore(env.DB, "INSERT INTO incidents", async (db) => (landed = await file(db, "dddddd", at + 3))),
			"cccccc",
			at + 2,
		);
		expect(landed).toMatchObject({ opened: true, incident: { state: "detected", count: 3 } });
		expect(late).toMatchObject({ opened: false, incident: { state: "detected", count: 4 } });
	});

	it("are not resolved by an operator over a failure D1 took after the resolve was asked: that failure's opening is paged", async () => {
		const at = Date.now();
		const file = (db: D1Database, job: string, seen: number) => recordFailure(db, { agent: "resolve-raced", error: "tool ticket failed: 502", jobId: `job-2026-12-06-${job}`, at: seen, source: "manual" });
		const { incident } = await file(env.DB, "aaaaaa", at - 3_000);
		await markAlerted(env.DB, incident.id, at - 3_000);
		// A clean run resolves it; the operator, who saw it open, asks at `at` to resolve it; a failure
		// just after re-opens it, and lands before the resolve's write.
		await resolveOpen(env.DB, "resolve-raced", at - 2_000);
		let reopened: Awaited<ReturnType<typeof file>> | null = null;
		const answer = await resolveIncident(
			writeBefore(env.DB, "UPDATE incidents SET state = 'resolved'", async (db) => (reopened = await file(db, "bbbbbb", at + 1))),
			incident.id,
			at,
		);
		expect(reopened).toMatchObject({ opened: true, alertDue: true });
		// Left as it stands, open, and its opening's alert still to go out.
		expect(answer).toMatchObject({ resolved: false, incident: { state: "detected", count: 2, alerted_at: null, last_seen_at: new Date(at + 1).toISOString() } });
		expect(await claimAlert(env.DB, incident.id, at + 2)).toBe(at + 1);

		// Failures it was asked after (this one, seen at the instant it was asked, too) it resolves.
		await markAlerted(env.DB, incident.id, at + 2);
		await file(env.DB, "cccccc", at + 5);
		expect(await resolveIncident(env.DB, incident.id, at + 5)).toMatchObject({ resolved: true, incident: { state: "resolved", failing: null } });
	});

	it("are filed with the error's secrets redacted, whatever the caller passed, and one incident for the same error with other secrets", async () => {
		const at = Date.now();
		const first = await recordFailure(env.DB, { agent: "leaky-caller", error: "webhook https://hooks.slack.com/services/T000/B000/abcdefSECRET1 answered 500", jobId: "job-a", at });
		const again = await recordFailure(env.DB, { agent: "leaky-caller", error: "webhook https://hooks.slack.com/services/T000/B000/ghijklSECRET2 answered 500", jobId: "job-b", at: at + 1 });
		expect(again.incident.id).toBe(first.incident.id);
		const stored = await env.DB.prepare("SELECT error, signature FROM incidents WHERE agent = 'leaky-caller'").all<{ error: string; signature: string }>();
		expect(stored.results).toHaveLength(1);
		expect(stored.results[0]!.error).toContain("[REDACTED]");
		expect(JSON.stringify(stored.results)).not.toMatch(/SECRET1|SECRET2|hooks\.slack\.com\/services\/T000/);
		expect((await getIncident(env.DB, first.incident.id))?.error).not.toContain("SECRET");
	});

	it("page once when two senders alert the same opening at the same moment, the second told it is taken while the first is sending", async () => {
		const at = Date.now();
		const { incident } = await recordFailure(env.DB, { agent: "paged-twice", error: "tool ticket failed: 503", jobId: "job-1", at });
		const held = Promise.withResolvers<void>();
		const keys: string[] = [];
		fake("https://alerts.example.test", async (request) => {
			keys.push(request.headers.get("idempotency-key") ?? (await request.text()));
			await held.promise;
			return new Response("ok");
		});
		const alerting = { ...env, ALERT_WEBHOOK_URL: "https://alerts.example.test/hook" } as Env;
		const senders = [alertIncident(alerting, incident, at), alertIncident(alerting, incident, at)];
		// One claims the opening and waits on the webhook; the other is refused the claim meanwhile.
		expect(await Promise.race(senders)).toBe("taken");
		held.resolve();
		expect((await Promise.all(senders)).sort()).toEqual(["sent", "taken"]);
		expect(keys).toHaveLength(1);
		expect(await getIncident(env.DB, incident.id)).toMatchObject({ state: "alerted", alerted_at: new Date(at).toISOString() });
		// Alerted: a third sender has nothing to send.
		expect(await alertIncident(alerting, incident, at + 1)).toBe("taken");
		expect(keys).toHaveLength(1);
	});

	describe("of an agent with more than one schedule", () => {
		const fail = (emulator: ReturnType<typeof useEmulator>) => emulator.enqueue({ error: 400, message: "messages.0: tool_result block without tool_use" });
		// Yesterday's, not a literal day's: the runs they claim get job ids their shard deals (see dayFromToday).
		const day = dayFromToday(-1);
		const at = (hhmm: string) => minuteOn(day, hhmm);
		const scheduled = async (agent: string, hhmm: string) => {
			await tick(at(hhmm));
			await settle(agent);
		};

		it("stay open, alerted once, while the schedule that failed has not run clean, though the other's runs are clean; resolve when it runs clean", async () => {
			const alerts = alertSink();
			const emulator = useEmulator();
			await createAgent({ name: "two-schedules", schedules: { hourly: { cron: "0 * * * *" }, halfpast: { cron: "30 * * * *" } } });

			fail(emulator);
			await scheduled("two-schedules", "10:00");
			expect((await incidentsOf("two-schedules"))[0]).toMatchObject({ state: "alerted", count: 1, failing: ["schedule:hourly"] });

			// The healthy schedule's clean run, and a manual one, say nothing of the failing schedule.
			emulator.enqueue({ text: "fine" });
			await scheduled("two-schedules", "10:30");
			emulator.enqueue({ text: "fine" });
			await runToRest("two-schedules");
			fail(emulator);
			await scheduled("two-schedules", "11:00");
			emulator.enqueue({ text: "fine" });
			await scheduled("two-schedules", "11:30");
			let [incident] = await incidentsOf("two-schedules");
			expect(incident).toMatchObject({ state: "alerted", count: 2, failing: ["schedule:hourly"], resolved_at: null });
			expect(alerts).toHaveLength(1);

			emulator.enqueue({ text: "fixed" });
			await scheduled("two-schedules", "12:00");
			[incident] = await incidentsOf("two-schedules");
			expect(incident).toMatchObject({ state: "resolved", count: 2, failing: null });
			expect(alerts).toHaveLength(1);
			// Nothing open: the next clean runs ask D1 nothing (no watch, no event queued).
			emulator.enqueue({ text: "fine" });
			await scheduled("two-schedules", "12:30");
			await runInDurableObject(env.AGENT.getByName("two-schedules"), (_i: AgentDO, state) => {
				expect(state.storage.sql.exec("SELECT count(*) AS n FROM incident_watch").one().n).toBe(0);
				expect(state.storage.sql.exec("SELECT count(*) AS n FROM incident_events").one().n).toBe(0);
			});
		});

		it("resolve at any clean run when the cause is the agent's: its delivery target, its credentials", async () => {
			const alerts = alertSink();
			const emulator = useEmulator();
			// The target refuses the first delivery, takes the second, refuses the third: a 400 is given up at once.
			const answers = [400, 200, 400];
			let sent = 0;
			fake("https://deliver.example.test", async () => new Response("answer", { status: answers[sent++] ?? 200 }));
			// Weekly on the ticks' day of the week: its 10:00 run is this week's.
			const schedules = { weekly: { cron: `0 10 * * ${new Date(day).getUTCDay()}` }, halfpast: { cron: "30 * * * *" } };
			await createAgent({ name: "one-target", schedules, delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
			emulator.enqueue({ text: "weekly report" });
			await scheduled("one-target", "10:00");
			expect((await incidentsOf("one-target"))[0]).toMatchObject({ class: "delivery", state: "alerted", failing: ["delivery"] });
			// The target is back: the other schedule's answer delivered says so, not next week's.
			emulator.enqueue({ text: "all quiet" });
			await scheduled("one-target", "10:30");
			expect((await incidentsOf("one-target"))[0]).toMatchObject({ state: "resolved", failing: null });
			// Down again: a new opening, paged.
			emulator.enqueue({ text: "all quiet" });
			await scheduled("one-target", "11:30");
			expect((await incidentsOf("one-target"))[0]).toMatchObject({ state: "alerted", failing: ["delivery"] });
			expect(sent).toBe(3);
			expect(alerts).toHaveLength(2);
			// Gone, so that the later tests' ticks claim none of its runs: one would deliver to a target
			// only this test fakes, during whichever test its start alarm falls in.
			expect((await call("/v1/agents/one-target", { method: "DELETE", as: "admin" })).status).toBe(200);

			await createAgent({ name: "bad-key", schedules });
			emulator.enqueue({ error: 401, message: "invalid x-api-key" });
			await scheduled("bad-key", "10:00");
			expect((await incidentsOf("bad-key"))[0]).toMatchObject({ class: "auth", state: "alerted", failing: ["schedule:weekly"] });
			emulator.enqueue({ text: "key rotated" });
			await scheduled("bad-key", "10:30");
			expect((await incidentsOf("bad-key"))[0]).toMatchObject({ class: "auth", state: "resolved" });
		});

		it("wait on nothing once closed", async () => {
			const emulator = useEmulator();
			alertSink();
			await createAgent({ name: "closed-waits", schedules: { a: { cron: "0 * * * *" } } });
			emulator.enqueue({ error: 400, message: "messages.0: tool_result block without tool_use" });
			await runToRest("closed-waits");
			const [incident] = await incidentsOf("closed-waits");
			expect(incident).toMatchObject({ failing: ["manual"] });
			const closed = await call(`/v1/incidents/${incident!.id}/close`, { method: "POST", as: "operate" });
			expect(await closed.json()).toMatchObject({ state: "closed", failing: null });
			emulator.enqueue({ error: 400, message: "messages.0: tool_result block without tool_use" });
			await scheduled("closed-waits", "10:00");
			expect((await incidentsOf("closed-waits"))[0]).toMatchObject({ state: "closed", count: 2, failing: null });
		});

		it("ask D1 nothing at a clean run of a schedule the open incident does not wait on", async () => {
			alertSink();
			const emulator = useEmulator();
			await createAgent({ name: "quiet-d1", schedules: { hourly: { cron: "0 * * * *" }, often: { interval: "5m" } } });
			fail(emulator);
			await scheduled("quiet-d1", "10:00");
			// The first clean run asks D1 and learns what the incident waits on.
			emulator.enqueue({ text: "fine" });
			await scheduled("quiet-d1", "10:05");
			const statements = await countD1Statements("quiet-d1");
			for (const hhmm of ["10:10", "10:15", "10:20"]) {
				emulator.enqueue({ text: "fine" });
				await scheduled("quiet-d1", hhmm);
			}
			expect(statements.incidents).toBe(0);
			expect((await incidentsOf("quiet-d1"))[0]).toMatchObject({ state: "alerted", failing: ["schedule:hourly"] });
			// Its own clean run does ask, and resolves it.
			emulator.enqueue({ text: "fixed" });
			await scheduled("quiet-d1", "11:00");
			expect(statements.incidents).toBeGreaterThan(0);
			expect((await incidentsOf("quiet-d1"))[0]).toMatchObject({ state: "resolved" });
		});

		it("wait on every schedule that failed; a one-off run's failure is cleared by any clean run", async () => {
			const alerts = alertSink();
			const emulator = useEmulator();
			await createAgent({ name: "three-schedules", schedules: { a: { cron: "0 * * * *" }, b: { cron: "20 * * * *" }, c: { cron: "40 * * * *" } } });
			fail(emulator);
			await scheduled("three-schedules", "10:00");
			fail(emulator);
			await scheduled("three-schedules", "10:20");
			fail(emulator);
			await runToRest("three-schedules");
			expect((await incidentsOf("three-schedules"))[0]).toMatchObject({ state: "alerted", count: 3, failing: ["schedule:a", "schedule:b", "manual"] });

			emulator.enqueue({ text: "fine" });
			await scheduled("three-schedules", "10:40");
			expect((await incidentsOf("three-schedules"))[0]).toMatchObject({ state: "alerted", failing: ["schedule:a", "schedule:b"] });
			emulator.enqueue({ text: "fine" });
			await scheduled("three-schedules", "11:00");
			expect((await incidentsOf("three-schedules"))[0]).toMatchObject({ state: "alerted", failing: ["schedule:b"] });
			emulator.enqueue({ text: "fine" });
			await scheduled("three-schedules", "11:20");
			expect((await incidentsOf("three-schedules"))[0]).toMatchObject({ state: "resolved", failing: null });
			expect(alerts).toHaveLength(1);
		});

		it("resolve at any clean run when opened before their failing sources were kept", async () => {
			const emulator = useEmulator();
			await createAgent({ name: "older-incident", schedules: { hourly: { cron: "0 * * * *" }, halfpast: { cron: "30 * * * *" } } });
			const opened = at("09:00");
			await env.DB.prepare(
				"INSERT INTO incidents (id, agent, signature, class, state, error, count, first_seen_at, last_seen_at, last_job_id, alerted_at) VALUES ('older-_0123456789ab', 'older-incident', '0123456789ab', 'agent', 'alerted', 'boom', 3, ?1, ?1, NULL, ?1)",
			)
				.bind(opened)
				.run();
			// The failure that opened it was flushed by the release before, which left the watch set.
			await runInDurableObject(env.AGENT.getByName("older-incident"), (_i: AgentDO, state) => {
				state.storage.sql.exec("INSERT INTO incident_watch (id, generation) VALUES (1, 1)");
			});
			emulator.enqueue({ text: "fine" });
			await scheduled("older-incident", "10:30");
			expect((await incidentsOf("older-incident"))[0]).toMatchObject({ id: "older-_0123456789ab", state: "resolved", failing: null });
		});

		it.each([
			["disabled", { nightly: { cron: "0 * * * *", enabled: false }, halfpast: { cron: "30 * * * *" } }],
			["dropped", { halfpast: { cron: "30 * * * *" } }],
		])("resolve once the schedule that failed is %s: it will never run clean", async (change, schedules) => {
			alertSink();
			const emulator = useEmulator();
			const name = `${change}-schedule`;
			const definition = { name, prompt: "Do the thing.", schedules: { nightly: { cron: "0 * * * *" }, halfpast: { cron: "30 * * * *" } } };
			await createAgent(definition);
			fail(emulator);
			await scheduled(name, "10:00");
			const res = await call(`/v1/agents/${name}`, { method: "PUT", as: "admin", body: { ...definition, schedules } });
			expect(res.status, await res.clone().text()).toBe(200);
			expect((await incidentsOf(name))[0]).toMatchObject({ state: "alerted", failing: ["schedule:nightly"] });
			emulator.enqueue({ text: "fine" });
			await scheduled(name, "10:30");
			expect((await incidentsOf(name))[0]).toMatchObject({ state: "resolved", failing: null });
		});
	});
});
