// Which secrets a webhook trigger may be keyed with: none drover signs what it sends with, since
// those requests are signed in the very form POST /v1/hooks checks.
import { describe, expect, it } from "vitest";
import { webhookSecretProblem } from "../../src/config/readiness.ts";

const KEY = "k3y-0f-its-own-0123456789abcdef";
const env = {
	TRIGGER_SECRET: KEY,
	TICKETS_URL: "https://tickets.example.test/hook",
	TICKETS_URL_SIGNING_KEY: "signs-tickets-0123456789abcdef",
	COPIED_SECRET: "signs-tickets-0123456789abcdef",
	// A partner's key, named so, with no URL secret beside it: drover signs nothing with it.
	PARTNER_SIGNING_KEY: "partner-key-0123456789abcdef",
	SHORT_SECRET: "short",
};

describe("a webhook trigger's secret", () => {
	it("verifies callers when it is long enough and drover signs nothing with it", () => {
		expect(webhookSecretProblem(env, "TRIGGER_SECRET")).toBeNull();
		expect(webhookSecretProblem(env, "PARTNER_SIGNING_KEY")).toBeNull();
	});

	it("cannot when it is unset or short", () => {
		expect(webhookSecretProblem(env, "NEVER_SET_SECRET")).toBe("is not set");
		expect(webhookSecretProblem(env, "SHORT_SECRET")).toBe("is too short to sign with (at least 16 characters)");
	});

	it("cannot when drover signs its own requests with it: a URL secret (an unsigned webhook tool's key), a URL secret's signing key, or one's value", () => {
		expect(webhookSecretProblem(env, "TICKETS_URL")).toMatch(/^holds a URL, as a URL secret does: /);
		expect(webhookSecretProblem(env, "TICKETS_URL_SIGNING_KEY")).toMatch(/^is a signing key: /);
		expect(webhookSecretProblem(env, "COPIED_SECRET")).toMatch(/^has the value of TICKETS_URL_SIGNING_KEY: /);
	});
});
