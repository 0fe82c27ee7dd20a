// `drover help <words>`: the help of the command the words name, however deep, and a word naming no
// command the usage error `drover <word>` is.
import { describe, expect, it } from "vitest";
import { runCliProcess } from "./cli-process.ts";

describe("drover help", () => {
	it("a word that names no command is a usage error, as drover <word> is, with its did-you-mean", async () => {
		for (const [args, said] of [
			[["help", "nosuch"], "drover: unknown command 'nosuch'\n(add --help for usage)\n"],
			[["help", "jbos"], "drover: unknown command 'jbos'\n(Did you mean jobs?)\n(add --help for usage)\n"],
			[["help", "incidents", "nosuch"], "drover: unknown command 'nosuch'\n(add --help for usage)\n"],
			[["incidents", "help", "nosuch"], "drover: unknown command 'nosuch'\n(add --help for usage)\n"],
		] as const) {
			const r = await runCliProcess([...args], {});
			expect(r.status, args.join(" ")).toBe(2);
			expect(r.stdout, args.join(" ")).toBe("");
			expect(r.stderr, args.join(" ")).toBe(said);
		}
		expect((await runCliProcess(["jbos"], {})).stderr).toBe("drover: unknown command 'jbos'\n(Did you mean jobs?)\n(add --help for usage)\n");
	});

	it("shows a subcommand's own help, as its --help does", async () => {
		const help = await runCliProcess(["help", "incidents", "close"], {});
		expect(help.status).toBe(0);
		expect(help.stdout).toMatch(/^Usage: drover incidents close \[options\] <id>\n/);
		expect(help.stdout).toBe((await runCliProcess(["incidents", "close", "--help"], {})).stdout);
		expect((await runCliProcess(["help", "incidents"], {})).stdout).toBe((await runCliProcess(["incidents", "--help"], {})).stdout);
		expect((await runCliProcess(["help"], {})).stdout).toBe((await runCliProcess(["--help"], {})).stdout);
	});

	it("takes the help word after a command with subcommands of its own, as git's and kubectl's do", async () => {
		// Commander adds its own `help` only to a command without an action, and `incidents` lists.
		const help = await runCliProcess(["incidents", "help", "close"], {});
		expect(help.status).toBe(0);
		expect(help.stderr).toBe("");
		expect(help.stdout).toBe((await runCliProcess(["incidents", "close", "--help"], {})).stdout);
		expect((await runCliProcess(["incidents", "help"], {})).stdout).toBe((await runCliProcess(["incidents", "--help"], {})).stdout);
	});
});
