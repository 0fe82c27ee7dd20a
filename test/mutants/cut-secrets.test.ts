// A text a cap cut short, at the credentials whose start only the cut's own rules see: a temporary
// AWS key id (ASIA), a URL's password cut before its "@", short or longer than a small window, a
// JWT cut inside its second part; and a text ending on "password=", which holds no secret and keeps
// its end. A mutation walk found each unchecked.
import { describe, expect, it } from "vitest";
import { redactCut } from "../../src/security/cut.ts";

describe("redactCut", () => {
	it("drops a temporary AWS key id's cut end, keeping its ASIA prefix", () => {
		expect(redactCut("id: ASIAQ3EGT7XY")).toBe("id: ASIA[REDACTED]");
	});

	it("drops a URL's password cut before its @, however long the cut piece is", () => {
		expect(redactCut("deploy to https://deploy:s3cretPassw0rd")).toBe("deploy to https://[REDACTED]");
		expect(redactCut(`deploy to https://deploy:${"s3cretPassw0rd".repeat(10)}`)).toBe("deploy to https://[REDACTED]");
	});

	it("drops a JWT cut inside its claims", () => {
		const out = redactCut("token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6");
		expect(out).toBe("token [REDACTED]");
	});

	it("keeps a cut text that ends on a field name, with no secret in it", () => {
		expect(redactCut("config: password=")).toBe("config: password=");
	});
});
