import { app } from "./app.ts";
import { runTick } from "./scheduler/tick.ts";

export { AgentDO } from "../durable-objects/agent/agent-do.ts";
export { SchedulerShardDO } from "../durable-objects/shard/shard-do.ts";

export default {
	fetch: app.fetch,
	async scheduled(controller, env) {
		await runTick(env, controller.scheduledTime);
	},
} satisfies ExportedHandler<Env>;
