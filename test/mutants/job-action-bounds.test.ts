// A job action's text at its published limits, which a mutation walk found unchecked: a deny's reason
// of exactly 2,000 characters and a cancel's of exactly 500 are taken (the OpenAPI's maxLength), one
// more is a 400 naming the field. A job id no index holds shows the request got past validation (404).
import { describe, expect, it } from "vitest";
import { call, errorOf } from "../helpers/http.ts";

const NO_JOB = "job-2026-05-05-zzzzzz";

describe("a job action's text at its limit", () => {
	it("takes a deny reason of 2,000 characters and refuses one of 2,001", async () => {
		const send = (chars: number) =>
			call(`/v1/jobs/${NO_JOB}/approval`, { method: "POST", as: "operate", body: { decision: "deny", reason: "r".repeat(chars) } });
		expect((await send(2000)).status).toBe(404);
		const over = await send(2001);
		expect(over.status).toBe(400);
		expect((await errorOf(over)).details?.issues?.map((i) => i.path)).toEqual(["reason"]);
	});

	it("takes a cancel reason of 500 characters and refuses one of 501", async () => {
		const send = (chars: number) => call(`/v1/jobs/${NO_JOB}/cancel`, { method: "POST", as: "operate", body: { reason: "r".repeat(chars) } });
		expect((await send(500)).status).toBe(404);
		const over = await send(501);
		expect(over.status).toBe(400);
		expect((await errorOf(over)).details?.issues?.map((i) => i.path)).toEqual(["reason"]);
	});

	it("refuses an approve that carries a reason, rather than taking it as a deny", async () => {
		const res = await call(`/v1/jobs/${NO_JOB}/approval`, { method: "POST", as: "operate", body: { decision: "approve", reason: "looks fine" } });
		expect(res.status).toBe(400);
		const error = await errorOf(res);
		expect(error.details?.issues?.map((i) => i.path)).toEqual(["reason"]);
		expect(error.message).toContain("reason goes only with deny");
	});
});
