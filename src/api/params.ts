import { z } from "@hono/zod-openapi";
import { AGENT_NAME_PATTERN } from "../config/schema.ts";

export const AgentNameParam = z
	.string()
	.regex(AGENT_NAME_PATTERN, "must be an agent name: lowercase letters, digits and dashes, starting with a letter or digit")
	.openapi({ example: "daily-digest" });
