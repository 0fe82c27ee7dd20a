// A session prefix that fits jobs of many agents: the lookup asks up to 10 of them (AGENTS_ASKED), a
// 409 past that. A mutation walk found neither edge checked: asking 9 passed, and so did never
// refusing, which loops on the index for good. A file of its own, so the day's prefix fits its jobs only.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createJob, transition } from "../../src/jobs/model.ts";
import { upsertJobIndex } from "../../src/store/job-index.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

describe("a session id prefix that fits jobs of many agents", () => {
	it("is found when its agent is the tenth asked, and a 409 when it would be the eleventh", async () => {
		useEmulator();
		await createAgent({ name: "tenth" });
		const held = await runToRest("tenth", "Hello.");
		const day = held.id.slice(0, "job-YYYY-MM-DD-".length);
		// A started job each of other agents, ids first in the index's order, none a session of its agent's.
		const started = (i: number) => {
			const agent = `wide-${i}`;
			const at = Date.parse(held.created_at);
			return transition(createJob({ id: `${day}0000${String(i).padStart(2, "0")}`, agent, trigger_type: "manual", definition_revision: "rev1", schedule: null }, new Date(at)), "running", { reason: "claimed", at: new Date(at + 1) });
		};
		for (let i = 0; i < 10; i++) await createAgent({ name: `wide-${i}` });
		await upsertJobIndex(env.DB, Array.from({ length: 9 }, (_, i) => started(i)));

		const found = await call(`/v1/sessions/ses-${day}`);
		expect(found.status, await found.clone().text()).toBe(200);
		expect(await found.json()).toMatchObject({ session_id: held.session_id, agent: "tenth" });

		await upsertJobIndex(env.DB, [started(9)]);
		const wide = await call(`/v1/sessions/ses-${day}`);
		expect(wide.status).toBe(409);
		expect((await errorOf(wide)).message).toContain("fits jobs of more agents than the 10 a lookup asks");
	});
});
