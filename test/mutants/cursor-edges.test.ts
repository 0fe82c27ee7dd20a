// Cursors at the edges of what they may carry, which a mutation walk found unchecked: the longest
// agent name (63 characters) as a usage page's position, and a position that is no whole number.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { cursorScope, encodeCursor } from "../../src/shared/cursor.ts";
import { call, errorOf } from "../helpers/http.ts";

const LONGEST = `a${"b".repeat(61)}z`;

async function addDay(agent: string, tokens: number): Promise<void> {
	await env.DB.prepare(
		`INSERT INTO usage_daily (day, agent, jobs, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, cost_usd, priced_jobs) VALUES (?, ?, 1, ?, 0, 0, 0, 0, 0)`,
	)
		.bind(Date.parse("2026-05-05"), agent, tokens)
		.run();
}

describe("a cursor at its edges", () => {
	it("pages usage past an agent whose name is 63 characters long, by day and by agent", async () => {
		expect(LONGEST).toHaveLength(63);
		await addDay(LONGEST, 500);
		await addDay("short", 10);
		const range = "since=2026-05-05&until=2026-05-05&limit=1";
		for (const [query, key] of [[range, "days"], [`${range}&group=agent`, "agents"]] as const) {
			const first = await call(`/v1/usage?${query}`);
			expect(first.status).toBe(200);
			const one = (await first.json()) as Record<string, { agent: string }[]> & { next_cursor: string | null };
			expect(one[key]!.map((r) => r.agent)).toEqual([LONGEST]);
			const second = await call(`/v1/usage?${query}&cursor=${one.next_cursor}`);
			expect(second.status, await second.clone().text()).toBe(200);
			expect(((await second.json()) as Record<string, { agent: string }[]>)[key]!.map((r) => r.agent)).toEqual(["short"]);
		}
	});

	it("refuses a job list cursor whose position is not a whole number of milliseconds, as malformed", async () => {
		const cursor = encodeCursor({ at: 1.5, id: "job-2026-05-05-aaaaaa" }, cursorScope("jobs", {}));
		const res = await call(`/v1/jobs?cursor=${cursor}`);
		expect(res.status).toBe(400);
		expect((await errorOf(res)).message).toContain("cursor is malformed");
	});
});
