import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import path from "node:path";
import type { Writable } from "node:stream";
import { inject } from "vitest";

export const CLI = path.resolve(import.meta.dirname, "../../cli/drover.mjs");

/**
 * The run's scratch directory (global-setup removes it at the end): a test's own temporary files
 * and, as their TMPDIR, those of the CLIs and shells it runs (an edit kept after a refusal, a
 * shell's home), which would else stay in the OS's temporary directory after every run.
 */
export const SCRATCH = inject("drover").scratchDir;

/** A new directory in the run's scratch directory. */
export function scratchDir(prefix: string): string {
	return mkdtempSync(path.join(SCRATCH, prefix));
}

/**
 * Runs the real `drover` CLI in a child process with only `env` (plus PATH, no colour); killed after
 * 20 s. Its stdin is empty, or fed by `feed` (which must end it).
 */
export function runCliProcess(args: string[], env: Record<string, string>, feed?: (stdin: Writable) => Promise<void>): Promise<{ status: number | null; stdout: string; stderr: string }> {
	const child = spawn(process.execPath, [CLI, ...args], {
		env: childEnv(env),
		stdio: [feed ? "pipe" : "ignore", "pipe", "pipe"],
	});
	if (feed) void feed(child.stdin!);
	let stdout = "";
	let stderr = "";
	child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
	child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
	const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
	return new Promise((resolve) =>
		child.on("close", (status) => {
			clearTimeout(timer);
			resolve({ status, stdout, stderr });
		}),
	);
}

/** `env` plus PATH, NO_COLOR and the run's scratch directory as TMPDIR, as a child's environment. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
	// The Worker's Env types widen NodeJS.ProcessEnv; a child's environment is plain strings.
	return { PATH: process.env.PATH ?? "", NO_COLOR: "1", TMPDIR: SCRATCH, ...env } as unknown as NodeJS.ProcessEnv;
}

/**
 * Runs the real `drover` CLI on a terminal (a pseudo-terminal by script(1)), `columns` wide when
 * given, with `env` and colour left on unless `env` turns it off; its exit status and stdout, in lines
 * ending "\n" as the terminal's "\r\n".
 */
export async function runOnTerminal(args: string[], env: Record<string, string>, columns?: number): Promise<{ status: number | null; stdout: string }> {
	const quote = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;
	const cli = [process.execPath, CLI, ...args].map(quote).join(" ");
	const command = columns === undefined ? cli : `stty cols ${columns} rows 50; exec ${cli}`;
	const child = spawn("script", ["-qefc", command, "/dev/null"], { env: { ...childEnv({ TERM: "xterm", ...env }), NO_COLOR: env.NO_COLOR ?? "" }, stdio: ["ignore", "pipe", "pipe"] });
	let stdout = "";
	child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
	const [status] = await new Promise<[number | null]>((resolve) => child.on("close", (s) => resolve([s])));
	return { status, stdout: stdout.replace(/\r\n/g, "\n") };
}
