// A URL secret's guards at their edges: a part of exactly 12 characters is a credential, a percent-
// encoding in lower case is the URL still, a password without a user is still sent as Basic auth,
// an empty secret is unset and a reserved name is never read: a mutation walk found each unchecked.
import { describe, expect, it } from "vitest";
import { postTarget, scrubbedExcerpt, scrubSecretUrl, secretNamed, secretValue } from "../../src/delivery/secret-url.ts";

const secret = "https://hooks.example.test/services/T0AAAA/B0BBBB/Xy12Zw34Vu56";

describe("a URL secret scrubbed from a message", () => {
	it("hides a path segment of exactly 12 characters quoted on its own", () => {
		expect(scrubSecretUrl("token Xy12Zw34Vu56 is not valid", secret)).toBe("token <url> is not valid");
	});

	it("hides the URL percent-encoded with lower-case hex, as a redirect or error page may quote it", () => {
		const quoted = encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase());
		expect(quoted).toContain("%2f");
		expect(scrubSecretUrl(`redirected to /login?next=${quoted}`, secret)).toBe("redirected to /login?next=<url>");
	});

	it("drops a cut answer's last 4 characters when they begin the secret's path", () => {
		expect(scrubbedExcerpt("Cannot POST /ser", secret, "<url>", 200, true)).toBe("Cannot POST <url>");
	});
});

describe("a URL secret's value", () => {
	it("sends a password given without a user as Basic auth, not in the URL", () => {
		expect(postTarget("https://:p4ss-w0rd@hooks.example.test/in")).toEqual({ url: "https://hooks.example.test/in", headers: { authorization: `Basic ${btoa(":p4ss-w0rd")}` } });
	});

	it("is unset when empty, and never read under a name drover reserves", () => {
		expect(secretValue("")).toBeUndefined();
		expect(secretNamed({ TICKETS_URL: "" }, "TICKETS_URL")).toBeUndefined();
		expect(secretNamed({ TICKETS_URL: secret }, "TICKETS_URL")).toBe(secret);
		expect(secretNamed({ ALERT_WEBHOOK_URL: secret, DROVER_HOOK: secret }, "ALERT_WEBHOOK_URL")).toBeUndefined();
		expect(secretNamed({ DROVER_HOOK: secret }, "DROVER_HOOK")).toBeUndefined();
	});
});
