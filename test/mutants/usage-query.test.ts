// /v1/usage's query at its stated edges, which a mutation walk found unchecked: a since of
// 1970-01-01 itself (the first day it takes), and an agent list of exactly 20 names, counted once
// each however often the list repeats them.
import { describe, expect, it } from "vitest";
import { call, errorOf } from "../helpers/http.ts";

const names = (n: number) => Array.from({ length: n }, (_, i) => `usage-edge-${i}`);

describe("GET /v1/usage at its query's edges", () => {
	it("takes since=1970-01-01 and refuses the day before it, naming since", async () => {
		const first = await call("/v1/usage?since=1970-01-01&until=1970-01-02");
		expect(first.status, await first.clone().text()).toBe(200);
		expect(await first.json()).toMatchObject({ since: "1970-01-01", until: "1970-01-02", days: [] });
		const before = await call("/v1/usage?since=1969-12-31&until=1970-01-02");
		expect(before.status).toBe(400);
		expect((await errorOf(before)).details?.issues?.map((i) => i.path)).toEqual(["since"]);
	});

	it("takes 20 agents, and 21 names of which 20 differ, and refuses 21 different ones", async () => {
		const ask = (list: string[]) => call(`/v1/usage?since=2026-05-01&until=2026-05-02&agent=${list.join(",")}`);
		expect((await ask(names(20))).status).toBe(200);
		expect((await ask([...names(20), "usage-edge-0"])).status).toBe(200);
		const over = await ask(names(21));
		expect(over.status).toBe(400);
		expect((await errorOf(over)).message).toContain("names 21 agents; at most 20");
	});
});
