import { afterEach, describe, expect, it } from "vitest";
import { bundleFleetForTest, findAgent } from "../../src/config/bundled.ts";
import { definitionRevision } from "../../src/config/fleet.ts";
import { settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, runToRest, trigger } from "../helpers/jobs.ts";
import { ticketTool } from "../helpers/tools.ts";

afterEach(() => bundleFleetForTest(undefined));

const NAME = "deployed-while-queued";
/** fleet.yaml with one agent, as a deploy bundles it: each call is a deploy, its definitions new to the isolate. */
const deploy = (systemPrompt: string) =>
	bundleFleetForTest(new TextEncoder().encode(JSON.stringify({ version: 1, agents: [{ name: NAME, prompt: "Look around.", system_prompt: systemPrompt, tools: [ticketTool] }] })));

// pass.ts doWork and revisions.ts knownRevision: a pass knows the file agent's revision before it
// starts a queued run, which records the definition it started on (README: definition_revision).
describe("a file agent's run queued across a deploy", () => {
	it("starts on the deployed definition and says so: its definition_revision is the new one", async () => {
		deploy("Version A.");
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		// Its one slot is held by a run waiting for a human; the next waits behind it.
		const holder = await runToRest(NAME);
		expect(holder.status).toBe("approval_pending");
		const queued = await trigger(NAME);
		await settle(NAME);
		expect((await jobOf(NAME, queued.id)).status).toBe("pending");
		const before = await definitionRevision(findAgent(NAME)!);
		expect(queued.definition_revision).toBe(before);

		// A deploy changes the agent while its run waits; the pass that then frees the slot starts it.
		deploy("Version B.");
		const after = await definitionRevision(findAgent(NAME)!);
		expect(after).not.toBe(before);
		emulator.enqueue({ text: "Ran on B." });
		expect((await call(`/v1/jobs/${holder.id}/cancel`, { method: "POST", as: "operate", body: {} })).status).toBe(200);
		await settle(NAME);

		expect(await jobOf(NAME, queued.id)).toMatchObject({ status: "completed", summary: "Ran on B.", definition_revision: after });
		expect(JSON.stringify(emulator.requests.at(-1)!.system)).toContain("Version B.");
		const manifest = (await (await call(`/v1/jobs/${queued.id}/manifest`)).json()) as { definition_revision: string };
		expect(manifest.definition_revision).toBe(after);
	});
});
