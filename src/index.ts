import { app } from "./app.ts";

export { AgentDO } from "../durable-objects/agent/agent-do.ts";

export default {
	fetch: app.fetch,
} satisfies ExportedHandler<Env>;
