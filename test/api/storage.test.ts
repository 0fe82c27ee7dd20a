import { describe, expect, it } from "vitest";
import { storageWarning } from "../../src/config/storage.ts";
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
