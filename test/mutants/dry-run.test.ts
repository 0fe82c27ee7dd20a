// A definition's dry run (src/api/agents/dry-run.ts), where a mutation walk found the suite blind: an
// automatic pause taken for an operator's (a dry run of a definition still missing its secret saying
// "it is paused (by auto) and stays so", where the write would pause it at once as before).
import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";

describe("a dry run", () => {
	it("of an agent paused automatically, for a secret still unset, says it would be paused at once, not that a pause of its own stands", async () => {
		const body = { name: "dry-auto-paused", prompt: "Go.", delivery: { type: "slack", url_secret: "DRY_AUTO_SLACK_URL" } };
		const created = await call("/v1/agents", { method: "POST", as: "admin", body });
		expect(created.status, await created.clone().text()).toBe(201);
		expect(((await created.json()) as { paused: { by: string } | null }).paused).toMatchObject({ by: "auto" });
		const dry = await call("/v1/agents/dry-auto-paused?dry_run=true", { method: "PUT", as: "admin", body: { ...body, prompt: "Go now." } });
		expect(dry.status, await dry.clone().text()).toBe(200);
		expect(((await dry.json()) as { warnings: string[] }).warnings).toEqual(["it would be paused at once, until this is mended: secret DRY_AUTO_SLACK_URL (delivery) is not set"]);
	});
});
