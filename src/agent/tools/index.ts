/** Runs one tool_use block of an agent's turn: dispatch by name to the tool's implementation. */
import type { AgentDefinition } from "../../config/schema.ts";
import type { ToolContext, ToolOutcome } from "../contracts.ts";
import { findTool, toolName } from "./definitions.ts";
import { httpFetch } from "./http-fetch.ts";
import { callWebhookTool } from "./webhook.ts";

export { findTool, HTTP_FETCH_TOOL_NAME, requiresApproval, toolName, toolParams } from "./definitions.ts";
export { checkUrl } from "./url-guard.ts";

/**
 * Executes the tool the model called. A tool the agent does not have is an `ok: false` result the
 * model can read and recover from, not an error that fails the job.
 */
export async function executeTool(agent: AgentDefinition, name: string, input: unknown, toolUseId: string, ctx: ToolContext): Promise<ToolOutcome> {
	const tool = findTool(agent, name);
	if (!tool) {
		const available = agent.tools.map(toolName);
		return { ok: false, content: `unknown tool "${name}"; available tools: ${available.length > 0 ? available.join(", ") : "none"}` };
	}
	if (tool.type === "http_fetch") return httpFetch(tool, input, ctx);
	// Anthropic runs server tools itself; a client-side call to one is the model's mistake.
	if (tool.type === "server") return { ok: false, content: `${name} is a server tool: Anthropic runs it, not a tool_use call` };
	return callWebhookTool(tool, input, ctx, toolUseId);
}
