import { describe, expect, it } from "vitest";
import { csvOf } from "../../src/shared/csv.ts";

describe("csvOf", () => {
	it("writes a header and a CRLF-ended line a row, in the fields' order, null and missing empty", () => {
		expect(csvOf(["day", "cost_usd", "agent"], [{ agent: "a", day: "2026-01-01", cost_usd: 0.5 }, { day: "2026-01-02", cost_usd: null }])).toBe(
			"day,cost_usd,agent\r\n2026-01-01,0.5,a\r\n2026-01-02,,\r\n",
		);
		expect(csvOf(["day"], [])).toBe("day\r\n");
	});

	it("quotes a field holding a comma, a quote or a line break, its quotes doubled (RFC 4180)", () => {
		expect(csvOf(["a", "b", "c", "d"], [{ a: "x,y", b: 'say "hi"', c: "two\nlines", d: "cr\r" }])).toBe('a,b,c,d\r\n"x,y","say ""hi""","two\nlines","cr\r"\r\n');
	});
});
