import { describe, expect, it, vi } from "vitest";
import { ApiClient, ApiError, CliError, errorFrom, exitCodeOf, NoAnswerError, outcomeCode } from "../../cli/client.ts";
import { shapes } from "../../cli/shapes.ts";
import { fake, outboundLog } from "../helpers/outbound.ts";

// The CLI's HTTP client (cli/client.ts) as a script and a person see it: the exit code each answer
// ends with, the message and hint, what is sent. The e2e files run it through the real commands
// against a local drover; here each rule is pinned where it is made, against fakes of the server.

const URL_ = "http://drover.example.test";
const client = (url = URL_, token: string | undefined = "tok-0123") => new ApiClient({ url, token });

/** The error `run` fails with (a test of an error that is not thrown fails here). */
async function failure(run: Promise<unknown>): Promise<CliError> {
	const err = await run.then(
		() => null,
		(e: unknown) => e,
	);
	if (!(err instanceof CliError)) throw new Error(`expected a CliError, got ${String(err)}`);
	return err;
}
function constructionError(url: string): CliError {
	try {
		new ApiClient({ url, token: "t" });
	} catch (err) {
		if (err instanceof CliError) return err;
		throw err;
	}
	throw new Error(`${url} was taken`);
}
/** A fetch failure as undici gives one: "fetch failed", the system's code on its cause. */
const networkError = (code: string, message = `connect ${code} 127.0.0.1:8787`) => Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error(message), { code }) });
const apiError = (status: number, code: string, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
	Response.json({ error: { code, message, ...extra } }, { status, headers });

describe("exit codes", () => {
	it("are 4 for a 404, 5 for a 5xx, a 429 or a 408, 1 for any other refusal", () => {
		expect([404, 500, 502, 503, 429, 408, 400, 401, 403, 409, 412, 413].map((s) => exitCodeOf(s))).toEqual([4, 5, 5, 5, 5, 5, 1, 1, 1, 1, 1, 1]);
	});

	it("are 1 for a 500 config_invalid: the Worker's own configuration, which no retry mends until its operator does", async () => {
		expect(exitCodeOf(500, "config_invalid")).toBe(1);
		expect(exitCodeOf(500, "internal")).toBe(5);
		fake(URL_, () => apiError(500, "config_invalid", "fleet.yaml is invalid: agents.0.schedule: expected a cron"));
		expect(await failure(client().fetch("/v1/tick", { method: "POST" }))).toMatchObject({ exitCode: 1, status: 500, code: "config_invalid" });
	});

	it("of a job's outcome: 0 completed, 2 cancelled, 1 failed or indeterminate", () => {
		expect(["completed", "cancelled", "failed", "indeterminate"].map(outcomeCode)).toEqual([0, 2, 1, 1]);
	});

	it("of an answer carry through ApiError: a 404 of drover's is 4, its 503 5", async () => {
		fake(URL_, (req) => (new URL(req.url).pathname === "/v1/jobs/x" ? apiError(404, "not_found", "no job x") : apiError(503, "unavailable", "try later")));
		expect(await failure(client().fetch("/v1/jobs/x"))).toMatchObject({ exitCode: 4, status: 404, message: "no job x" });
		expect(await failure(client().fetch("/v1/status"))).toMatchObject({ exitCode: 5, status: 503 });
	});
});

describe("the base URL", () => {
	it("is refused, exit 2, when empty or blank, saying so", () => {
		for (const url of ["", "  "]) expect(constructionError(url)).toMatchObject({ exitCode: 2, message: "--url/DROVER_URL is empty" });
	});

	it("without its scheme is refused, the bare host echoed with http://", () => {
		expect(constructionError("localhost:8787")).toMatchObject({ exitCode: 2, message: "--url/DROVER_URL must include the scheme, http:// or https://", hint: "include the scheme, e.g. http://localhost:8787" });
	});

	it("of another scheme is refused; https is taken", () => {
		expect(constructionError("ftp://drover.example.test")).toMatchObject({ exitCode: 2, message: "--url/DROVER_URL must be http(s), not ftp:" });
		expect(client("https://drover.example.test").url).toBe("https://drover.example.test");
	});

	it("with a password alone, a bare ? or a bare # is refused, never echoed", () => {
		const withPassword = constructionError("http://:s3cret@drover.example.test");
		expect(withPassword.message).toBe("--url/DROVER_URL must not carry credentials (user:password@)");
		expect(constructionError("http://drover.example.test/?").message).toBe("--url/DROVER_URL must not carry a query string or fragment (?… or #…)");
		expect(constructionError("http://drover.example.test/#").message).toBe("--url/DROVER_URL must not carry a query string or fragment (?… or #…)");
	});

	it("ending in /v1 (in any case) is refused, naming the origin to use", () => {
		expect(constructionError("http://drover.example.test/base/V1/")).toMatchObject({ exitCode: 2, hint: "use http://drover.example.test/base" });
	});

	it("with a trailing slash gets the API's paths once, without a double slash", async () => {
		fake(URL_, () => Response.json({}));
		await client(`${URL_}/`).fetch("/v1/status");
		expect(outboundLog.map((r) => r.url)).toEqual([`${URL_}/v1/status`]);
	});
});

describe("the token", () => {
	it("is sent as a bearer token, and not to a route that needs none", async () => {
		const seen: (string | null)[] = [];
		fake(URL_, (req) => (seen.push(req.headers.get("authorization")), Response.json({})));
		await client().fetch("/v1/status");
		await client().fetch("/healthz", { auth: false });
		expect(seen).toEqual(["Bearer tok-0123", null]);
	});

	it("set but empty is no token: said before any request", async () => {
		const err = await failure(client(URL_, "").fetch("/v1/status"));
		expect(err).toMatchObject({ exitCode: 1, message: "no API token" });
		expect(outboundLog).toEqual([]);
	});

	it("given as a whole API_TOKENS entry is said so after a 401", async () => {
		fake(URL_, () => apiError(401, "unauthorized", "invalid token"));
		expect((await failure(client(URL_, "ci:admin:abc").fetch("/v1/status"))).hint).toMatch(/^DROVER_TOKEN \(or --token\) looks like a whole API_TOKENS entry/);
		expect((await failure(client(URL_, "ci:operate:abc").fetch("/v1/status"))).hint).toMatch(/looks like a whole API_TOKENS entry/);
		expect((await failure(client(URL_, "plain-token").fetch("/v1/status"))).hint).toMatch(/^check DROVER_TOKEN \(or --token\)/);
	});
});

describe("hints after a refusal", () => {
	const hintOf = async (res: () => Response) => {
		fake(URL_, res);
		return (await failure(client().fetch("/v1/x"))).hint;
	};

	it("401 says to check DROVER_TOKEN, 403 to use a stronger role", async () => {
		expect(await hintOf(() => apiError(401, "unauthorized", "no"))).toMatch(/^check DROVER_TOKEN/);
		expect(await hintOf(() => apiError(403, "forbidden", "no"))).toMatch(/^this needs a token with a stronger role/);
		expect(await hintOf(() => apiError(409, "conflict", "no"))).toBeNull();
	});

	it("an agent paused by hand names drover resume; one that paused itself says it resumes on its own", async () => {
		expect(await hintOf(() => apiError(409, "agent_paused", "agent triage is paused: by ops"))).toBe("resume it with: drover resume triage");
		expect(await hintOf(() => apiError(409, "agent_paused", "agent triage is paused: auto: delivery target unset"))).toMatch(/^it paused itself/);
	});

	it("a changed definition names --allow-definition-change; a job with no plain-text log names logs --job", async () => {
		expect(await hintOf(() => apiError(409, "definition_changed", "the agent changed; pass allow_definition_change"))).toBe("to run it under the agent's current definition anyway, add --allow-definition-change");
		expect(await hintOf(() => apiError(404, "not_found", "job job-2026-12-07-abcdef keeps no plain-text log (GET …/output)"))).toBe("drover logs --job job-2026-12-07-abcdef prints its output");
	});
});

describe("no answer", () => {
	it("from the default URL, refused, is exit 5, nothing sent, asking whether drover runs", async () => {
		fake("http://localhost:8787", () => {
			throw networkError("ECONNREFUSED");
		});
		const err = await failure(new ApiClient({ url: "http://localhost:8787", token: "t" }).fetch("/v1/status"));
		expect(err).toBeInstanceOf(NoAnswerError);
		expect(err).toMatchObject({ exitCode: 5, sent: false, message: "cannot reach http://localhost:8787: connect ECONNREFUSED 127.0.0.1:8787", hint: "is drover running? set DROVER_URL (or --url) to its address" });
	});

	it("says the system's code when its message does not, and whether the request may have arrived", async () => {
		const cases: [string, string, boolean][] = [
			["ENOTFOUND", "getaddrinfo failed", false],
			["ECONNRESET", "other side closed", true],
		];
		for (const [code, message, sent] of cases) {
			fake(URL_, () => {
				throw networkError(code, message);
			});
			expect(await failure(client().fetch("/v1/jobs", { method: "POST" }))).toMatchObject({ exitCode: 5, sent, message: `cannot reach ${URL_}: ${code}: ${message}`, hint: null });
		}
	});

	it("is waited for 30 s a request, and without end for a stream (null)", async () => {
		fake(URL_, () => Response.json({}));
		const timeouts = vi.spyOn(AbortSignal, "timeout");
		try {
			await client().fetch("/v1/status");
			await client().fetch("/v1/jobs/x/stream", { timeoutMs: null });
			expect(timeouts.mock.calls).toEqual([[30_000]]);
		} finally {
			timeouts.mockRestore();
		}
	});

	it("within the timeout may have arrived, and says it timed out", async () => {
		fake(URL_, () => {
			throw new DOMException("The operation was aborted due to timeout", "TimeoutError");
		});
		expect(await failure(client().fetch("/v1/jobs", { method: "POST" }))).toMatchObject({ exitCode: 5, sent: true, message: `cannot reach ${URL_}: timed out` });
	});

	it("https:// to a plain-HTTP server says to use http://, exit 1", async () => {
		fake("https://drover.example.test", () => {
			throw networkError("ERR_SSL_WRONG_VERSION_NUMBER", "wrong version number");
		});
		expect(await failure(client("https://drover.example.test").fetch("/v1/status"))).toMatchObject({ exitCode: 1, hint: expect.stringMatching(/use http:\/\/drover\.example\.test$/) });
	});

	it("a certificate this machine does not trust is exit 1, not worth a retry", async () => {
		fake("https://drover.example.test", () => {
			throw networkError("DEPTH_ZERO_SELF_SIGNED_CERT", "self-signed certificate");
		});
		const err = await failure(client("https://drover.example.test").fetch("/v1/status"));
		expect(err).not.toBeInstanceOf(NoAnswerError);
		expect(err).toMatchObject({ exitCode: 1, hint: expect.stringMatching(/^its TLS certificate is not one this machine trusts/) });
	});
});

describe("an error answer", () => {
	it("that is not drover's JSON error is one line, exit 1, for a 4xx; a 5xx, 429 or 408 stays an HTTP error, exit 5", async () => {
		fake(URL_, (req) => {
			const status = Number(new URL(req.url).pathname.slice(1));
			return new Response("<html>\n  <body>gateway</body>\n</html>", { status, statusText: status === 502 ? "Bad Gateway" : "", headers: { "content-type": "text/html; charset=utf-8" } });
		});
		expect(await failure(client().fetch("/404?limit=1"))).toMatchObject({ exitCode: 1, message: `${URL_} does not answer as a drover API (GET /404: answered 404 text/html, not drover's JSON error)` });
		expect(await failure(client().fetch("/502"))).toMatchObject({ exitCode: 5, message: "HTTP 502 Bad Gateway: <html> <body>gateway</body> </html>" });
		for (const status of [500, 429, 408]) expect(await failure(client().fetch(`/${status}`))).toMatchObject({ exitCode: 5, status });
	});

	it("cuts a long page to 200 characters", async () => {
		fake(URL_, () => new Response("x".repeat(500), { status: 503 }));
		expect((await failure(client().fetch("/v1/status"))).message).toBe(`HTTP 503: ${"x".repeat(200)}`);
	});

	it("of another API of a like shape, without drover's string code, is not taken for drover's", async () => {
		fake(URL_, () => Response.json({ type: "error", error: { type: "not_found_error", message: "model: x" } }, { status: 404 }));
		expect(await failure(client().fetch("/v1/jobs"))).toMatchObject({ exitCode: 1, message: expect.stringMatching(/does not answer as a drover API/) });
	});

	it("keeps a request id of the usual shape, and the Retry-After", async () => {
		const id = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
		const err = await errorFrom(apiError(429, "rate_limited", "slow down", { request_id: id }, { "retry-after": "30" }));
		expect(err).toMatchObject({ exitCode: 5, requestId: id, retryAfterMs: 30_000 });
	});

	it("is still the answer when the caller accepts its status (GET /healthz's 503)", async () => {
		fake(URL_, () => Response.json({ ok: false }, { status: 503 }));
		expect((await client().fetch("/healthz", { auth: false, accept: [503] })).status).toBe(503);
	});
});

describe("details.issues", () => {
	const messageOf = async (message: string, issues: unknown[]) => (await errorFrom(apiError(400, "invalid", message, { details: { issues } }))).message;
	const two = [
		{ path: "a", message: "x" },
		{ path: "b", message: "y" },
	];

	it("are listed one a line under the message's own prefix", async () => {
		expect(await messageOf("invalid body: a: x; b: y", two)).toBe("invalid body:\n  - a: x\n  - b: y");
		expect(await messageOf("a: x; b: y", two)).toBe("invalid request:\n  - a: x\n  - b: y");
	});

	it("leave a message with one issue, or one that names each issue already, as it is", async () => {
		expect(await messageOf("invalid param: id: must be a job id", [{ path: "id", message: "must be a job id" }])).toBe("invalid param: id: must be a job id");
		expect(await messageOf("bad file:\n  - a: x\n  - b: y", two)).toBe("bad file:\n  - a: x\n  - b: y");
	});

	it("are added to a message that names only some of them", async () => {
		expect(await messageOf("invalid: a: x", two)).toBe("invalid: a: x:\n  - a: x\n  - b: y");
	});

	it("without a path are shown by their message; only those with a path and a message are kept as issues", async () => {
		const issues = [{ path: "", message: "x" }, { message: "y" }, { path: "c", message: "z" }];
		const err = await errorFrom(apiError(400, "invalid", "bad", { details: { issues } }));
		expect(err.message).toBe("bad:\n  - x\n  - y\n  - c: z");
		expect(err.issues).toEqual([
			{ path: "", message: "x" },
			{ path: "c", message: "z" },
		]);
	});
});

describe("answers", () => {
	it("without a field the CLI reads are not drover's, in one line naming it", async () => {
		fake(URL_, () => Response.json({}));
		expect(await failure(client().json("/v1/jobs", shapes.jobPage))).toMatchObject({ exitCode: 1, message: `${URL_} does not answer as a drover API (GET /v1/jobs: missing \`jobs\`)` });
	});

	it("of another media type than asked are not drover's; the type is read in any case", async () => {
		fake(URL_, (req) => (new URL(req.url).pathname === "/json" ? Response.json({ ok: true }) : new Response('{"a":1}\n', { headers: { "content-type": "Application/X-NDJSON; charset=utf-8" } })));
		expect(await failure(client().text("/json", "application/x-ndjson"))).toMatchObject({ message: `${URL_} does not answer as a drover API (GET /json: answered application/json, not application/x-ndjson)` });
		expect(await client().text("/out", "application/x-ndjson")).toBe('{"a":1}\n');
	});

	it("of a GET asked again are revalidated: the kept answer's tag sent back, a 304 read as it, a changed one read whole", async () => {
		const tags: (string | null)[] = [];
		let body = { jobs: [], next_cursor: null, n: 1 };
		fake(URL_, (req) => {
			const tag = req.headers.get("if-none-match");
			tags.push(tag);
			if (tag === `"${body.n}"`) return new Response(null, { status: 304 });
			return Response.json(body, { headers: { etag: `"${body.n}"` } });
		});
		const c = client();
		expect(await c.answer("/v1/jobs", shapes.jobPage)).toEqual({ status: 200, value: body });
		expect(await c.answer("/v1/jobs", shapes.jobPage)).toEqual({ status: 200, value: body });
		body = { jobs: [], next_cursor: null, n: 2 };
		expect((await c.json("/v1/jobs", shapes.jobPage)) as unknown).toEqual(body);
		expect(tags).toEqual([null, '"1"', '"1"']);
	});

	it("of a POST are never revalidated", async () => {
		const tags: (string | null)[] = [];
		fake(URL_, (req) => (tags.push(req.headers.get("if-none-match")), Response.json({ deleted: 1 }, { headers: { etag: '"1"' } })));
		const c = client();
		await c.json("/v1/x", shapes.deleted, { method: "POST" });
		await c.json("/v1/x", shapes.deleted, { method: "POST" });
		expect(tags).toEqual([null, null]);
	});

	it("send a body as JSON", async () => {
		const seen: [string | null, string][] = [];
		fake(URL_, async (req) => (seen.push([req.headers.get("content-type"), await req.text()]), Response.json({ deleted: 1 })));
		await client().json("/v1/x", shapes.deleted, { method: "POST", body: { a: 1 } });
		expect(seen).toEqual([["application/json", '{"a":1}']]);
	});
});

describe("ApiError", () => {
	it("is what an error answer of drover's throws", async () => {
		fake(URL_, () => apiError(409, "conflict", "no"));
		expect(await failure(client().fetch("/v1/x"))).toBeInstanceOf(ApiError);
	});
});
