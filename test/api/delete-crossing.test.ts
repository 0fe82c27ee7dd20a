import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent } from "../helpers/agents.ts";
import { gate } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";

// Two operators at once: one deletes an API agent while the other, who still sees it listed, writes
// its notepad or pauses or resumes it. The delete is decided in the agent's object, then told to D1,
// which the API's lookup reads: a write that arrives in between passes the lookup and reaches an
// object whose agent is gone. It must be refused as the agent's absence is, not answered 200.

type Held = { registry: { sync: () => Promise<void> } };

/**
 * Holds the agent object's next sync of its shard and D1 (a delete's last step) until `release`:
 * the delete is then written in the object and D1 still lists the agent. `reached` when it waits.
 */
async function holdNextSync(name: string): Promise<{ reached: Promise<void>; release: () => void }> {
	const { promise: held, open: release } = gate();
	const { promise: reached, open: arrived } = gate();
	await runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO) => {
		const registry = (instance as unknown as Held).registry;
		const real = registry.sync.bind(registry);
		registry.sync = async () => {
			registry.sync = real;
			arrived();
			await held;
			return real();
		};
	});
	return { reached, release };
}

/** Starts a DELETE of the agent and returns once its object has written it, D1 not yet told; `finish` lets it end and gives its answer. */
async function deleteHalfWay(name: string): Promise<() => Promise<Response>> {
	const { reached, release } = await holdNextSync(name);
	const deleting = call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" });
	await reached;
	return async () => {
		release();
		return deleting;
	};
}

const notepadOf = (name: string) =>
	runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => state.storage.sql.exec<{ key: string }>("SELECT key FROM notepad").toArray().map((r) => r.key));

const pausedInObject = (name: string) =>
	runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => state.storage.sql.exec<{ paused_at: number | null }>("SELECT paused_at FROM agent_state WHERE id = 1").one().paused_at);

describe("a write crossing the agent's delete", () => {
	it("a notepad write is a 404 saying the agent was deleted, and writes nothing", async () => {
		const name = "note-vs-delete";
		await createAgent({ name });
		expect((await call(`/v1/agents/${name}/notepad/before`, { method: "PUT", as: "operate", body: { value: "kept" } })).status).toBe(200);
		const finish = await deleteHalfWay(name);

		const put = await call(`/v1/agents/${name}/notepad/status`, { method: "PUT", as: "operate", body: { value: "db-1 failing over" } });
		const del = await call(`/v1/agents/${name}/notepad/before`, { method: "DELETE", as: "operate" });
		const clear = await call(`/v1/agents/${name}/notepad`, { method: "DELETE", as: "operate" });
		expect((await finish()).status).toBe(200);

		expect(put.status).toBe(404);
		expect((await errorOf(put)).message).toMatch(new RegExp(`^no agent named ${name}: it was deleted at .*; nothing was changed`));
		expect(del.status).toBe(404);
		expect(clear.status).toBe(404);
		expect(await notepadOf(name)).toEqual(["before"]);
	});

	it("a pause, a resume or a session reset is a 404 saying the agent was deleted, and changes nothing", async () => {
		const name = "pause-vs-delete";
		await createAgent({ name });
		const finish = await deleteHalfWay(name);

		const pause = await call(`/v1/agents/${name}/pause`, { method: "POST", as: "operate", body: { reason: "noisy" } });
		const resume = await call(`/v1/agents/${name}/resume`, { method: "POST", as: "operate" });
		const reset = await call(`/v1/agents/${name}/sessions/current`, { method: "DELETE", as: "operate" });
		expect((await finish()).status).toBe(200);

		expect(pause.status).toBe(404);
		expect((await errorOf(pause)).message).toMatch(new RegExp(`^no agent named ${name}: it was deleted at `));
		expect(resume.status).toBe(404);
		expect(reset.status).toBe(404);
		expect((await errorOf(reset)).message).toMatch(new RegExp(`^no agent named ${name}: it was deleted at `));
		expect(await pausedInObject(name)).toBeNull();
	});

	it("a definition edit made on the revision read before the delete is a 404 saying when it was deleted and how to define it again", async () => {
		const name = "edit-vs-delete";
		await createAgent({ name, prompt: "First." });
		const etag = (await call(`/v1/agents/${name}/definition`)).headers.get("etag")!;
		const finish = await deleteHalfWay(name);

		// Its object refuses it, then tells D1 what it holds: after the delete's own sync, held here.
		const editing = call(`/v1/agents/${name}`, { method: "PUT", as: "admin", body: { name, prompt: "Second." }, headers: { "if-match": etag } });
		expect((await finish()).status).toBe(200);
		const put = await editing;
		expect(put.status).toBe(404);
		expect((await errorOf(put)).message).toMatch(new RegExp(`^no agent named ${name}: it was deleted at [^;]+; nothing was changed; POST /v1/agents defines it again$`));
		expect((await call(`/v1/agents/${name}`)).status).toBe(404);
	});

	it("a second delete, sent at once or after, is a 404 saying when the first deleted it", async () => {
		const name = "delete-vs-delete";
		await createAgent({ name });
		const finish = await deleteHalfWay(name);

		const second = call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" });
		expect((await finish()).status).toBe(200);
		const crossed = await second;
		expect(crossed.status).toBe(404);
		expect((await errorOf(crossed)).message).toMatch(new RegExp(`^no agent named ${name}: it was deleted at [^;]+; nothing was changed$`));

		const after = await call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" });
		expect(after.status).toBe(404);
		expect((await errorOf(after)).message).toMatch(new RegExp(`^no agent named ${name}: it was deleted at `));
	});

	it("a read or a trigger of the deleted agent is a 404 saying when it was deleted, not that it never was", async () => {
		const name = "read-after-delete";
		await createAgent({ name });
		const deleted = await call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" });
		expect(deleted.status).toBe(200);
		for (const res of [await call(`/v1/agents/${name}`), await call(`/v1/agents/${name}/jobs`, { method: "POST", as: "operate", body: { prompt: "Hi." } })]) {
			expect(res.status).toBe(404);
			expect((await errorOf(res)).message).toMatch(new RegExp(`^no agent named ${name}: it was deleted at \\d{4}-\\d\\d-\\d\\dT[^ ]+Z$`));
		}
		expect((await errorOf(await call("/v1/agents/never-was"))).message).toBe("no agent named never-was");
	});

	it("a dry run of an edit of the deleted agent is the 404 the edit gets, saying when it was deleted", async () => {
		const name = "dry-edit-after-delete";
		await createAgent({ name, prompt: "First." });
		expect((await call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" })).status).toBe(200);
		const body = { name, prompt: "Second." };
		const dry = await call(`/v1/agents/${name}?dry_run=true`, { method: "PUT", as: "admin", body });
		const real = await call(`/v1/agents/${name}`, { method: "PUT", as: "admin", body });
		expect(real.status).toBe(404);
		expect(dry.status).toBe(404);
		const refused = (await errorOf(real)).message;
		expect(refused).toMatch(new RegExp(`^no agent named ${name}: it was deleted at `));
		expect((await errorOf(dry)).message).toBe(refused);
	});
});
