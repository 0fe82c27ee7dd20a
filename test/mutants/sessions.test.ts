import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

// sessions.ts' findSession: a prefix names a session only when it fits one; two of one agent are candidates.
describe("a session id prefix that fits two sessions of one agent", () => {
	it("is refused naming both, not answered with either", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "one" }, { text: "two" });
		await createAgent({ name: "ses-twice" });
		const a = await runToRest("ses-twice");
		const b = await runToRest("ses-twice");
		expect(a.session_id).not.toBe(b.session_id);
		const day = a.id.slice(0, "job-YYYY-MM-DD-".length);
		expect(b.id.startsWith(day)).toBe(true);
		const res = await call(`/v1/sessions/ses-${day}?agent=ses-twice`);
		expect(res.status, await res.clone().text()).toBe(409);
		const named = ((await errorOf(res)).details as { candidates: { session_id: string }[] }).candidates.map((c) => c.session_id);
		expect(new Set(named)).toEqual(new Set([a.session_id, b.session_id]));
	});
});
