import { env } from "cloudflare:test";
import { afterEach, describe, expect, expectTypeOf, it, vi } from "vitest";
import { resolveSecretUrl, scrubSecretUrl } from "../../src/delivery/secret-url.ts";
import { sendAlert } from "../../src/incidents/alert.ts";
import type { Incident } from "../../src/store/incidents.ts";
import { fake, outboundLog } from "../helpers/outbound.ts";

afterEach(() => vi.restoreAllMocks());

const incident: Incident = {
	id: "inc_0001",
	agent: "flaky",
	signature: "sig",
	class: "model",
	state: "detected",
	error: "boom",
	count: 1,
	first_seen_at: "2026-12-05T10:00:00.000Z",
	last_seen_at: "2026-12-05T10:00:00.000Z",
	last_job_id: null,
	alerted_at: null,
	resolved_at: null,
	closed_at: null,
	closed_by: null,
	failing: ["schedule:nightly"],
};

function captureLogs(): string[] {
	const logged: string[] = [];
	for (const method of ["log", "warn", "error"] as const) {
		vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(" ")));
	}
	return logged;
}

const withAlertUrl = (value: string) => ({ ...env, ALERT_WEBHOOK_URL: value }) as Env;

describe("the alert webhook URL, a secret", () => {
	it("is not fetched, nor quoted, when it is not an http(s) URL", async () => {
		const logged = captureLogs();
		const fetchSpy = vi.spyOn(globalThis, "fetch");
		expect(await sendAlert(withAlertUrl("alerts.example.test/T0/SECRETPATH-no-scheme"), incident, `${incident.id}:1`)).toBe(false);
		expect(fetchSpy).not.toHaveBeenCalled();
		expect(outboundLog).toEqual([]);
		const text = logged.join("\n");
		const line = logged.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.event === "incident.alert_not_configured");
		expect(line).toMatchObject({ incident: incident.id, error_message: "ALERT_WEBHOOK_URL does not hold an http(s) URL" });
		expect(text).not.toContain("SECRETPATH");
	});

	it("is cut out of the log line when the request fails with an error that quotes it, as written or normalised", async () => {
		const logged = captureLogs();
		fake("https://alerts.example.test", (req) => {
			throw new TypeError(`connection reset by ${req.url}`);
		});
		// The runtime quotes the URL it parsed: a lowercased host, not the secret as written.
		for (const url of ["https://alerts.example.test/T0/SECRETPATH-abc", "https://ALERTS.example.test/T0/SECRETPATH-abc"]) {
			expect(await sendAlert(withAlertUrl(url), incident, `${incident.id}:1`)).toBe(false);
		}
		const text = logged.join("\n");
		expect(text).toContain("incident.alert_failed");
		expect(text).toContain("connection reset by <url>");
		expect(text).not.toContain("SECRETPATH");
		expect(outboundLog).toHaveLength(2);
	});

	it("still alerts when it is a working URL, with the idempotency key and without following redirects", async () => {
		const seen: Request[] = [];
		fake("https://alerts.example.test", (req) => {
			seen.push(req);
			return new Response("ok");
		});
		expect(await sendAlert(withAlertUrl("https://alerts.example.test/drover"), incident, `${incident.id}:1`)).toBe(true);
		expect(seen.map((r) => [r.method, r.url, r.headers.get("idempotency-key"), r.redirect])).toEqual([["POST", "https://alerts.example.test/drover", "inc_0001:1", "manual"]]);
	});

	it("is a field of Env: listed, empty, in .dev.vars.example, so `npm run types` generates it (checked by tsc)", () => {
		expectTypeOf<Env>().toHaveProperty("ALERT_WEBHOOK_URL").toEqualTypeOf<string>();
	});

	it("is off, silently and without a request, when unset or empty", async () => {
		const logged = captureLogs();
		expect(await sendAlert(withAlertUrl(""), incident, `${incident.id}:1`)).toBe(false);
		expect(await sendAlert({ ...env, ALERT_WEBHOOK_URL: undefined } as unknown as Env, incident, `${incident.id}:1`)).toBe(false);
		expect(outboundLog).toEqual([]);
		expect(logged).toEqual([]);
	});
});

describe("resolveSecretUrl and scrubSecretUrl", () => {
	it("sort a secret's value and cut it out of a message", () => {
		expect(resolveSecretUrl(undefined)).toEqual({ kind: "missing" });
		expect(resolveSecretUrl("")).toEqual({ kind: "missing" });
		expect(resolveSecretUrl("ftp://x.test/")).toEqual({ kind: "not-http" });
		expect(resolveSecretUrl("not a url")).toEqual({ kind: "not-http" });
		expect(resolveSecretUrl("https://x.test/a")).toEqual({ kind: "url", url: "https://x.test/a" });
		// As written, normalised (a trailing slash added), and redacted on top.
		expect(scrubSecretUrl("failed https://x.test and https://x.test/ with Bearer abcdef123456", "https://x.test")).toBe("failed <url> and <url> with Bearer [REDACTED]");
		expect(scrubSecretUrl("failed https://x.test/s3cret", "https://x.test/s3cret", "<webhook url>")).toBe("failed <webhook url>");
	});
});
