// A prefix that fits several sessions is a 409 naming up to 5 of them, "and more" only past 5: a
// mutation walk found the 5 itself unchecked. A file of its own, so the day's prefix fits its jobs only.
import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

describe("a session prefix fitting several sessions", () => {
	it("names all 5 with no 'and more', and 5 of 6 with it", async () => {
		useEmulator().enqueue(...Array.from({ length: 6 }, (_, i) => ({ text: `Answer ${i}.` })));
		await createAgent({ name: "five-sessions" });
		const jobs = [];
		for (let i = 0; i < 5; i++) jobs.push(await runToRest("five-sessions", `Run ${i}.`));
		const day = `ses-${jobs[0]!.id.slice(0, "job-YYYY-MM-DD-".length)}`;
		const five = await call(`/v1/sessions/${day}`);
		expect(five.status).toBe(409);
		const fiveError = await errorOf(five);
		expect(fiveError.message).not.toContain("and more");
		expect((fiveError.details as { candidates: unknown[] }).candidates).toHaveLength(5);

		await runToRest("five-sessions", "Run 5.");
		const six = await call(`/v1/sessions/${day}`);
		expect(six.status).toBe(409);
		const sixError = await errorOf(six);
		expect(sixError.message).toContain("and more; give more of the id");
		expect((sixError.details as { candidates: unknown[] }).candidates).toHaveLength(5);
	});
});
