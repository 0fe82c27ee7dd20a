import * as real from "zod";
import { describe, expect, it } from "vitest";
import * as lean from "../../src/shared/zod/index.ts";

// The Worker's bundle takes src/shared/zod for "zod" (wrangler.toml's alias); everything else here
// runs the package itself. The two must differ only by the locales the alias leaves out.
const names = (ns: object) => Object.keys(ns).filter((k) => k !== "locales").sort();

describe("the bundle's zod (wrangler.toml's alias)", () => {
	it("exports what the package does, at each level, but its locales", () => {
		expect(names(lean)).toEqual(names(real));
		expect(names(lean.z)).toEqual(names(real.z));
		expect(names(lean.z.core)).toEqual(names(real.z.core));
		expect(names(lean.z.iso)).toEqual(names(real.z.iso));
		expect(names(lean.z.coerce)).toEqual(names(real.z.coerce));
		expect(lean.default).toBe(lean.z);
		expect("locales" in lean.z).toBe(false);
		expect("locales" in lean.z.core).toBe(false);
	});

	it("still says zod's English words for a value that fails", () => {
		const issues = (r: { success: boolean; error?: { issues: { message: string }[] } }) => r.error?.issues.map((i) => i.message);
		const wrong = [true, "x", { a: 1 }];
		expect(issues(lean.z.array(lean.z.string().min(2)).safeParse(wrong))).toEqual(issues(real.z.array(real.z.string().min(2)).safeParse(wrong)));
		expect(issues(lean.z.array(lean.z.string()).safeParse(wrong))?.[0]).toMatch(/^Invalid input: expected string, received boolean$/);
	});
});
