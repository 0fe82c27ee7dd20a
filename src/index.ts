export { AgentDO } from "../durable-objects/agent/agent-do.ts";
export default {
	async fetch() {
		return new Response("ok");
	},
} satisfies ExportedHandler<Env>;
