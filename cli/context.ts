import { InvalidArgumentError, type Command } from "commander";
import { ApiClient, DEFAULT_URL } from "./client.ts";
import { paint, wantsColor, type Paint } from "./format.ts";

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
	return {
		client: new ApiClient({ url: g.url ?? DEFAULT_URL, token: g.token }),
		p: paint(wantsColor(process.stdout, process.env, color)),
		ep: paint(wantsColor(process.stderr, process.env, color)),
		// A pseudo-terminal without a size reports 0 columns: treat it as unknown.
		width: process.stdout.isTTY && process.stdout.columns > 0 ? process.stdout.columns : undefined,
		stdoutIsTTY: process.stdout.isTTY === true,
		stderrIsTTY: process.stderr.isTTY === true,
		stdinIsTTY: process.stdin.isTTY === true,
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
