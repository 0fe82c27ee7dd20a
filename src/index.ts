import { app } from "./app.ts";
import { configureLogLevel } from "./log.ts";
import { runTick } from "./scheduler/tick.ts";

export { AgentDO } from "../durable-objects/agent/agent-do.ts";
export { SchedulerShardDO } from "../durable-objects/shard/shard-do.ts";

export default {
	fetch(request, env, ctx) {
		configureLogLevel(env);
		return app.fetch(request, env, ctx);
	},
	async scheduled(controller, env) {
		configureLogLevel(env);
		await runTick(env, controller.scheduledTime);
	},
} satisfies ExportedHandler<Env>;
