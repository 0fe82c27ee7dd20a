import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { countedEnv, outboundFetch } from "../../src/shared/subrequests.ts";
import { fake } from "../helpers/outbound.ts";

describe("a counted env (what an agent's pass sends through)", () => {
	it("counts each fetch, R2 operation, D1 statement run and D1 batch once, and each still does its work", async () => {
		fake("https://counted.example.test", () => new Response("ok"));
		let made = 0;
		const counted = countedEnv(env, () => made++);

		expect(await (await outboundFetch(counted)("https://counted.example.test/a")).text()).toBe("ok");
		expect(made).toBe(1);

		await counted.OUTPUT.put("subrequests/test", "body");
		expect(await (await counted.OUTPUT.get("subrequests/test"))?.text()).toBe("body");
		await counted.OUTPUT.delete("subrequests/test");
		expect(made).toBe(4);

		// Preparing and binding send nothing; a statement that runs is one request, a batch one whatever it holds.
		await env.DB.prepare("CREATE TABLE IF NOT EXISTS subrequest_probe (name TEXT PRIMARY KEY)").run();
		const insert = counted.DB.prepare("INSERT INTO subrequest_probe (name) VALUES (?)");
		expect(made).toBe(4);
		await counted.DB.batch([insert.bind("counted-a"), insert.bind("counted-b")]);
		expect(made).toBe(5);
		const { results } = await counted.DB.prepare("SELECT name FROM subrequest_probe ORDER BY name").all<{ name: string }>();
		expect(results.map((r) => r.name)).toEqual(["counted-a", "counted-b"]);
		expect(await counted.DB.prepare("SELECT count(*) AS n FROM subrequest_probe").first("n")).toBe(2);
		expect(made).toBe(7);

		// The plain env counts nothing and fetches all the same.
		expect((await outboundFetch(env)("https://counted.example.test/b")).ok).toBe(true);
		expect(made).toBe(7);
	});

	it("counts each request of a multipart upload, and each call to another Durable Object", async () => {
		let made = 0;
		const counted = countedEnv(env, () => made++);
		const upload = await counted.OUTPUT.createMultipartUpload("subrequests/multipart");
		const part = await upload.uploadPart(1, "one part");
		const resumed = counted.OUTPUT.resumeMultipartUpload("subrequests/multipart", upload.uploadId);
		await resumed.complete([part]);
		// Create, upload a part, complete: three requests (resuming only builds a handle).
		expect(made).toBe(3);
		expect(await (await env.OUTPUT.get("subrequests/multipart"))?.text()).toBe("one part");

		// A shard dealing job ids, as an agent's registry sync or id dealing asks it: one request a call.
		const ids = await counted.SCHEDULER_SHARD.getByName("shard-9").dealJobIds(9, 2, Date.now());
		expect(ids).toHaveLength(2);
		expect(made).toBe(4);
	});
});
