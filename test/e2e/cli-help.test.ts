// Every command's --help as a new operator reads it: in a pipe (80 columns, commander's width with no
// terminal) and on an 80-column terminal, no line past the width, the top level's exit codes included.
import stringWidth from "string-width";
import { describe, expect, it } from "vitest";
import type { Command } from "commander";
import { buildProgram } from "../../cli/program.ts";
import { runCliProcess, runOnTerminal } from "./cli-process.ts";

/** Every command's words, `incidents close` as ["incidents", "close"], the top level as []. */
function commandPaths(cmd: Command, path: string[] = []): string[][] {
	return [path, ...cmd.commands.filter((c) => c.name() !== "help").flatMap((c) => commandPaths(c, [...path, c.name()]))];
}

const tooWide = (text: string, columns: number) => text.split("\n").filter((line) => stringWidth(line) > columns);

describe("--help", () => {
	it("fits 80 columns in a pipe, every command's, a long term on its own line with its description wrapped below", async () => {
		const paths = commandPaths(buildProgram());
		expect(paths.length).toBeGreaterThan(25);
		for (const path of paths) {
			const r = await runCliProcess([...path, "--help"], {});
			expect(r.status, path.join(" ")).toBe(0);
			expect(tooWide(r.stdout, 80), `drover ${path.join(" ")} --help`).toEqual([]);
		}
		const top = await runCliProcess(["--help"], {});
		expect(top.stdout).toMatch(/^ {2}notepad \[options\] <agent> \[action\] \[key\] \[value\]\n {30,}an agent's notepad/m);
		// The exit codes, wrapped, every word of them still there.
		const exitCodes = top.stdout.slice(top.stdout.indexOf("Exit codes:")).replace(/\s+/g, " ").trim();
		expect(exitCodes).toMatch(/^Exit codes: 0 ok; 1 error .* 4 not found .* 5 the server unreachable, .* may then run twice\); 124 a --wait given up at its --wait-timeout; 130 a --wait stopped by Ctrl-C \(the job goes on, as at 124\)\.$/);
	});

	it("fits an 80-column terminal, and uses a wider one's width", async () => {
		const narrow = await runOnTerminal(["--help"], { NO_COLOR: "1" }, 80);
		expect(narrow.status).toBe(0);
		expect(tooWide(narrow.stdout, 80)).toEqual([]);
		const wide = await runOnTerminal(["--help"], { NO_COLOR: "1" }, 160);
		expect(wide.stdout).toMatch(/^ {2}--url <url> +the drover Worker's base URL \(default: "http:\/\/localhost:8787", env: DROVER_URL\)$/m);
	});

	it("status names every row an agent's status has", async () => {
		const r = await runCliProcess(["status", "--help"], {});
		expect(r.stdout.replace(/\s+/g, " ")).toContain("its state, capacity, running jobs, last job, session, open incidents, schedules and next runs");
	});
});
