// The Worker's own secret values at their edges: a binding named *_PASSWORD is a secret, a value of
// exactly 12 characters is looked for, a cut text ending on a secret's first 4 characters drops them,
// and a URL secret with a user and password has only its scheme as its public part, so a cut end
// inside its password is found. A mutation walk found each unchecked.
import { describe, expect, it } from "vitest";
import { secretPrefixFinder, secretValues } from "../../src/security/secret-values.ts";

describe("the Worker's secret values", () => {
	it("take a *_PASSWORD binding, and a value of exactly 12 characters but not of 11", () => {
		expect(secretValues({ DB_PASSWORD: "correct-horse-battery" }).words).toEqual(["correct-horse-battery"]);
		expect(secretValues({ A_TOKEN: "Zq8wXk2mPt7v", B_TOKEN: "Zq8wXk2mPt7" }).words).toEqual(["Zq8wXk2mPt7v"]);
	});
});

describe("a cut text's end that starts a secret value", () => {
	it("is found from the value's 4th character on", () => {
		const ends = secretPrefixFinder({ HOOK_SECRET: "correct-horse-battery" });
		expect(ends("the word corr")).toBe(4);
		expect(ends("the word cor")).toBe(0);
	});

	it("is found inside a URL secret's password, its user and password being no public part", () => {
		const ends = secretPrefixFinder({ BASIC_URL: "https://deploy:s3cretPassw0rd@hooks.example.test/in" });
		expect(ends("see https://deploy:s3cret")).toBe("https://deploy:s3cret".length);
		expect(ends("see https:\\/\\/deploy:s3cret")).toBe("https:\\/\\/deploy:s3cret".length);
	});
});
