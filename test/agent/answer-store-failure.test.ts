import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { jobOf, outputOf, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";

describe("an answer that could not be stored", () => {
	it("leaves no output lines for it: the step asked again writes its lines once", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response("all green", { headers: { "content-type": "text/plain" } }));
		const askTool = { tool_use: { name: "http_fetch", input: { url: "https://status.example.test/" } } };
		const firstAnswer = { tool_use: { name: "http_fetch", input: { url: "https://status.example.test/lost" } } };
		emulator.enqueue(firstAnswer, askTool, { text: "All green." });
		await createAgent({ name: "store-fails", tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"] }] });
		const stub = env.AGENT.getByName("store-fails");
		// Storing the model's first answer fails (a storage fault); the answer to the step asked again is stored.
		await runInDurableObject(stub, (_i: AgentDO, state) => {
			state.storage.sql.exec("CREATE TRIGGER store_fails BEFORE INSERT ON messages WHEN NEW.role = 'assistant' AND NEW.content LIKE '%/lost%' BEGIN SELECT RAISE(ABORT, 'storage fault'); END");
		});
		const job = await trigger("store-fails", "Check the status page.");
		for (let i = 0; i < 5; i++) {
			await settle("store-fails").catch(() => {});
			// Not once it has ended: an ended job's step made due (next_step_at 0) is work its object sets an alarm for, left to fire after the test.
			if ((await jobOf("store-fails", job.id)).status === "completed") break;
			await runInDurableObject(stub, (_i: AgentDO, state) => void state.storage.sql.exec("UPDATE job_setup SET next_step_at = 0 WHERE job_id = ?", job.id));
		}

		expect(await jobOf("store-fails", job.id)).toMatchObject({ status: "completed", summary: "All green." });
		const lines = await outputOf("store-fails", job.id);
		const types = lines.map((l) => l.type).filter((t) => t === "assistant" || t === "tool_use" || t === "tool_result");
		// The stored answer's lines, once: none for the answer lost with the fault.
		expect(types).toEqual(["assistant", "tool_use", "tool_result", "assistant"]);
		const calls = await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.sql.exec<{ tool_use_id: string }>("SELECT tool_use_id FROM tool_calls WHERE job_id = ?", job.id).toArray().map((r) => r.tool_use_id));
		const uses = lines.filter((l) => l.type === "tool_use").map((l) => l.tool_use_id);
		expect(uses).toEqual(calls);
	});
});
