/**
 * The Messages API tool definitions an agent's runs send. They are part of the cached prompt
 * prefix, so they are built in declaration order from the definition alone: the same agent yields
 * byte-identical tools on every run.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { AgentDefinition, Tool } from "../../config/schema.ts";
import type { ToolParam } from "../contracts.ts";
import { MAX_REDIRECTS } from "./http-fetch.ts";

export const HTTP_FETCH_TOOL_NAME = "http_fetch";

/** The name the model calls a tool by: webhook tools carry their own, http_fetch is fixed. */
export function toolName(tool: Tool): string {
	if (tool.type === "server") return String(tool.definition.name);
	return tool.type === "webhook" ? tool.name : HTTP_FETCH_TOOL_NAME;
}

export function toolParams(agent: AgentDefinition): ToolParam[] {
	return agent.tools.map((tool): ToolParam => {
		if (tool.type === "server") return tool.definition as unknown as ToolParam;
		if (tool.type === "webhook") {
			// The schema refines input_schema to an object with type: "object".
			return { name: tool.name, description: tool.description, input_schema: tool.input_schema as Anthropic.Tool.InputSchema };
		}
		const methods = [...tool.methods];
		const description = [
			"Fetch a URL over HTTP(S) and return the status line, content type and body as text.",
			`Allowed hosts: ${tool.allow_hosts.join(", ")} (exact hostnames; no other hosts, IP addresses or ports).`,
			`Allowed methods: ${methods.join(", ")}.${methods.includes("POST") ? " body is sent only with POST." : ""}`,
			`Redirects are followed (up to ${MAX_REDIRECTS}) only to allowed hosts. Bodies beyond ${tool.max_response_bytes} bytes are truncated; binary bodies are described, not shown.`,
			"Authorization, Cookie, Host and Proxy-* headers are refused.",
		].join(" ");
		return {
			name: HTTP_FETCH_TOOL_NAME,
			description,
			input_schema: {
				type: "object",
				properties: {
					url: { type: "string" },
					method: { enum: methods },
					body: { type: "string" },
					headers: { type: "object", additionalProperties: { type: "string" } },
				},
				required: ["url"],
			},
		};
	});
}

export function findTool(agent: AgentDefinition, name: string): Tool | undefined {
	return agent.tools.find((tool) => toolName(tool) === name);
}

/** Whether a call to `name` waits for a human decision first; false for a tool the agent lacks. */
export function requiresApproval(agent: AgentDefinition, name: string): boolean {
	const tool = findTool(agent, name);
	return tool !== undefined && tool.type !== "server" && tool.requires_approval;
}
