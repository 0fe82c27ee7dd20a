import { InvalidArgumentError, type Command } from "commander";
import { z } from "zod";
import { AGENT_NAME_PATTERN, AGENT_NAME_RULE, agentNameProblem } from "../src/config/agent-name.ts";
import { INCIDENT_ID_FORMAT, INCIDENT_ID_PATTERN } from "../src/incidents/id-format.ts";
import { isJobId, JOB_ID_FORMAT } from "../src/jobs/id-format.ts";
import { SESSION_ID_FORMAT, SESSION_ID_PATTERN } from "../src/jobs/session-id-format.ts";
import { ApiClient, ApiError, CliError, DEFAULT_URL } from "./client.ts";
import { paint, shellWord, wantsColor, type Paint } from "./format.ts";
import { shapes } from "./shapes.ts";
import { readStdin, withoutFinalNewline } from "./stdin.ts";

/** What every command's action gets: the API client, output with or without colour, the terminal width. */
export interface Context {
	readonly client: ApiClient;
	/** Colour for stdout and for stderr, each decided by its own stream. */
	readonly p: Paint;
	readonly ep: Paint;
	/** stdout's width when it is a terminal; undefined into a pipe (nothing is cut to fit). */
	readonly width: number | undefined;
	readonly stdoutIsTTY: boolean;
	readonly stderrIsTTY: boolean;
	readonly stdinIsTTY: boolean;
	/**
	 * The program options a command printed for the user to run next needs to reach the same Worker:
	 * --url when it was given on the command line (DROVER_URL carries over by itself). Never the
	 * token: what is printed ends up in terminals' scrollback and in logs.
	 */
	readonly globalArgs: readonly string[];
	/**
	 * A line on stdout or stderr, as it is: the data in it must already be printable (format.ts's
	 * `printable`), made so before it was styled, since drover's own colours are escape codes too.
	 */
	out(text: string): void;
	err(text: string): void;
	/** Prints a value as the API gave it: pretty JSON, one document. */
	json(value: unknown): void;
}

interface GlobalOptions {
	url?: string;
	token?: string;
	color?: boolean;
}

export function contextFor(command: Command): Context {
	const g = command.optsWithGlobals<GlobalOptions>();
	const color = g.color !== false;
	let root = command;
	while (root.parent) root = root.parent;
	return {
		client: new ApiClient({ url: g.url ?? DEFAULT_URL, token: g.token }),
		p: paint(wantsColor(process.stdout, process.env, color)),
		ep: paint(wantsColor(process.stderr, process.env, color)),
		// A pseudo-terminal without a size reports 0 columns: treat it as unknown.
		width: process.stdout.isTTY && process.stdout.columns > 0 ? process.stdout.columns : undefined,
		stdoutIsTTY: process.stdout.isTTY === true,
		stderrIsTTY: process.stderr.isTTY === true,
		stdinIsTTY: process.stdin.isTTY === true,
		globalArgs: root.getOptionValueSource("url") === "cli" && g.url !== undefined ? ["--url", g.url] : [],
		out: (text) => void process.stdout.write(`${text}\n`),
		err: (text) => void process.stderr.write(`${text}\n`),
		json: (value) => void process.stdout.write(`${JSON.stringify(value, null, 2)}\n`),
	};
}

/** The exit code the last action asked for (set by `act`, read by the entry point). */
export const outcome = { exitCode: 0 };

/**
 * Wraps an action: builds the context from the command's (and the program's) options and records
 * the exit code it returns. Errors propagate to the entry point, which prints them.
 */
export function act<A extends unknown[]>(fn: (ctx: Context, ...args: A) => Promise<number | void>): (...args: unknown[]) => Promise<void> {
	return async (...args: unknown[]) => {
		const command = args.at(-1) as Command;
		const code = await fn(contextFor(command), ...(args.slice(0, -1) as A));
		outcome.exitCode = code ?? 0;
	};
}

/** A commander argument parser for positive integers up to `max` (a bad value is a usage error). */
export function positiveInt(max: number): (value: string) => number {
	return (value: string) => {
		const n = Number(value);
		if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1 || n > max) {
			throw new InvalidArgumentError(`must be a whole number from 1 to ${max}`);
		}
		return n;
	};
}

// What GET /v1/jobs takes for since and until (src/api/jobs/job.ts's Instant): checked here too, so a
// bad one is a usage error (exit 2) before any request, as `usage`'s days are.
const INSTANT = z.union([z.iso.datetime({ offset: true }), z.iso.datetime({ offset: true, precision: -1 }), z.iso.date()]);

/** A commander parser for an instant: an ISO 8601 date-time with its offset (Z or ±hh:mm), or a date (its start, UTC). */
export function isoInstant(value: string): string {
	if (!INSTANT.safeParse(value).success) {
		throw new InvalidArgumentError("must be an ISO 8601 date-time with its offset, e.g. 2026-11-30T09:00:00Z or 2026-11-30T09:00+01:00, or a date, 2026-11-30 (its start, UTC)");
	}
	return value;
}

/**
 * A prompt given as an argument or with --prompt, either (trigger, fork, continue and sessions
 * resume take both); given both ways, a usage error, as neither can be said to win. `-` is the
 * prompt read from stdin, its one trailing newline dropped (`git log -1 --format=%B | drover
 * continue <id> -`), as `notepad set <key> -` reads a value.
 */
export async function onePrompt(argument: string | undefined, option: string | undefined): Promise<string | undefined> {
	if (argument !== undefined && option !== undefined) throw new CliError("give the prompt once: as an argument or with --prompt", 2);
	const given = argument ?? option;
	if (given !== "-") return given;
	// Only when asked (`-`): a trigger run by cron or CI, whose stdin may be a pipe left open, must
	// not wait on it for a prompt it was never given.
	const text = withoutFinalNewline(await readStdin());
	if (text.trim() === "") throw new CliError("the prompt read from stdin (-) is empty", 2);
	return text;
}

/** A job id argument: one the API would refuse as malformed is a usage error (exit 2) before any request. */
export function jobIdArg(value: string): string {
	if (!isJobId(value)) throw new InvalidArgumentError(`not a job id: a job id is ${JOB_ID_FORMAT}`);
	return value;
}

/**
 * Why `name` is no agent name, or null for one: the API's own pattern and its account of the
 * character at fault (src/config/agent-name.ts), so a name it would refuse as a path parameter
 * ("invalid param: agent") is said before any request, as the user gave it.
 */
export function agentNameError(name: string): string | null {
	if (AGENT_NAME_PATTERN.test(name)) return null;
	return `must be ${AGENT_NAME_RULE}; it ${agentNameProblem(name)}`;
}

/** Why `id` is no session id (nor a prefix of one), or null: the API's own pattern (src/jobs/session-id-format.ts). */
export function sessionIdError(id: string): string | null {
	return SESSION_ID_PATTERN.test(id) ? null : `a session id is ${SESSION_ID_FORMAT}, in a-z, 0-9 and -`;
}

/** An incident id argument: one the API would refuse as malformed is a usage error (exit 2) before any request. */
export function incidentIdArg(given: string): string {
	// Lower case, as drover lists them: one typed or pasted in capitals is the same id (as job and session ids).
	const value = given.toLowerCase();
	if (!INCIDENT_ID_PATTERN.test(value)) throw new InvalidArgumentError(`not an incident id: an incident id is ${INCIDENT_ID_FORMAT}, its agent's name's first 6 characters (or fewer), _ and 12 of 0-9 and a-f, as drover incidents lists them`);
	return value;
}

/**
 * A commander parser for an argument that becomes one segment of a request's path (an agent name,
 * a job id, a notepad key). An empty value would address the collection instead ("no route for PUT
 * /v1/agents/a/notepad/"), and "." or ".." would be resolved away by URL parsing, sending the
 * request to another route altogether: both are usage errors, caught before any request.
 */
export function pathSegment(value: string): string {
	if (value === "") throw new InvalidArgumentError("must not be empty");
	if (value === "." || value === "..") throw new InvalidArgumentError(`cannot be "${value}": a URL path cannot carry it`);
	return value;
}

/**
 * The command that fetches the page after this one, for the "more:" hint: the same command and
 * arguments, every filter and the limit that produced this page, and the cursor, each word quoted
 * for a shell. `options` lists [flag, value] pairs; an undefined value (a filter not given) is left out.
 */
export function nextPageCommand(ctx: Context, words: readonly string[], options: readonly (readonly [string, string | number | undefined])[], cursor: string): string {
	const args = [...ctx.globalArgs, ...words];
	for (const [flag, value] of options) if (value !== undefined) args.push(flag, String(value));
	args.push("--cursor", cursor);
	return ["drover", ...args.map(shellWord)].join(" ");
}

/**
 * Fails with the API's 404 (`no agent named …`, exit 4) unless `name` is, or was, an agent: a list
 * filtered by a mistyped agent is empty as an idle agent's is, and the CLI tells them apart. A
 * deleted agent passes: its history stays readable. Asked of the agent's jobs route, which answers
 * so (GET /v1/agents/:agent is a 404 for a deleted agent).
 */
export async function requireKnownAgent(ctx: Context, name: string): Promise<void> {
	await ctx.client.json(`/v1/agents/${encodeURIComponent(name)}/jobs`, shapes.jobPage, { query: { limit: 1 } });
}

/**
 * Whether an agent is still defined: GET /v1/agents/:agent is a 404 once it is deleted (or removed
 * from fleet.yaml), while its jobs stay listed. Any other failure is thrown.
 */
export async function agentExists(ctx: Context, name: string): Promise<boolean> {
	try {
		await ctx.client.json(`/v1/agents/${encodeURIComponent(name)}`, shapes.agentStatus);
		return true;
	} catch (err) {
		if (err instanceof ApiError && err.status === 404) return false;
		throw err;
	}
}
