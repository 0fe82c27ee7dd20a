import { describe, expect, it } from "vitest";
import { env } from "cloudflare:test";
import { d1StorageWarning, storageWarning } from "../../src/config/storage.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

interface Viewed {
	storage_bytes: number;
	warnings: string[];
}

const viewOf = async (name: string): Promise<Viewed> => (await (await call(`/v1/agents/${name}`)).json()) as Viewed;

describe("an agent's storage", () => {
	it("is shown in bytes, and grows with the history its object keeps", async () => {
		await createAgent({ name: "storage-seen" });
		const before = await viewOf("storage-seen");
		expect(before.storage_bytes).toBeGreaterThan(0);
		expect(before.warnings).toEqual([]);
		useEmulator().enqueue({ text: "done" });
		const job = await runToRest("storage-seen", "Summarize: " + "lorem ipsum ".repeat(8_000));
		expect(job.status).toBe("completed");
		const after = await viewOf("storage-seen");
		// The job's record and conversation (its 96 KB prompt) are kept until retention prunes them.
		expect(after.storage_bytes).toBeGreaterThan(before.storage_bytes + 90_000);
		const listed = (await (await call("/v1/agents")).json()) as { agents: ({ name: string } & Viewed)[] };
		expect(listed.agents.find((a) => a.name === "storage-seen")?.storage_bytes).toBe(after.storage_bytes);
	});

	it("is warned of from 8 of the 10 GB Cloudflare allows an object, before writes fail", () => {
		expect(storageWarning(7_999_999_999)).toBeNull();
		expect(storageWarning(8_500_000_000)).toBe(
			"storage: the agent's Durable Object holds 8.5 GB of the 10 GB Cloudflare allows (writes fail past it): lower its retention_days, or run it less often",
		);
	});
});

describe("D1's storage", () => {
	it("is shown in GET /v1/status, in bytes, and grows as the job index does", async () => {
		const sizeOf = async () => ((await (await call("/v1/status")).json()) as { d1_bytes: number | null; warnings: string[] });
		const before = await sizeOf();
		expect(before.d1_bytes).toBeGreaterThan(0);
		expect(before.warnings).toEqual([]);
		// A thousand index rows, each with a summary of 500 characters: the database grows by about their size.
		const rows = Array.from({ length: 1000 }, (_, i) => env.DB.prepare("INSERT INTO jobs (id, agent, trigger_type, status, created_at, revision, summary, updated_at) VALUES (?, 'd1-size', 'manual', 'completed', ?2, 1, ?3, ?2)").bind(`job-2026-12-06-size${String(i).padStart(4, "0")}`, Date.now(), "s".repeat(500)));
		await env.DB.batch(rows);
		expect((await sizeOf()).d1_bytes!).toBeGreaterThan(before.d1_bytes! + 500_000);
	});

	it("is warned of from 8 of the 10 GB Cloudflare allows a database, before the index's writes fail", () => {
		expect(d1StorageWarning(null)).toBeNull();
		expect(d1StorageWarning(7_999_999_999)).toBeNull();
		expect(d1StorageWarning(9_100_000_000)).toBe(
			"storage: D1 holds 9.1 GB of the 10 GB Cloudflare allows a database (the job index's writes fail past it, and its lists stop moving): lower RETENTION_DAYS or agents' retention_days",
		);
	});
});
