import { describe, expect, it } from "vitest";
import { failureReason } from "../../src/agent/tools/http-common.ts";
import { fetchErrorMessage } from "../../src/shared/fetch-error.ts";

describe("a failed fetch's message", () => {
	it("leaves out workerd's per-failure reference, so one cause reads the same each time", () => {
		const a = fetchErrorMessage(new Error("internal error; reference = d5rhueo02csgfg97pjmg65p6"));
		const b = fetchErrorMessage(new Error("internal error; reference = kt0636c2hh4ak0fi0nfccnjb"));
		expect(a).toBe("internal error");
		expect(b).toBe(a);
		expect(fetchErrorMessage(new TypeError("Network connection lost."))).toBe("Network connection lost.");
		expect(fetchErrorMessage("plain text")).toBe("plain text");
		// A word "reference" elsewhere is the message's own.
		expect(fetchErrorMessage(new Error("bad reference to host"))).toBe("bad reference to host");
	});

	it("is said so to the model by a tool", () => {
		const signal = new AbortController().signal;
		expect(failureReason(new Error("internal error; reference = dh709t4kd76jg2qqnfkfm4bu"), signal)).toBe("network error: internal error");
	});
});
