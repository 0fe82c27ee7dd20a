import { spawn } from "node:child_process";
import path from "node:path";
import type { Writable } from "node:stream";

export const CLI = path.resolve(import.meta.dirname, "../../cli/drover.ts");

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

/** `env` plus PATH and NO_COLOR, as a child's environment. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
	// The Worker's Env types widen NodeJS.ProcessEnv; a child's environment is plain strings.
	return { PATH: process.env.PATH ?? "", NO_COLOR: "1", ...env } as unknown as NodeJS.ProcessEnv;
}
