// A persistent session and the agent's tools (durable-objects/agent/runner/session.ts sameInstructions),
// where a mutation walk found the suite blind: the tests changed the system prompt, never the tools
// alone. A session never resumes under different tools either.
import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { outputOf, runToRest } from "../helpers/jobs.ts";

describe("a persistent agent given a tool between two runs, its system prompt unchanged", () => {
	it("starts a new session, saying the tools changed", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "One." }, { text: "Two." });
		const definition = { name: "session-tools", prompt: "Do the thing.", session: { mode: "persistent" } };
		await createAgent(definition);
		const first = await runToRest("session-tools", "First.");
		const put = await call("/v1/agents/session-tools", { method: "PUT", as: "admin", body: { ...definition, tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"] }] } });
		expect(put.status, await put.clone().text()).toBe(200);
		const second = await runToRest("session-tools", "Second.");
		expect(second).toMatchObject({ status: "completed", continued_from: null });
		expect(second.session_id).not.toBe(first.session_id);
		expect(JSON.stringify(emulator.requests[0]!.system)).toBe(JSON.stringify(emulator.requests[1]!.system));
		expect(emulator.requests[1]!.messages).toHaveLength(1);
		const session = (await outputOf("session-tools", second.id)).find((l) => l.subtype === "session");
		expect(session!.content).toContain("system prompt or tools changed");
	});
});
