import { AgentSchema, type AgentDefinition } from "../../src/config/schema.ts";
import { ConfigError } from "../../src/errors.ts";
import { issuesOf } from "../../src/shared/zod-issues.ts";

/**
 * One agent's definition validated by the fleet file's rules, defaults filled in, for a test that
 * needs one outside a request; an invalid one throws the ConfigError fleet.yaml's check would.
 */
export function parseAgent(input: unknown): AgentDefinition {
	const result = AgentSchema.safeParse(input);
	if (!result.success) {
		const issues = issuesOf(result.error);
		throw new ConfigError(`agent definition is invalid:\n${issues.map((i) => `  - ${i.path}: ${i.message}`).join("\n")}`, issues);
	}
	return result.data;
}
