import { Readable } from "node:stream";
import type { Command } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import { CliError } from "../../cli/client.ts";
import { act, agentExists, agentNameError, contextFor, incidentIdArg, isoInstant, jobIdArg, nextPageCommand, onePrompt, outcome, pathSegment, positiveInt, sessionIdError, type Context } from "../../cli/context.ts";
import { buildProgram } from "../../cli/program.ts";
import { fake } from "../helpers/outbound.ts";

// What every command gets (cli/context.ts): the client built from --url and --token (or DROVER_URL
// and DROVER_TOKEN), colour, the terminal's width, the arguments a printed command carries, and the
// argument checks that make a bad value a usage error before any request. The program is the real
// one (cli/program.ts); only the action of the command run is this test's, to catch its context.

const ENV = ["DROVER_URL", "DROVER_TOKEN", "FORCE_COLOR", "NO_COLOR"] as const;
const savedEnv = Object.fromEntries(ENV.map((k) => [k, process.env[k]]));
const savedStdin = Object.getOwnPropertyDescriptor(process, "stdin")!;
const savedStdout = { isTTY: Object.getOwnPropertyDescriptor(process.stdout, "isTTY"), columns: Object.getOwnPropertyDescriptor(process.stdout, "columns") };
afterEach(() => {
	for (const k of ENV) if (savedEnv[k] === undefined) delete process.env[k];
	else process.env[k] = savedEnv[k];
	Object.defineProperty(process, "stdin", savedStdin);
	for (const [k, d] of Object.entries(savedStdout)) if (d) Object.defineProperty(process.stdout, k, d);
	else delete (process.stdout as unknown as Record<string, unknown>)[k];
});

/** The context `drover <args> status` runs with, under `env`. */
async function contextOf(args: string[], env: Partial<Record<(typeof ENV)[number], string>> = {}): Promise<Context> {
	for (const k of ENV) delete process.env[k];
	Object.assign(process.env, env);
	const program = buildProgram();
	let ctx: Context | undefined;
	program.commands.find((c) => c.name() === "status")!.action((...a: unknown[]) => void (ctx = contextFor(a.at(-1) as Command)));
	await program.parseAsync([...args, "status"], { from: "user" });
	return ctx!;
}
const feedStdin = (text: string) => Object.defineProperty(process, "stdin", { value: Readable.from([Buffer.from(text)]), configurable: true, writable: true });
const usageError = (f: () => unknown) => {
	try {
		f();
	} catch (err) {
		return (err as Error).message;
	}
	return null;
};

describe("the client a command gets", () => {
	it("takes --url over DROVER_URL, and DROVER_URL over the default, http://localhost:8787", async () => {
		expect((await contextOf([])).client.url).toBe("http://localhost:8787");
		expect((await contextOf([], { DROVER_URL: "https://env.example.test" })).client.url).toBe("https://env.example.test");
		expect((await contextOf(["--url", "https://flag.example.test"], { DROVER_URL: "https://env.example.test" })).client.url).toBe("https://flag.example.test");
	});

	it("takes the token from --token or DROVER_TOKEN, --token first", async () => {
		expect((await contextOf([])).client.hasToken).toBe(false);
		const seen: (string | null)[] = [];
		fake("http://localhost:8787", (req) => (seen.push(req.headers.get("authorization")), Response.json({})));
		await (await contextOf([], { DROVER_TOKEN: "env-token" })).client.fetch("/v1/status");
		await (await contextOf(["--token", "flag-token"], { DROVER_TOKEN: "env-token" })).client.fetch("/v1/status");
		expect(seen).toEqual(["Bearer env-token", "Bearer flag-token"]);
	});

	it("carries --url given on the command line into printed commands, never DROVER_URL's nor the token", async () => {
		expect((await contextOf(["--url", "https://flag.example.test", "--token", "secret"])).globalArgs).toEqual(["--url", "https://flag.example.test"]);
		expect((await contextOf([], { DROVER_URL: "https://env.example.test", DROVER_TOKEN: "secret" })).globalArgs).toEqual([]);
		expect((await contextOf([])).globalArgs).toEqual([]);
	});

	it("colours as FORCE_COLOR asks, and --no-color wins over it", async () => {
		expect((await contextOf([], { FORCE_COLOR: "1" })).p.enabled).toBe(true);
		expect((await contextOf(["--no-color"], { FORCE_COLOR: "1" })).p.enabled).toBe(false);
		expect((await contextOf(["--no-color"], { FORCE_COLOR: "1" })).ep.enabled).toBe(false);
	});

	it("knows a terminal's width, and none for a terminal that reports 0 columns or for a pipe", async () => {
		Object.defineProperty(process.stdout, "isTTY", { value: true, configurable: true });
		Object.defineProperty(process.stdout, "columns", { value: 100, configurable: true });
		expect((await contextOf([])).width).toBe(100);
		Object.defineProperty(process.stdout, "columns", { value: 0, configurable: true });
		expect((await contextOf([])).width).toBeUndefined();
		Object.defineProperty(process.stdout, "isTTY", { value: false, configurable: true });
		Object.defineProperty(process.stdout, "columns", { value: 100, configurable: true });
		expect((await contextOf([])).width).toBeUndefined();
	});
});

describe("act", () => {
	it("records the exit code the action returns, 0 when it returns none", async () => {
		const fakeCommand = buildProgram();
		await act(async () => 4)(fakeCommand);
		expect(outcome.exitCode).toBe(4);
		await act(async () => {})(fakeCommand);
		expect(outcome.exitCode).toBe(0);
	});
});

describe("arguments checked before any request", () => {
	it("a positive whole number up to its maximum, written as digits only", () => {
		const limit = positiveInt(200);
		expect([limit("1"), limit("200")]).toEqual([1, 200]);
		for (const bad of ["0", "201", "1e2", "+3", " 3", "-1", "2.5", "x"]) expect(usageError(() => limit(bad)), bad).toBe("must be a whole number from 1 to 200");
	});

	it("an instant: a date-time with its offset, to the minute or the second, or a date", () => {
		for (const ok of ["2026-11-30", "2026-11-30T09:00:00Z", "2026-11-30T09:00:00+01:00", "2026-11-30T09:00+01:00"]) expect(isoInstant(ok)).toBe(ok);
		for (const bad of ["2026-11-30T09:00:00", "yesterday", "2026-13-01"]) expect(usageError(() => isoInstant(bad)), bad).toMatch(/^must be an ISO 8601 date-time/);
	});

	it("a job id, an incident id (in any case), a session id and an agent name as the API takes them", () => {
		expect(jobIdArg("job-2026-12-07-abc123")).toBe("job-2026-12-07-abc123");
		expect(usageError(() => jobIdArg("badid"))).toMatch(/^not a job id: a job id is /);
		expect(incidentIdArg("TRIAGE_0123456789AB")).toBe("triage_0123456789ab");
		expect(usageError(() => incidentIdArg("triage-0123"))).toMatch(/^not an incident id/);
		expect(sessionIdError("ses-job-2026-12-07-abc123")).toBeNull();
		expect(sessionIdError("sess-1")).toMatch(/^a session id is ses-/);
		expect(agentNameError("triage")).toBeNull();
		expect(agentNameError("Triage")).toMatch(/^must be 1-63 lowercase letters, digits or -, starting with a letter or digit; it /);
	});

	it("a path segment: not empty, not . or ..", () => {
		expect(pathSegment("key.name")).toBe("key.name");
		expect(usageError(() => pathSegment(""))).toBe("must not be empty");
		expect(usageError(() => pathSegment("."))).toBe('cannot be ".": a URL path cannot carry it');
		expect(usageError(() => pathSegment(".."))).toBe('cannot be "..": a URL path cannot carry it');
	});
});

describe("the prompt", () => {
	it("given both as an argument and with --prompt is a usage error", async () => {
		const err = await onePrompt("a", "b").catch((e: unknown) => e);
		expect(err).toBeInstanceOf(CliError);
		expect(err).toMatchObject({ exitCode: 2, message: "give the prompt once: as an argument or with --prompt" });
		expect(await onePrompt(undefined, "b")).toBe("b");
	});

	it("given as - is read from stdin, one trailing newline dropped; a blank one is a usage error", async () => {
		feedStdin("fix the build\n\n");
		expect(await onePrompt("-", undefined)).toBe("fix the build\n");
		feedStdin(" \n\t\n");
		expect(await onePrompt(undefined, "-").catch((e: unknown) => e)).toMatchObject({ exitCode: 2, message: "the prompt read from stdin (-) is empty" });
	});
});

describe("the more: hint", () => {
	it("is the same command with --url given, the filters given and the cursor, quoted for a shell", async () => {
		const ctx = await contextOf(["--url", "https://flag.example.test"]);
		const hint = nextPageCommand(ctx, ["jobs"], [["--agent", "a b"], ["--status", undefined], ["--limit", 20]], "c1");
		expect(hint).toBe("drover --url https://flag.example.test jobs --agent 'a b' --limit 20 --cursor c1");
	});
});

describe("agentExists", () => {
	it("is false for the API's 404, true for an agent, and throws anything else", async () => {
		const ctx = await contextOf(["--url", "http://drover.example.test", "--token", "t"]);
		fake("http://drover.example.test", (req) => {
			const name = new URL(req.url).pathname.split("/")[3];
			if (name === "gone") return Response.json({ error: { code: "not_found", message: "no agent named gone" } }, { status: 404 });
			if (name === "down") return Response.json({ error: { code: "unavailable", message: "down" } }, { status: 503 });
			return Response.json({ name, paused: null });
		});
		expect(await agentExists(ctx, "triage")).toBe(true);
		expect(await agentExists(ctx, "gone")).toBe(false);
		expect(await agentExists(ctx, "down").catch((e: unknown) => e)).toMatchObject({ exitCode: 5 });
	});
});
