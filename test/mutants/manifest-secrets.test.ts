// A job's manifest shows its tools as the Messages API was sent them: a tool's description that holds a
// Worker secret's value (an agent stored by an older release, before such values were refused) is
// shown with the marker, as its definition and system blocks are. A mutation walk found the tools
// unchecked: the manifest test's agent had none.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { agentRpc } from "../../durable-objects/agent/client.ts";
import { definitionRevision } from "../../src/config/fleet.ts";
import { REDACTED } from "../../src/security/redact.ts";
import { parseAgent } from "../helpers/definitions.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

// A value of the Worker's secrets (vitest.config.mts's bindings).
const TICKETS_URL = "https://tickets.example.test/hook";

describe("a job's manifest of an agent whose tool holds a secret's value", () => {
	it("shows the tool's description with the marker, never the value", async () => {
		const definition = parseAgent({
			name: "leaky-tool",
			prompt: "Look around.",
			tools: [{ type: "webhook", name: "create_ticket", description: `Posts to ${TICKETS_URL} for you.`, url_secret: "TEST_TICKETS_URL" }],
		});
		const stored = await agentRpc(env, definition.name).define(definition.name, definition, await definitionRevision(definition), null, "create", "older-release");
		expect(stored).toHaveProperty("revision");
		useEmulator().enqueue({ text: "Done." });
		const job = await runToRest("leaky-tool", "Check.");
		const res = await call(`/v1/jobs/${job.id}/manifest`);
		const text = await res.clone().text();
		expect(res.status, text).toBe(200);
		expect(text).not.toContain("tickets.example.test/hook");
		const manifest = (await res.json()) as { tools: { name: string; description: string }[] };
		expect(manifest.tools.find((t) => t.name === "create_ticket")?.description).toBe(`Posts to ${REDACTED} for you.`);
	});
});
