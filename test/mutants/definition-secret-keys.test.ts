// A secret's value held as an object key of a stored definition (an input_schema property named
// with it), and the status warning's edges. The key is shown with the marker, and the warning names
// it as a key; an agent deleted through another isolate drops out of the warning, as does one whose
// name a fleet.yaml agent has; the warning names five agents and counts the rest. A mutation walk
// found each unchecked.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { agentRpc } from "../../durable-objects/agent/client.ts";
import { bundleFleetForTest } from "../../src/config/bundled.ts";
import { definitionRevision } from "../../src/config/fleet.ts";
import { heldSecretsWarning } from "../../src/security/definition-secrets-warning.ts";
import { REDACTED } from "../../src/security/redact.ts";
import { parseAgent } from "../helpers/definitions.ts";
import { call } from "../helpers/http.ts";
import { TOKENS, WEBHOOK_SECRET } from "../helpers/tokens.ts";

const heldWarning = async (): Promise<string[]> => {
	const res = await call("/v1/status");
	expect(res.status).toBe(200);
	const status = (await res.json()) as { warnings: string[]; warning_kinds: string[] };
	return status.warnings.filter((_, i) => status.warning_kinds[i] === "definition_secret");
};

afterEach(() => bundleFleetForTest(undefined));

/** Stored as an older release stored it: through the agent's own object, past the API's refusal. */
async function storeUnchecked(input: Record<string, unknown>): Promise<void> {
	const definition = parseAgent(input);
	expect(await agentRpc(env, definition.name).define(definition.name, definition, await definitionRevision(definition), null, "create", "older-release")).toHaveProperty("revision");
}

describe("an API agent stored holding a secret's value as a key", () => {
	it("is read with the marker for the key, warned of as a key, and drops out of the warning once deleted through another isolate", async () => {
		await storeUnchecked({
			name: "keyed-secret",
			prompt: "Look around.",
			tools: [{ type: "webhook", name: "file_it", description: "File it.", url_secret: "TICKETS_URL", input_schema: { type: "object", properties: { [WEBHOOK_SECRET]: { type: "string" } } } }],
		});

		const text = await (await call("/v1/agents/keyed-secret")).text();
		expect(text).not.toContain(WEBHOOK_SECRET);
		expect(text).toContain(`"${REDACTED}":{"type":"string"}`);
		expect((await heldWarning()).join(" ")).toMatch(/keyed-secret \(API: a key in tools\[0\]\.input_schema\.properties\)/);

		// Another isolate's delete reaches this one only through the registry.
		await env.DB.prepare("UPDATE agents SET deleted_at = ? WHERE name = ?").bind(Date.now(), "keyed-secret").run();
		expect(await heldWarning()).toEqual([]);
	});
});

describe("an API agent whose name a fleet.yaml agent now has", () => {
	it("is not warned of: fleet.yaml's agent of that name is the one shown", async () => {
		await storeUnchecked({ name: "shadowed", prompt: `Use ${TOKENS.read}.`, tools: [] });
		bundleFleetForTest(new TextEncoder().encode(["version: 1", "agents:", "  - name: shadowed", "    prompt: Look around.", ""].join("\n")));
		expect(await heldWarning()).toEqual([]);
	});
});

describe("the status warning", () => {
	it("names five agents and counts the others", () => {
		const held = (n: number) => Array.from({ length: n }, (_, i) => ({ agent: `a${i}`, source: "api" as const, fields: ["prompt"] }));
		expect(heldSecretsWarning(held(5))).toMatch(/a4 \(API: prompt\)\. Name the secret/);
		expect(heldSecretsWarning(held(6))).toMatch(/a3 \(API: prompt\); a4 \(API: prompt\) and 1 more \(the Worker's agent\.definition_secret lines name each\)\. /);
	});
});
