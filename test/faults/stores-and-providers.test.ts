import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { outputOf, runToRest } from "../helpers/jobs.ts";

type Swappable = { env: Env };

describe("the model provider misbehaving mid-stream", () => {
	it("retries a stream that drops mid-way and finishes the job", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ drop_after_events: 3 }, { text: "Second time lucky." });
		await createAgent({ name: "dropped" });
		const job = await runToRest("dropped");
		expect(job).toMatchObject({ status: "completed", summary: "Second time lucky." });
		expect(emulator.requests).toHaveLength(2);
		expect((await outputOf("dropped", job.id)).filter((l) => l.subtype === "retry")).toHaveLength(1);
	});

	it("gives up after bounded retries of malformed events and 500s, failing the job with an incident", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ malformed: true }, { error: 500 }, { drop_after_events: 2 });
		await createAgent({ name: "garbled" });
		const job = await runToRest("garbled");
		expect(job.status).toBe("failed");
		expect(job.exit_reason).toBe("error");
		expect(["network", "server"]).toContain(job.error?.type);
		expect(emulator.requests).toHaveLength(3);
		const { incidents } = (await (await call("/v1/incidents?agent=garbled")).json()) as { incidents: { state: string }[] };
		expect(incidents).toHaveLength(1);
	});
});

describe("R2 failing", () => {
	it("lets jobs finish, serves their output from the agent meanwhile, and writes R2 once it returns", async () => {
		useEmulator().enqueue({ text: "Kept safe." });
		await createAgent({ name: "r2-down" });
		const stub = env.AGENT.getByName("r2-down");
		await runInDurableObject(stub, (instance: AgentDO) => {
			const real = (instance as unknown as Swappable).env;
			const down = new Proxy(real.OUTPUT, {
				get: (target, prop) =>
					prop === "put" || prop === "createMultipartUpload"
						? () => Promise.reject(new Error("R2 unavailable"))
						: Reflect.get(target, prop),
			});
			(instance as unknown as Swappable).env = { ...real, OUTPUT: down };
		});
		const job = await runToRest("r2-down");
		expect(job.status).toBe("completed");
		expect(await env.OUTPUT.head(`jobs/r2-down/${job.id}.jsonl`)).toBeNull();
		const meanwhile = await outputOf("r2-down", job.id);
		expect(meanwhile.map((l) => l.type)).toEqual(["system", "assistant", "system"]);

		await runInDurableObject(stub, async (instance: AgentDO) => {
			(instance as unknown as Swappable).env = env;
			await AgentDO.settle(instance);
		});
		const object = await env.OUTPUT.get(`jobs/r2-down/${job.id}.jsonl`);
		expect(object).not.toBeNull();
		expect((await object!.text()).trimEnd().split("\n").map((l) => JSON.parse(l).type)).toEqual(["system", "assistant", "system"]);
	});
});
