import { describe, expect, it } from "vitest";
import { call, errorOf } from "../helpers/http.ts";

interface AgentView {
	name: string;
	source: string;
	enabled: boolean;
	model: string;
	schedules: { name: string; kind: string; expression: string; timezone: string | null; catch_up: boolean; next_run: string | null }[];
}

describe("GET /v1/agents", () => {
	it("lists fleet.yaml's agents with each schedule's next run", async () => {
		const before = Date.now();
		const res = await call("/v1/agents");
		expect(res.status).toBe(200);
		const { agents } = (await res.json()) as { agents: AgentView[] };
		expect(agents.map((a) => a.name)).toEqual(["daily-digest", "site-watch", "triage"]);
		expect(agents.every((a) => a.source === "file" && a.enabled)).toBe(true);

		const digest = agents[0]!.schedules.find((s) => s.name === "weekday-morning")!;
		expect(digest).toMatchObject({ kind: "cron", expression: "0 9 * * 1-5", timezone: "Europe/Berlin", catch_up: true });
		const next = new Date(digest.next_run!);
		expect(next.getTime()).toBeGreaterThan(before);
		// 09:00 in Berlin, on a weekday: 08:00 UTC in winter, 07:00 UTC in summer.
		const berlin = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit", weekday: "short" }).format(next);
		expect(berlin).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 09:00$/);

		const watch = agents[1]!.schedules[0]!;
		expect(watch).toMatchObject({ kind: "interval", expression: "15m", timezone: null, catch_up: false });
		const slot = Date.parse(watch.next_run!);
		expect(slot % (15 * 60_000)).toBe(0);
		expect(slot - before).toBeLessThanOrEqual(15 * 60_000);
		expect(slot).toBeGreaterThan(before - 1000);

		expect(agents[2]!.schedules).toEqual([]);
	});

	it("returns one agent by name", async () => {
		const res = await call("/v1/agents/site-watch");
		expect(res.status).toBe(200);
		expect(((await res.json()) as AgentView).model).toBe("claude-haiku-5-5");
	});

	it("answers 404 for an unknown agent and 400 for a name that cannot be one", async () => {
		const missing = await call("/v1/agents/nobody");
		expect(missing.status).toBe(404);
		expect((await errorOf(missing)).message).toBe("no agent named nobody");
		for (const name of ["Upper", "..%2Fx", "-dash", "a%20b"]) {
			const res = await call(`/v1/agents/${name}`);
			expect(res.status).toBe(400);
			expect((await errorOf(res)).details?.issues?.[0]?.path).toBe("agent");
		}
	});
});
