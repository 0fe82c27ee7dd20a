import { env } from "cloudflare:test";
import { expect, it } from "vitest";

it("has the D1 index migrated", async () => {
	const row = await env.DB.prepare("SELECT count(*) AS n FROM jobs").first<{ n: number }>();
	expect(row?.n).toBe(0);
});
