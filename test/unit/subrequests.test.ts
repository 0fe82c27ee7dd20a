import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { countedEnv, outboundFetch, SubrequestBudget } from "../../src/shared/subrequests.ts";
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

	it("counts a statement that runs after its values are bound: how almost every query is made", async () => {
		let made = 0;
		const counted = countedEnv(env, () => made++);
		await env.DB.prepare("CREATE TABLE IF NOT EXISTS subrequest_bound (name TEXT PRIMARY KEY)").run();
		const bound = counted.DB.prepare("INSERT INTO subrequest_bound (name) VALUES (?)").bind("bound-a");
		expect(made).toBe(0);
		await bound.run();
		expect(await counted.DB.prepare("SELECT name FROM subrequest_bound WHERE name = ?").bind("bound-a").first("name")).toBe("bound-a");
		expect(made).toBe(2);
	});

	it("counts a call to another agent's object", async () => {
		let made = 0;
		const counted = countedEnv(env, () => made++);
		const page = await counted.AGENT.getByName("subrequest-peer").sessions(5);
		expect(page.sessions).toEqual([]);
		expect(made).toBe(1);
	});
});

describe("an invocation's subrequest budget", () => {
	it("plans 80 % of the limit, rounded down, and has none left, never fewer than none, once that is made", () => {
		// 80 % of 11 is 8.8: the share stays under the limit's 80 %, never above it.
		const budget = new SubrequestBudget(11);
		expect(budget.left).toBe(8);
		// A step under way goes past the share (a model call and its tool's outputs): the pass reads
		// `left === 0` to hand over, so past the share is none left, not a negative count.
		budget.note(7);
		expect(budget.left).toBe(1);
		budget.note(3);
		expect(budget.left).toBe(0);
		expect(new SubrequestBudget(10_000).left).toBe(8_000);
	});
});
