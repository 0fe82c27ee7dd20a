import { describe, expect, it } from "vitest";
import { REDACTED, isSensitiveKey, redact, redactDeep } from "../../src/security/redact.ts";
import { redactCut } from "../../src/security/cut.ts";
import { secretPrefixFinder, secretValueReplacer, secretValues } from "../../src/security/secret-values.ts";

// Fabricated, well-formed but never-issued credentials. Built from pieces at run time so that this file
// itself does not trip secret scanners on push.
const rep = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
const B62 = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz";
const ANT_BODY = rep(B62 + "-_", 95);
const JWT = ["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"].join(".");
const PEM_BODY = `${rep("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 64)}\n${rep("kqhkiG9w0BAQEFAASCBKcwggSjAgEAAo", 64)}\n${rep("Zx9", 20)}==`;

/** [label, text containing the secret, the secret part that must be gone, optional expected output]. */
const SECRETS: [string, string, string, string?][] = [
	["anthropic api key", `key is sk-ant-api03-${ANT_BODY} ok`, ANT_BODY.slice(0, 30), `key is sk-ant-api03-${REDACTED} ok`],
	["anthropic admin key", `sk-ant-admin01-${ANT_BODY}`, ANT_BODY.slice(0, 30), `sk-ant-admin01-${REDACTED}`],
	// Not the test Worker's own key (sk-ant-test-0000000000000000), which is replaced whole, by value.
	["anthropic test-style key", "sk-ant-test-1111111111111111", "1111111111111111", `sk-ant-${REDACTED}`],
	["openai legacy key", `OPENAI_API_KEY=sk-${rep(B62, 48)}`, rep(B62, 48)],
	["openai project key", `using sk-proj-${rep(B62 + "_-", 120)}.`, rep(B62 + "_-", 120).slice(0, 40), `using sk-proj-${REDACTED}.`],
	["github classic pat", `token ghp_${rep(B62, 36)} expired`, rep(B62, 36), `token ghp_${REDACTED} expired`],
	["github oauth token", `gho_${rep(B62, 36)}`, rep(B62, 36)],
	["github app installation token", `x ghs_${rep(B62, 36)} y`, rep(B62, 36)],
	["github user-to-server / refresh", `ghu_${rep(B62, 36)} ghr_${rep("Qz8", 36)}`, rep("Qz8", 36)],
	["github fine-grained pat", `github_pat_11ABCDEFG0${rep(B62, 12)}_${rep(B62, 59)}`, rep(B62, 59), `github_pat_${REDACTED}`],
	["slack bot token", `xoxb-1234567890-1234567890123-${rep(B62, 24)}`, rep(B62, 24), `xoxb-${REDACTED}`],
	["slack user token", `"xoxp-1234567890-0987654321-1111111111-${rep("ab12", 32)}"`, rep("ab12", 32)],
	["slack app-level token", `SLACK_APP_TOKEN xapp-1-A0123456789-1234567890123-${rep("0a1b", 16)}`, rep("0a1b", 16), `SLACK_APP_TOKEN xapp-${REDACTED}`],
	["slack refresh token", `refresh with xoxe-1-My0x${rep(B62, 40)}`, rep(B62, 40), `refresh with xoxe-${REDACTED}`],
	["slack incoming webhook", `POST https://hooks.slack.com/services/T0123ABCD/B0456EFGH/${rep(B62, 24)} failed`, "B0456EFGH", `POST https://hooks.slack.com/services/${REDACTED} failed`],
	["discord webhook", `https://discord.com/api/webhooks/1234567890123456789/${rep(B62 + "-_", 68)}`, rep(B62 + "-_", 68), `https://discord.com/api/webhooks/${REDACTED}`],
	["discordapp webhook", `https://discordapp.com/api/webhooks/987654321/${rep("Tk_9", 68)}?wait=true`, rep("Tk_9", 68)],
	["aws access key id", "aws_access_key_id = AKIA" + "IOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE", `aws_access_key_id = AKIA${REDACTED}`],
	["aws temporary key id", "ASIA" + "Y34FZKBOKMUTVV7A,", "Y34FZKBOKMUTVV7A"],
	["aws secret access key", `aws_secret_access_key=${rep("wJalrXUtnFEMI/K7MDENG/bPxRfiCY", 40)}`, rep("wJalrXUtnFEMI/K7MDENG/bPxRfiCY", 40)],
	["aws secret in the credentials file's layout", `[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9aVr1234\n`, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9aVr1234", `[default]\naws_secret_access_key = ${REDACTED}\n`],
	["aws session token in the credentials file's layout", `aws_session_token = ${rep("IQoJb3JpZ2luX2Vj", 120)}`, rep("IQoJb3JpZ2luX2Vj", 120), `aws_session_token = ${REDACTED}`],
	["google api key", `https://maps.example.test/js?callback=init&v=AIza${rep("Sy9-_" + B62, 35)}`, rep("Sy9-_" + B62, 35)],
	["stripe live secret", `sk_live_${rep(B62, 24)}`, rep(B62, 24), `sk_live_${REDACTED}`],
	["stripe restricted key", `rk_live_${rep(B62, 24)}`, rep(B62, 24)],
	["stripe test secret", `stripe key sk_test_${rep("4eC39HqLyjWDarjtT1zdp7dc", 24)}`, rep("4eC39HqLyjWDarjtT1zdp7dc", 24)],
	["bearer token in prose", "called with Bearer read-token-3f9a1c7e5b2d4f60 and got 403", "read-token-3f9a1c7e5b2d4f60", `called with Bearer ${REDACTED} and got 403`],
	["bearer token of 8 characters, the shortest taken, with a digit", "called with Bearer ab3d5f7h today", "ab3d5f7h", `called with Bearer ${REDACTED} today`],
	["bearer token of 20 letters, the shortest taken without a digit", "called with Bearer abcdefghijklmnopqrst today", "abcdefghijklmnopqrst", `called with Bearer ${REDACTED} today`],
	["anthropic key of 16 characters after its prefix, the shortest taken", "key sk-ant-api03-Q1w2E3r4T5y6U7i8 in the log", "Q1w2E3r4T5y6U7i8", `key sk-ant-api03-${REDACTED} in the log`],
	["discord webhook written without its scheme", `posting to discord.com/api/webhooks/1234567890/${rep("Tk_9", 17)} failed`, rep("Tk_9", 17), `posting to discord.com/api/webhooks/${REDACTED} failed`],
	["bearer jwt in curl", `curl -H "Authorization: Bearer ${JWT}" https://api.example.test`, "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"],
	["authorization header line", "GET /v1/jobs HTTP/1.1\nAuthorization: Basic dXNlcjpodW50ZXIy\nAccept: */*", "dXNlcjpodW50ZXIy", `GET /v1/jobs HTTP/1.1\nAuthorization: ${REDACTED}\nAccept: */*`],
	["curl -v header line", "> authorization: AWS4-HMAC-SHA256 Credential=AKID/20261130/us-east-1/s3/aws4_request, Signature=fe5f80f77d5fa3beca038a248ff027", "fe5f80f77d5fa3beca038a248ff027"],
	["sigv4 in curl -H", `curl -H "Authorization: AWS4-HMAC-SHA256 Credential=AKID/20261130/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=fe5f80f77d5fa3beca038a248ff027"`, "fe5f80f77d5fa3beca038a248ff027"],
	["inline basic auth", `fetch failed {"Authorization":"Basic dXNlcjpodW50ZXIy","Accept":"x"}`, "dXNlcjpodW50ZXIy", `fetch failed {"Authorization":"Basic ${REDACTED}","Accept":"x"}`],
	["cookie header line", "Cookie: session=9f8e7d6c5b4a; theme=dark", "9f8e7d6c5b4a"],
	["url credentials", "postgres://drover:hunter2-p@ss@db.example.test:5432/jobs", "hunter2", `postgres://${REDACTED}@db.example.test:5432/jobs`],
	["git url with token password", `https://x-access-token:ghs_${rep(B62, 36)}@github.com/o/r.git`, rep(B62, 36), `https://${REDACTED}@github.com/o/r.git`],
	["query token", "GET https://api.example.test/feed?format=json&token=abc123def456&page=2", "abc123def456", `GET https://api.example.test/feed?format=json&token=${REDACTED}&page=2`],
	["query api_key and key", "https://x.example.test/a?api_key=q1w2e3r4&key=zzz999", "q1w2e3r4"],
	["query key (second)", "https://x.example.test/a?api_key=q1w2e3r4&key=zzz999", "zzz999"],
	["presigned signature", "https://bucket.example.test/o?X-Amz-Credential=AKID%2F2026&X-Amz-Signature=0a1b2c3d4e5f&sig=qwerty", "0a1b2c3d4e5f"],
	["short sig and secret params", "https://h.example.test/?sig=qwerty123&secret=s3cr3t", "s3cr3t"],
	["oauth fragment", "https://app.example.test/cb#access_token=ya29.a0AfH6SMBx&expires_in=3599", "ya29.a0AfH6SMBx"],
	["pem private key", `here:\n-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----\ndone`, "MIIEvQIBADAN", `here:\n-----BEGIN PRIVATE KEY-----${REDACTED}-----END PRIVATE KEY-----\ndone`],
	["rsa pem, JSON-escaped", `{"private_key":"-----BEGIN RSA PRIVATE KEY-----\\n${PEM_BODY.replaceAll("\n", "\\n")}\\n-----END RSA PRIVATE KEY-----\\n"}`, "kqhkiG9w0BAQ"],
	["truncated pem", `key: -----BEGIN EC PRIVATE KEY-----\n${PEM_BODY.slice(0, 150)}`, PEM_BODY.slice(20, 60)],
	["jwt bare", `id_token ${JWT} issued`, "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ", `id_token ${REDACTED} issued`],
	["password in connection string", "Server=db;User Id=drover;Password=Tr0ub4dor&3;", "Tr0ub4dor"],
	["json api_key", `upstream said {"api_key": "k-9f8e7d6c5b4a3210", "ok": false}`, "k-9f8e7d6c5b4a3210"],
	["x-api-key inline", `headers x-api-key: k_live_9f8e7d6c5b4a and more`, "k_live_9f8e7d6c5b4a"],
	["client_secret yaml", "client_secret: 7Hq-2mZ_pL9xV", "7Hq-2mZ_pL9xV"],
	["aws secret in JSON (instance metadata, STS)", `{"AccessKeyId":"ASIA${"Y34FZKBOKMUTVV7A"}","SecretAccessKey":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9aVr1234"}`, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9aVr1234"],
	["aws session token in JSON", `{"SessionToken" : "${rep("IQoJb3JpZ2luX2Vj", 120)}"}`, rep("IQoJb3JpZ2luX2Vj", 120)],
	["env dump password", "DB_HOST=db-1\nDB_PASSWORD=Tr0ub4dor-and-3\n", "Tr0ub4dor-and-3", `DB_HOST=db-1\nDB_PASSWORD=${REDACTED}\n`],
	["env dump token", `export GITHUB_TOKEN=${"abcdef0123456789abcdef"}`, "abcdef0123456789abcdef", `export GITHUB_TOKEN=${REDACTED}`],
	// drover's own secrets' names: its tokens list, a url secret's signing key, a webhook URL whose path is the credential.
	["env dump of drover's API_TOKENS", "API_TOKENS=ci:admin:Zq8wXk2mPt7vLr4n,dash:read:Yh3uJk9oLp2iMn5b", "Yh3uJk9oLp2iMn5b", `API_TOKENS=${REDACTED}`],
	["env dump signing key", "TICKETS_WEBHOOK_URL_SIGNING_KEY=9f8e7d6c5b4a39281706f5e4", "9f8e7d6c5b4a39281706f5e4", `TICKETS_WEBHOOK_URL_SIGNING_KEY=${REDACTED}`],
	["env dump webhook url", "ALERT_WEBHOOK_URL=https://ops.example.test/hooks/Ab12Cd34Ef56Gh78", "Ab12Cd34Ef56Gh78", `ALERT_WEBHOOK_URL=${REDACTED}`],
];

// Things that look a little like secrets and are not: each must come out byte for byte.
const BENIGN = [
	"The digest agent finished in 42 seconds; 3 of 4 tools succeeded.",
	"job-2026-11-30-abc123",
	"550e8400-e29b-41d4-a716-446655440000",
	"2026-11-30T09:00:00.000Z",
	"https://example.com/docs/page?lang=en&sort=asc#section-2",
	"http://localhost:8787/v1/jobs?agent=digest&status=failed&limit=20",
	"deadbeef",
	"commit 9f2c1e0a7b3d4c5e6f708192a3b4c5d6e7f80912",
	"sha256:3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b",
	"usage: max_tokens: 1024, input_tokens=500, output_tokens=20",
	"ssh://git@github.com/drover/drover.git",
	"Bearer authentication failed: missing token",
	"401 Unauthorized: invalid x-api-key",
	"missing Authorization header",
	"ANTHROPIC_API_KEY is not set; DIGEST_SLACK_WEBHOOK_URL is not set",
	"set GITHUB_TOKEN and DB_PASSWORD before you run it; NEXT_PUBLIC_TOKEN_URL=https://example.com/t",
	"Contact ops@example.com about the task-runner-for-the-nightly-build skill.",
	"cron 0 9 * * 1-5 (Europe/Berlin)",
	"Posting to https://hooks.slack.com/ failed with 404 no_service",
	"The skeleton key=value pairs in a config file are fine.",
	"rate limited: retry-after 30s (429 Too Many Requests)",
	"emoji ✅ and ünïcödé survive — as do «quotes»",
	"a url_secret names a Worker secret, e.g. url_secret: DIGEST_SLACK_WEBHOOK_URL",
	"eyJ alone, AKIA alone, sk- alone, ghp_ alone",
	"def f(x):\n    return {'a': 1}\n",
	"missing Authorization header; send Authorization: Bearer <token>",
	'curl -H "Authorization: Bearer $TOKEN" http://localhost:8787/v1/jobs',
	"the SDK sends the key as `authorization: Bearer …` with an anthropic-version header",
	"const apiKey = config.emulator ? EMULATOR_KEY : keys[0];",
	'{"password": null, "api_key": false}',
	"",
];

describe("redact: secrets", () => {
	it("has a table of at least 25 secrets", () => {
		expect(SECRETS.length).toBeGreaterThanOrEqual(25);
	});

	it.each(SECRETS)("%s", (_label, text, secret, expected) => {
		expect(text).toContain(secret); // the fixture really holds the secret
		const out = redact(text);
		expect(out).not.toContain(secret);
		expect(out).toContain(REDACTED);
		if (expected !== undefined) expect(out).toBe(expected);
	});

	// Redaction runs on JSON text too (a tool's JSON result, a webhook payload), where a credential on
	// a new line, or after a tab, follows an escape's letter: `\nsk-ant-…`.
	// Whatever the text with a real line break or tab has redacted, its JSON has too.
	it.each(SECRETS.filter(([, text]) => !/^[\s"]/.test(text)))("%s, after a JSON escape", (_label, text, secret) => {
		for (const [char, escape] of [["\n", "\\n"], ["\t", "\\t"], ["\r", "\\r"]] as const) {
			if (redact(`see${char}${text}`).includes(secret)) continue;
			const json = JSON.stringify({ note: `see${char}${text}` });
			expect(json, escape).toContain(`see${escape}`);
			expect(redact(json), escape).not.toContain(secret);
		}
	});

	it("keeps a recognisable prefix where it identifies the kind of credential", () => {
		expect(redact(`sk-proj-${rep(B62, 60)}`)).toBe(`sk-proj-${REDACTED}`);
		expect(redact(`gho_${rep(B62, 36)}`)).toBe(`gho_${REDACTED}`);
		expect(redact(`rk_live_${rep(B62, 24)}`)).toBe(`rk_live_${REDACTED}`);
		expect(redact(`AIza${rep(B62, 35)}`)).toBe(`AIza${REDACTED}`);
		expect(redact("ASIA" + "Y34FZKBOKMUTVV7A")).toBe(`ASIA${REDACTED}`);
		expect(redact(`https://discordapp.com/api/webhooks/1/${rep("Tk_9", 68)}?wait=true`)).toBe(`https://discordapp.com/api/webhooks/${REDACTED}?wait=true`);
	});

	it("finds a secret run together with another, whose boundary appears only once the first is redacted", () => {
		const text = `AIza${rep(B62, 35)}sk_live_${rep(B62, 24)}`;
		const out = redact(text);
		expect(out).toBe(`AIza${REDACTED}sk_live_${REDACTED}`);
		expect(redact(out)).toBe(out);
	});

	it("redacts several secrets in one text", () => {
		const text = `a sk-ant-api03-${ANT_BODY} b ghp_${rep(B62, 36)} c https://u:p4ss@h.example.test d Bearer ${rep("x1", 20)}`;
		expect(redact(text)).toBe(`a sk-ant-api03-${REDACTED} b ghp_${REDACTED} c https://${REDACTED}@h.example.test d Bearer ${REDACTED}`);
	});
});

describe("redact: ordinary text", () => {
	it("has at least 15 benign strings", () => {
		expect(BENIGN.length).toBeGreaterThanOrEqual(15);
	});

	it.each(BENIGN.map((s) => [s]))("leaves %j unchanged", (text) => {
		expect(redact(text)).toBe(text);
	});
});

describe("redact: idempotence", () => {
	it.each(SECRETS.map(([label, text]) => [label, text]))("%s: redacting twice equals once", (_label, text) => {
		const once = redact(text);
		expect(redact(once)).toBe(once);
	});

	it("holds for everything concatenated, in both orders and joined without separators", () => {
		const all = [...SECRETS.map((s) => s[1]), ...BENIGN];
		for (const text of [all.join("\n"), [...all].reverse().join(" "), all.join("")]) {
			const once = redact(text);
			expect(redact(once)).toBe(once);
		}
	});

	it("leaves already-redacted markers alone", () => {
		const text = `Authorization: ${REDACTED}\nBearer ${REDACTED} sk-ant-${REDACTED} https://${REDACTED}@h/?token=${REDACTED}`;
		expect(redact(text)).toBe(text);
	});
});

describe("redactDeep", () => {
	it("redacts strings at any depth and whole values under sensitive keys, without touching the input", () => {
		const input = {
			agent: "digest",
			request: {
				url: "https://api.example.test/v1?token=abc123&page=2",
				headers: {
					Authorization: "Bearer read-token-3f9a1c7e5b2d4f60",
					"Content-Type": "application/json",
					Cookie: "session=abc",
					"X-Api-Key": "anything at all",
					"set-cookie": ["a=1", "b=2"],
				},
				body: { password: 123456, nested: [{ note: `ghp_${rep(B62, 36)}`, client_secret: { deep: "x" } }] },
			},
			usage: { max_tokens: 1024, input_tokens: 10 },
			token: null,
			secret: "",
			url_secret: "DIGEST_SLACK_WEBHOOK_URL",
			count: 3,
			ok: true,
		};
		const snapshot = structuredClone(input);
		expect(redactDeep(input)).toEqual({
			agent: "digest",
			request: {
				url: `https://api.example.test/v1?token=${REDACTED}&page=2`,
				headers: {
					Authorization: REDACTED,
					"Content-Type": "application/json",
					Cookie: REDACTED,
					"X-Api-Key": REDACTED,
					"set-cookie": REDACTED,
				},
				body: { password: REDACTED, nested: [{ note: `ghp_${REDACTED}`, client_secret: REDACTED }] },
			},
			usage: { max_tokens: 1024, input_tokens: 10 },
			token: null,
			secret: "",
			url_secret: "DIGEST_SLACK_WEBHOOK_URL",
			count: 3,
			ok: true,
		});
		expect(input).toEqual(snapshot);
	});

	it("handles arrays at the top, Headers and Maps, and keeps Dates as they are", () => {
		const headers = new Headers({ authorization: "Basic abc", "x-request-id": "req_1", accept: "text/plain" });
		const when = new Date("2026-11-30T09:00:00Z");
		const [h, m, d, s] = redactDeep([headers, new Map([["access_token", "t0k3n"], ["path", "/x?sig=1a2b"]]), when, "Bearer abcdef0123456789"] as const);
		expect(h).toBeInstanceOf(Headers);
		expect(Object.fromEntries(h)).toEqual({ authorization: REDACTED, "x-request-id": "req_1", accept: "text/plain" });
		expect([...m]).toEqual([["access_token", REDACTED], ["path", `/x?sig=${REDACTED}`]]);
		// A Map's key is text too: one holding a credential is redacted as a value would be.
		expect([...redactDeep(new Map([["https://h.example.test/?token=abc123def456", 1]]))]).toEqual([[`https://h.example.test/?token=${REDACTED}`, 1]]);
		expect(d).toBe(when);
		expect(s).toBe(`Bearer ${REDACTED}`);
	});

	it("treats key spelling loosely but whole", () => {
		for (const key of ["Authorization", "SET-COOKIE", "x_api_key", "Api-Key", "apikey", "Refresh-Token", "PRIVATE_KEY", "signing_key", "Signing-Key"]) expect(isSensitiveKey(key), key).toBe(true);
		for (const key of ["max_tokens", "tokens", "url_secret", "author", "keyword", "secrets_count"]) expect(isSensitiveKey(key), key).toBe(false);
	});

	it("survives cycles and a __proto__ key from JSON", () => {
		const a: Record<string, unknown> = { name: "a" };
		a.self = a;
		const out = redactDeep(a);
		expect(out.self).toBe(out);
		const parsed = JSON.parse('{"__proto__": {"token": "x"}, "ok": 1}') as Record<string, unknown>;
		const cleaned = redactDeep(parsed);
		expect(Object.getPrototypeOf(cleaned)).toBe(Object.prototype);
		expect(Object.keys(cleaned)).toEqual(["__proto__", "ok"]);
		expect(JSON.stringify(cleaned)).toBe(`{"__proto__":{"token":"${REDACTED}"},"ok":1}`);
	});

	it("is idempotent", () => {
		const value = { headers: { authorization: "Bearer x" }, log: SECRETS.map((s) => s[1]) };
		const once = redactDeep(value);
		expect(redactDeep(once)).toEqual(once);
	});
});

// No time is measured (the benchmarks measure speed): each input is built to make a regex go
// super-linear, which on 1 MB runs for minutes, not the ~0.1 s linear work does, and fails on the
// test's timeout like any hang. What is asserted is what redact answers, read to the end twice.
describe("redact: no catastrophic backtracking", () => {
	const MB = 1024 * 1024;

	it("redacts 1 MB of mixed log text in linear time", () => {
		const line = `2026-11-30T09:00:00Z job-2026-11-30-abc123 GET https://api.example.test/v1?page=2&token=abc123 Bearer read-token-3f9a1c7e5b2d4f60 ok\n`;
		const text = rep(line, MB);
		const out = redact(text);
		expect(out).not.toContain("3f9a1c7e5b2d4f60");
		expect(out).toContain(`Bearer ${REDACTED} ok\n`);
		expect(redact(out)).toBe(out);
	}, 60_000);

	// Inputs built to make a backtracking regex go quadratic: long runs of a pattern's own prefix and
	// body characters with the closing piece missing.
	it.each([
		["token characters", rep("a", MB)],
		["repeated sk- prefixes", rep("sk-", MB)],
		["repeated eyJ segments", rep("eyJaaaaaaaaaaa.", MB)],
		["url authority without @", `https://${rep("u:p", MB)}`],
		["many schemes", rep("a://b:", MB)],
		["many PEM begins without an end", rep("-----BEGIN PRIVATE KEY-----\nAAAA\n", MB)],
		["PEM labels", rep("-----BEGIN ", MB)],
		["authorization repeated", rep("authorization: ", MB)],
		["bearer repeated", rep("bearer ", MB)],
		["query parameters", `?${rep("token=a&", MB)}`],
		["password= repeated", rep("password=", MB)],
		["a value of closing brackets", `password=${rep(")}]", MB)}x`],
		["slack hook paths", rep("hooks.slack.com/services/", MB)],
	])("stays linear on %s", (_label, text) => {
		const out = redact(text);
		// Settled: a second pass over the whole output changes nothing.
		expect(redact(out)).toBe(out);
	}, 60_000);
});

describe("the Worker's own secrets, by value", () => {
	it("are each secret named as one whole, API_TOKENS' entries and tokens and ANTHROPIC_API_KEY's keys each too; not a public var, a value too short to tell from a word, or a passphrase's words", () => {
		const values = secretValues({
				API_TOKENS: "ci:admin:Zq8wXk2mPt7vLr4n, dash:read:Yh3uJk9oLp2iMn5b",
				ANTHROPIC_API_KEY: "sk-ant-api03-key-one-0001,sk-ant-api03-key-two-0002",
				TICKETS_URL: "https://tickets.example.test/hook/Ab12Cd34",
				TICKETS_URL_SIGNING_KEY: "9f8e7d6c5b4a39281706f5e4",
				HOOK_SECRET: "correct horse authentication battery staple",
				SHORT_SECRET: "tiny-one",
				PUBLIC_URL: "https://drover.example.workers.dev",
				RETENTION_DAYS: "30",
				SOME_SETTING: "a long plain setting value",
				BUCKET: { not: "a string" },
			});
		// The longest first, so a token inside its whole entry goes with it.
		expect(values.words.map((w) => w.length)).toEqual(values.words.map((w) => w.length).sort((a, b) => b - a));
		expect({ ...values, words: [...values.words].sort() }).toEqual({
			words: [
				"ci:admin:Zq8wXk2mPt7vLr4n, dash:read:Yh3uJk9oLp2iMn5b",
				"correct horse authentication battery staple",
				"sk-ant-api03-key-one-0001,sk-ant-api03-key-two-0002",
				"dash:read:Yh3uJk9oLp2iMn5b",
				"sk-ant-api03-key-one-0001",
				"sk-ant-api03-key-two-0002",
				"9f8e7d6c5b4a39281706f5e4",
				"ci:admin:Zq8wXk2mPt7vLr4n",
				"Zq8wXk2mPt7vLr4n",
				"Yh3uJk9oLp2iMn5b",
			].sort(),
			urls: ["https://tickets.example.test/hook/Ab12Cd34"],
		});
	});
});

describe("a URL secret's credential as its receiver quotes it", () => {
	it("is its password decoded and its Basic credential; a URL whose credential is its user alone (https://<token>@host), that user and user: in Basic", () => {
		const both = secretValues({ BASIC_URL: "https://drover-bot:p%40ss-w0rd-0123@basic.example.test/in" });
		expect(both.words).toEqual(expect.arrayContaining(["p@ss-w0rd-0123", btoa("drover-bot:p@ss-w0rd-0123")]));
		const userOnly = secretValues({ GIT_URL: "https://ghp_0a1B2c3D4e5F6g7H8i9J@git.example.test/org/repo" });
		expect(userOnly.words).toEqual(expect.arrayContaining(["ghp_0a1B2c3D4e5F6g7H8i9J", btoa("ghp_0a1B2c3D4e5F6g7H8i9J:")]));
		// A user too short to tell from a word, with no password, is no credential looked for.
		expect(secretValues({ SHORT_URL: "https://bot@short.example.test/in" }).words).toEqual([]);
	});
});

describe("redact and the test Worker's own secrets (vitest.config.mts's bindings)", () => {
	it("replaces a URL secret whole, its user and password and path with it, followed by a query, a fragment, a slash or punctuation; not as the start of a longer path", () => {
		expect(redact("posted to https://drover-bot:p%40ss-w0rd-0123@basic.example.test/in.")).toBe(`posted to ${REDACTED}.`);
		expect(redact("https://hooks.example.test/on-error?attempt=2 and https://alerts.example.test/drover/ and https://hooks.example.test/after-run#x")).toBe(
			`${REDACTED}?attempt=2 and ${REDACTED}/ and ${REDACTED}#x`,
		);
		expect(redact("filed at https://tickets.example.test/hook, then https://tickets.example.test/hook/123")).toBe(`filed at ${REDACTED}, then https://tickets.example.test/hook/123`);
	});

	it("replaces a URL secret JSON-escaped (PHP's \\/) or percent-encoded, in either case of hex; not as the start of a longer path in those spellings either", () => {
		// As a JSON encoder that escapes slashes writes it, in a tool's answer.
		expect(redact('{"hook":"https:\\/\\/hooks.example.test\\/on-error","page":"https:\\/\\/tickets.example.test\\/hook\\/123"}')).toBe(
			`{"hook":"${REDACTED}","page":"https:\\/\\/tickets.example.test\\/hook\\/123"}`,
		);
		// As a query parameter's value: `&` ends it, `%2F` and more of a path do not.
		const encoded = encodeURIComponent("https://alerts.example.test/drover");
		expect(redact(`https://app.example.test/login?next=${encoded}&x=1`)).toBe(`https://app.example.test/login?next=${REDACTED}&x=1`);
		expect(redact(`?next=${encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())}`)).toBe(`?next=${REDACTED}`);
		expect(redact(`?next=${encoded}%2Fsettings`)).toBe(`?next=${encoded}%2Fsettings`);
		// Its password's own `%40` encoded again.
		expect(redact(`?to=${encodeURIComponent("https://drover-bot:p%40ss-w0rd-0123@basic.example.test/in")}`)).toBe(`?to=${REDACTED}`);
	});

	it("replaces a URL secret percent-encoded in mixed case, twice over or in part, and JSON-escaped as \\u002f; not as the start of a longer path in those spellings either", () => {
		const twice = (url: string) => encodeURIComponent(encodeURIComponent(url));
		for (const [spelling, url] of [
			["mixed case of hex", "https%3a%2F%2falerts.example.test%2Fdrover"],
			["encoded twice (a URL in a URL's query)", twice("https://alerts.example.test/drover")],
			["Python's quote(), which keeps /", "https%3A//alerts.example.test/drover"],
			["Go's url.PathEscape, which keeps :", "https:%2F%2Falerts.example.test%2Fdrover"],
			["its password's own %40 encoded twice more", twice("https://drover-bot:p%40ss-w0rd-0123@basic.example.test/in")],
		]) {
			expect(redact(`?next=${url}&x=1`), spelling).toBe(`?next=${REDACTED}&x=1`);
		}
		expect(redact('{"hook":"https:\\u002f\\u002fhooks.example.test\\u002Fon-error"}')).toBe(`{"hook":"${REDACTED}"}`);
		for (const longer of [
			"https%3a%2F%2ftickets.example.test%2fhook%2F123",
			twice("https://tickets.example.test/hook/123"),
			"https%3A//tickets.example.test/hook/123",
			"https%3A//tickets.example.test/hook%2D2",
			'"https:\\u002f\\u002ftickets.example.test\\u002fhook\\u002f123"',
		]) {
			expect(redact(`see ${longer}.`)).toBe(`see ${longer}.`);
		}
	});

	it("replaces a URL secret as an HTML character reference spells it (&#x2F;, &#47;, &sol;, &amp;: a page an http_fetch read); not as the start of a longer path in those spellings either", () => {
		for (const [spelling, url] of [
			["hex references, as OWASP's encoders write /", "https:&#x2F;&#x2F;alerts.example.test&#x2F;drover"],
			["hex in lower case, X in upper", "https:&#X2f;&#x2f;alerts.example.test&#x2F;drover"],
			["decimal references", "https:&#47;&#47;alerts.example.test&#47;drover"],
			["named references", "https&colon;&sol;&sol;alerts.example.test&sol;drover"],
			["its password's @ and % as references", "https://drover-bot:p&#37;40ss-w0rd-0123&commat;basic.example.test/in"],
		]) {
			expect(redact(`<a href="${url}">hook</a>`), spelling).toBe(`<a href="${REDACTED}">hook</a>`);
		}
		for (const longer of ["https:&#x2F;&#x2F;tickets.example.test&#x2F;hook&#x2F;123", "https:&#47;&#47;tickets.example.test&#47;hook&#47;123", "https:&sol;&sol;tickets.example.test&sol;hook&sol;x", "https:&#x002F;&#047;tickets.example.test&#0047;hook&#x00002f;123"]) {
			expect(redact(`see ${longer}.`)).toBe(`see ${longer}.`);
		}
		const text = "<p>Tom &amp; Jerry&#39;s page: https:&#x2F;&#x2F;other.example.test&#x2F;drover, https:&#47;&#47;alerts.example.test&#47;drover2</p>";
		expect(redact(text)).toBe(text);
	});

	it("leaves a text with escapes and none of the secrets as it is", () => {
		const text = '{"text":"a\\n\\"b\\" https:\\u002f\\u002fother.example.test\\u002fdrover https%3a%2f%2falerts.example.test%2Fdrover2 https%3A//hooks.example.test/on-errors","q":"a%20b+c"}';
		expect(redact(text)).toBe(text);
	});

	it("replaces a token wherever it stands: after a JSON escape's letter, a tab, an underscore, inside a longer word", () => {
		const admin = "admin-token-6d2b8f4a1c9e7b30";
		expect(redact(`use ${admin} (root:admin:${admin})`)).toBe(`use ${REDACTED} (${REDACTED})`);
		expect(redact(`"text":"header\\nread-token-3f9a1c7e5b2d4f60"`)).toBe(`"text":"header\\n${REDACTED}"`);
		expect(redact(`a\t${admin} token_${admin} x${admin}9`)).toBe(`a\t${REDACTED} token_${REDACTED} x${REDACTED}9`);
	});

	it("replaces another deployment's API_TOKENS list in an env dump, YAML or JSON, every entry; keeps drover's own prose about it", () => {
		const list = "ci:admin:Zq8wXk2mPt7vLr4n,dash:read:Yh3uJk9oLp2iMn5b";
		expect(redact(`API_TOKENS: ${list}`)).toBe(`API_TOKENS: ${REDACTED}`);
		expect(redact(`{"API_TOKENS":"${list}"}`)).toBe(`{"API_TOKENS":"${REDACTED}"}`);
		expect(redact("API_TOKENS is invalid: API_TOKENS: no tokens configured")).toBe("API_TOKENS is invalid: API_TOKENS: no tokens configured");
	});
});

describe("a secret as other encoders spell it (secretValueReplacer)", () => {
	const phrase = "correct horse <battery> & staple='+'";
	const url = "https://hooks.example.test/in?key=Ab12Cd34Ef&sig=x+y/z";
	const replace = secretValueReplacer({ HOOK_SECRET: phrase, HOOK_URL: url })!;

	it.each([
		["Go's encoding/json (<, > and & as \\u003c…)", "correct horse \\u003cbattery\\u003e \\u0026 staple='+'"],
		[".NET's JavaScriptEncoder (' and + too, hex in upper case)", "correct horse \\u003Cbattery\\u003E \\u0026 staple=\\u0027\\u002B\\u0027"],
		["Gson (= and ' too)", "correct horse \\u003cbattery\\u003e \\u0026 staple\\u003d\\u0027+\\u0027"],
		["Python's quote_plus and form encoding (a space as +)", "correct+horse+%3Cbattery%3E+%26+staple%3D%27%2B%27"],
		["Python's quote (a space as %20)", "correct%20horse%20%3Cbattery%3E%20%26%20staple%3D%27%2B%27"],
		["encodeURIComponent (' kept)", "correct%20horse%20%3Cbattery%3E%20%26%20staple%3D'%2B'"],
		["a URL through Go's encoding/json", "https://hooks.example.test/in?key=Ab12Cd34Ef\\u0026sig=x+y/z"],
		["a URL through .NET's JavaScriptEncoder", "https://hooks.example.test/in?key=Ab12Cd34Ef\\u0026sig=x\\u002By/z"],
		["a URL through Go's url.QueryEscape", "https%3A%2F%2Fhooks.example.test%2Fin%3Fkey%3DAb12Cd34Ef%26sig%3Dx%2By%2Fz"],
		["a URL through .NET's HttpUtility.UrlEncode (lower case)", "https%3a%2f%2fhooks.example.test%2fin%3fkey%3dAb12Cd34Ef%26sig%3dx%2by%2fz"],
		["HTML-escaped as Python's html.escape writes it (&lt;, &gt;, &amp;, &#x27;)", "correct horse &lt;battery&gt; &amp; staple=&#x27;+&#x27;"],
		["HTML-escaped by a template that writes each as a decimal reference", "correct horse &#60;battery&#62; &#38; staple&#61;&#39;&#43;&#39;"],
		["HTML-escaped as PHP's htmlspecialchars writes it (' as &#039;, a leading zero)", "correct horse &lt;battery&gt; &amp; staple=&#039;+&#039;"],
		["references padded with zeros (&#x0002F;, &#0038;)", "https:&#x0002F;&#x0002F;hooks.example.test&#x002f;in?key=Ab12Cd34Ef&#0038;sig=x+y&#047;z"],
		["a URL in an href, & as &amp;", "https://hooks.example.test/in?key=Ab12Cd34Ef&amp;sig=x+y/z"],
		["a URL through an encoder that writes / as &#x2F; and & as &amp;", "https:&#x2F;&#x2F;hooks.example.test&#x2F;in?key=Ab12Cd34Ef&amp;sig=x+y&#x2F;z"],
	])("%s", (_encoder, spelt) => {
		expect(replace(`{"echo":"${spelt}","n":1}`, REDACTED)).toBe(`{"echo":"${REDACTED}","n":1}`);
	});

	it("finds a URL secret with no path spelt with references, its host in another case (its only run no encoder escapes is read in any case)", () => {
		const own = secretValueReplacer({ OPS_URL: "https://ops.example.com" })!;
		expect(own('<a href="HTTPS:&#x2F;&#x2F;OPS.Example.COM">ops</a>', REDACTED)).toBe(`<a href="${REDACTED}">ops</a>`);
		expect(own("see https:&#x2F;&#x2F;ops.example.com&#x2F;status &amp; more", REDACTED)).toBe("see https:&#x2F;&#x2F;ops.example.com&#x2F;status &amp; more");
	});

	it("finds a secret inside a URL secret that the text goes on from, with an escape elsewhere in the text", () => {
		const hook = "https://hooks.example.test/services/T0/B0/abcdefghijklmnop";
		const own = secretValueReplacer({ SLACK_URL: hook, GH_WEBHOOK_SECRET: "abcdefghijklmnop", SHORT_URL: "https://hooks.example.test/services/T0" })!;
		// The URL goes on (`&x`): it is another URL, but the token in it is the token.
		expect(own(`u ${hook}&x %2f`, REDACTED)).toBe(`u https://hooks.example.test/services/T0/B0/${REDACTED}&x %2f`);
		const prefixed = secretValueReplacer({ HOOK_URL: "https://example.test/hooks/abc123secretvalue", HOOK2_URL: "https://example.test/hooks/abc123secretvalue?sig=zzzzzz" })!;
		expect(prefixed("at https://example.test/hooks/abc123secretvalue?sig=zzzzzz&x=1 %2F", REDACTED)).toBe(`at ${REDACTED}?sig=zzzzzz&x=1 %2F`);
	});

	it("leaves a URL secret the text goes on from as another URL, with an escape elsewhere in the text too, redacting only what is inside it", () => {
		const own = secretValueReplacer({ DOCS_URL: "https://docs.example.test/api", GH_WEBHOOK_SECRET: "abcdefghijklmnop" })!;
		for (const tail of ["", " %2f"]) {
			expect(own(`see https://docs.example.test/api/abcdefghijklmnop now${tail}`, REDACTED)).toBe(`see https://docs.example.test/api/${REDACTED} now${tail}`);
			expect(own(`see https://docs.example.test/apiabcdefghijklmnop now${tail}`, REDACTED)).toBe(`see https://docs.example.test/api${REDACTED} now${tail}`);
		}
		expect(own("see https://docs.example.test/api\\u002fmore now", REDACTED)).toBe("see https://docs.example.test/api\\u002fmore now");
		expect(own("see https://docs.example.test/api&q=1 %2f", REDACTED)).toBe("see https://docs.example.test/api&q=1 %2f");
		expect(own("see https://docs.example.test/api/abcdefghijklmnop&q=1 %2f", REDACTED)).toBe(`see https://docs.example.test/api/${REDACTED}&q=1 %2f`);
	});

	it("finds a secret that runs on past the end of a URL secret, with an escape elsewhere in the text", () => {
		const own = secretValueReplacer({ DOCS_URL: "https://docs.example.test/api", TOK_SECRET: "api=abcdefghijklmnop" })!;
		for (const tail of ["", " %2f"]) {
			expect(own(`see https://docs.example.test/api=abcdefghijklmnop now${tail}`, REDACTED)).not.toContain("abcdefghijklmnop");
		}
	});

	it("leaves what is not the secret: another phrase or query in the same escapes, and text without escapes", () => {
		for (const text of [
			"correct horse \\u003cbattery\\u003e \\u0026 stable='+'",
			"correct+horse+%3Cbattery%3E",
			"https://hooks.example.test/in?key=Ab12Cd34Ef\\u0026sig=x+y/z2",
			"https%3A%2F%2Fhooks.example.test%2Fin%3Fkey%3DAb12Cd34Ef%26sig%3Dx%2By%2Fz%2Fmore",
			"correct horse battery staple, plainly",
		]) {
			expect(replace(text, REDACTED)).toBe(text);
		}
	});
});

describe("a URL secret with its scheme and host in another case (secretValueReplacer)", () => {
	const url = "https://hooks.example.test/services/T0/B0/Ab12Cd34Ef56";
	const own = secretValueReplacer({ HOOK_URL: url, BASIC_URL: "https://bot:Pw-0123456789@basic.example.test/in" })!;

	it.each([
		["as written", "HTTPS://HOOKS.EXAMPLE.TEST/services/T0/B0/Ab12Cd34Ef56"],
		["mixed case", "Https://Hooks.Example.Test/services/T0/B0/Ab12Cd34Ef56"],
		["JSON-escaped, PHP's \\/", "HTTPS:\\/\\/HOOKS.EXAMPLE.TEST\\/services\\/T0\\/B0\\/Ab12Cd34Ef56"],
		["percent-encoded", "HTTPS%3A%2F%2FHOOKS.EXAMPLE.TEST%2Fservices%2FT0%2FB0%2FAb12Cd34Ef56"],
		["with its password, the host upper-cased", "https://bot:Pw-0123456789@BASIC.EXAMPLE.TEST/in"],
	])("is replaced %s", (_how, spelt) => {
		expect(own(`{"echo":"${spelt}","n":1}`, REDACTED)).toBe(`{"echo":"${REDACTED}","n":1}`);
	});

	it("keeps a path or a user in another case: those are another URL", () => {
		for (const text of ["see https://hooks.example.test/SERVICES/T0/B0/AB12CD34EF56 now", "see https://hooks.example.test/services/T0/B0/ab12cd34ef56 %2f", "HTTPS://HOOKS.EXAMPLE.TEST/services/T0/B0/Ab12Cd34Ef56/more"]) {
			expect(own(text, REDACTED)).toBe(text);
		}
	});

	it("finds a URL with no path (only :// and dots as written) in any case, and keeps a longer one it starts", () => {
		const host = secretValueReplacer({ OPS_URL: "https://ops.example.test" })!;
		for (const spelt of ["https://ops.example.test", "HTTPS://OPS.EXAMPLE.TEST", "hTTps://Ops.Example.Test"]) {
			expect(host(`{"echo":"${spelt}","n":1}`, REDACTED)).toBe(`{"echo":"${REDACTED}","n":1}`);
		}
		for (const text of ["see https://ops.example.test/health", "see https://opsy.example.test", "see https://example.test"]) expect(host(text, REDACTED)).toBe(text);
	});
});

describe("redactCut: text a cap cut short", () => {
	it("drops a cut end that starts a secret, from a 1 MB text with no whitespace near the cut", () => {
		const text = `[${'"abc",'.repeat(180_000)}"sk-ant-api03-Q7Q7`;
		const out = redactCut(text);
		expect(out.endsWith('"abc","sk-ant-api03-[REDACTED]')).toBe(true);
		expect(out.length).toBe(text.length - 4 + REDACTED.length);
	}, 60_000);

	it.each([
		["token characters", rep("a", 1024 * 1024)],
		["url authority without @", `https://${rep("u:p", 1024 * 1024)}`],
		["repeated eyJ segments", rep("eyJaaaaaaaaaaa.", 1024 * 1024)],
		["bearer repeated", rep("bearer ", 1024 * 1024)],
	])("stays linear on %s, dropping at most its end", (_label, text) => {
		const whole = redact(text);
		const out = redactCut(text);
		expect(out.length).toBeLessThanOrEqual(whole.length + REDACTED.length);
	}, 60_000);

	it("finds a URL secret's start by its scheme and host in any case, its path as written, and not its public part", () => {
		const ends = secretPrefixFinder({ HOOK_URL: "https://hooks.example.test/services/T0/B0/Ab12Cd34Ef56", HOOK_SECRET: "correct-horse-battery" });
		expect(ends("see HTTPS://HOOKS.EXAMPLE.TEST/services/T0/B")).toBe("HTTPS://HOOKS.EXAMPLE.TEST/services/T0/B".length);
		expect(ends("see https:\\/\\/hooks.example.test\\/services\\/T0")).toBe("https:\\/\\/hooks.example.test\\/services\\/T0".length);
		expect(ends("see https%3A%2F%2Fhooks.example.test%2Fservices")).toBe("https%3A%2F%2Fhooks.example.test%2Fservices".length);
		expect(ends("the word correct-hor")).toBe("correct-hor".length);
		for (const kept of ["see https://hooks.example.test/", "see https://hooks.example.test", "see https://hooks.example.test/SERVICES/T0", "the word cor", "the word correct-horse-battery"]) {
			expect(ends(kept), kept).toBe(0);
		}
	});
});
