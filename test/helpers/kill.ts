import { env, runInDurableObject } from "cloudflare:test";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";

type Internals = { env: Env; ctx: DurableObjectState };

/**
 * A real kill of one agent's Durable Object: `ctx.abort()` resets it as the runtime does when it
 * dies mid-work. Its memory is gone, the work in progress fails, and the next request or alarm
 * meets a fresh instance that has only what reached SQLite. (The vitest plugin's
 * `abortAllDurableObjects` would take the test runner's own isolate down with it.)
 */
export interface KillSwitch {
	/**
	 * Kills the object; rejects, so the caller's work stops there as it would in a dead process.
	 * It first waits for the object's writes to be durable: in production a request leaves only
	 * once the output gate has opened, but a fake reached in this isolate is called before that.
	 */
	kill(): Promise<never>;
	/** How many times it has fired. */
	readonly fired: number;
}

export async function killSwitch(agent: string): Promise<KillSwitch> {
	let ctx!: DurableObjectState;
	await runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => {
		ctx = (instance as unknown as Internals).ctx;
	});
	let fired = 0;
	return {
		async kill(): Promise<never> {
			await ctx.storage.sync();
			fired++;
			ctx.abort(`killed by the test (${agent})`);
			throw new Error(`killed by the test (${agent})`);
		},
		get fired() {
			return fired;
		},
	};
}

type Method<B> = { [K in keyof B]: B[K] extends (...args: never[]) => unknown ? K : never }[keyof B];

/**
 * Kills the object the first time it calls `binding.method`: `before` the call reaches the store, or
 * `after` the store has done it but before the object learns so. A fresh instance gets the real
 * bindings back, so the kill fires once.
 */
export async function killDuring<K extends "OUTPUT" | "DB">(
	agent: string,
	binding: K,
	method: Method<Env[K]>,
	when: "before" | "after",
): Promise<KillSwitch> {
	const switcher = await killSwitch(agent);
	await runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => {
		const self = instance as unknown as Internals;
		const real = self.env[binding] as object;
		const wrapped = new Proxy(real, {
			get: (target, prop) => {
				const value = Reflect.get(target, prop) as unknown;
				if (prop !== method || typeof value !== "function") return typeof value === "function" ? value.bind(target) : value;
				return async (...args: unknown[]) => {
					if (when === "before") return switcher.kill();
					await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
					return switcher.kill();
				};
			},
		});
		self.env = { ...self.env, [binding]: wrapped };
	});
	return switcher;
}

/** Lets a fresh instance of the agent do whatever alarm work is due, as its next alarm would. */
export async function recover(agent: string): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => AgentDO.settle(instance));
}
