import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ApiError, CliError } from "./client.ts";
import type { Context } from "./context.ts";
import { printable, shellWord } from "./format.ts";

/**
 * Refuses, before any request, to open vi, the editor no one chose, without a terminal on stdin and
 * stdout: in a script (cron, CI, ssh) it waited forever for keys from a stdin left open, and drew its
 * screen into a stdout redirected to a file. An editor set in VISUAL or EDITOR is run as set, with or
 * without a terminal: one that edits the file it is given (EDITOR='sed -i …') is how a script edits.
 */
export function requireEditor(ctx: Context, what: string, instead: string): void {
	if (process.env.VISUAL || process.env.EDITOR) return;
	if (ctx.stdinIsTTY && ctx.stdoutIsTTY) return;
	throw new CliError(`${what} opens vi (neither VISUAL nor EDITOR is set), which needs a terminal, and ${ctx.stdinIsTTY ? "stdout" : "stdin"} is not one: nothing was opened`, 2, `in a script, ${instead}, or set EDITOR to a command that edits the file it is given`);
}

/** Runs $VISUAL or $EDITOR (vi when neither is set) on the file, as a shell would ("code --wait" is a command and its option). */
export async function runEditor(file: string): Promise<void> {
	const editor = process.env.VISUAL || process.env.EDITOR || "vi";
	const child = spawn(`${editor} ${shellWord(file)}`, { shell: true, stdio: "inherit" });
	const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
	if (code !== 0) throw new CliError(`the editor (${printable(editor)}) ${signal ? `was ended by ${signal}` : `exited with status ${code}`}; nothing was sent`);
}

/**
 * An edit's file, in a directory of its own: `use` is run with its path and it is removed after,
 * except when `use` failed with the file's text (as `read` takes it) no longer `original`: then it
 * is kept and named in the error, so no edit is lost to a refusal or a change made meanwhile.
 */
export async function inEditFile<T>(name: string, original: string, read: (text: string) => string, use: (file: string) => Promise<T>): Promise<T> {
	const dir = await mkdtemp(path.join(tmpdir(), "drover-edit-"));
	const file = path.join(dir, name);
	try {
		const result = await use(file);
		await rm(dir, { recursive: true, force: true });
		return result;
	} catch (err) {
		const left = await readFile(file, "utf8").then(read, () => original);
		if (left !== original && err instanceof CliError) {
			const kept = `your edit is kept in ${shellWord(file)}`;
			// Still the API's error, so its request id is printed after a 5xx.
			if (err instanceof ApiError) throw new ApiError(err.status, err.code, err.message, kept, err.requestId);
			throw new CliError(err.message, err.exitCode, kept);
		}
		await rm(dir, { recursive: true, force: true });
		throw err;
	}
}
