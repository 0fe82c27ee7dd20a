// The manuals' drover command lines against the CLI's own command tree: each option written with a
// command is one that command takes. test/unit/readme-docs.test.ts checks, from the sources' text,
// that an option exists somewhere in the CLI; only the built program knows whose it is.
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../cli/program.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const readme = read("README.md");
const cliReadme = read("cli/README.md");

/** Every place a manual writes a drover command line: its shell blocks' lines, its inline `drover …` spans, cli/README.md's table heads. */
function commandLines(): string[] {
	const lines: string[] = [];
	for (const text of [readme, cliReadme]) {
		for (const block of text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
			// What follows a # is the reader's next step, often another command's: the shell part only.
			for (const line of block[1]!.split("\n")) lines.push(line.replace(/\s+#.*$/, ""));
		}
		// An incident alert's text begins `drover incident <id> on …`: a message, not a command.
		for (const [, span] of text.matchAll(/`(drover (?!incident <id> on )[^`]+)`/g)) lines.push(span!);
	}
	const table = cliReadme.slice(cliReadme.indexOf("| command | API |"));
	for (const row of table.slice(0, table.indexOf("\n\n")).split("\n").slice(2)) {
		const cell = row.split(/(?<!\\)\|/)[1] ?? "";
		// A span of options alone glosses the heads before it in its cell (`--state open`; `fork <id>`,
		// `continue <id>`, each `[--wait] …`): checked with each of them.
		const heads: string[] = [];
		for (const [, span] of cell.matchAll(/`([^`]+)`/g)) {
			if (/^[-[]/.test(span!)) heads.forEach((head, i) => (heads[i] = `${head} ${span}`));
			else heads.push(`drover ${span}`);
		}
		lines.push(...heads);
	}
	// One pipeline or list may hold several commands, and a table cell several subcommands (`cancel <id> · deny <id>`): each on its own.
	// A table's `\|` is no pipe but "or" between a command's forms (`[--json\|--yaml]`, `logs <agent> \| --job <id> …`):
	// split there, the options after it would go unchecked.
	return lines
		.map((line) => line.replaceAll("\\|", " "))
		.flatMap((line) => line.split(/\s*(?:\||&&|;|\$\()\s*/))
		.flatMap((part) => {
			const [first, ...rest] = part.trim().split(/\s+·\s+/);
			return [first!, ...rest.map((more) => (more.startsWith("drover ") ? more : `drover ${more}`))];
		})
		.filter((part) => part.startsWith("drover "));
}

/** The (sub)command a line names: the words after drover that are commands, as far as they go. */
function commandOf(program: Command, line: string): Command {
	let command = program;
	for (const word of line.split(/\s+/).slice(1)) {
		if (word.startsWith("-")) continue;
		const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
		if (!sub) break;
		command = sub;
	}
	return command;
}

describe("the manuals' drover command lines", () => {
	const program = buildProgram();
	const global = new Set(program.options.map((o) => o.long!));
	for (const given of ["--help", "--version"]) global.add(given);

	it("write with each command only options it takes (its own, or the global --url, --token, --no-color)", () => {
		const lines = commandLines();
		let flags = 0;
		const wrong: string[] = [];
		for (const line of lines) {
			const command = commandOf(program, line);
			const own = new Set(command.options.map((o) => o.long!));
			for (const [flag] of line.matchAll(/(?<=^|[\s[(])--[a-z][a-z-]*/g)) {
				flags++;
				const name = command === program ? "drover" : `drover ${command.parent === program ? "" : `${command.parent!.name()} `}${command.name()}`;
				if (!own.has(flag) && !global.has(flag)) wrong.push(`${flag} is not an option of ${name}: ${line}`);
			}
		}
		expect(wrong).toEqual([]);
		expect(lines.length).toBeGreaterThan(100);
		expect(flags).toBeGreaterThan(100);
	});

	it("name commands the CLI has: a line's first word after drover is a command", () => {
		const lines = commandLines().filter((line) => /^drover [a-z]/.test(line));
		const unknown = lines.filter((line) => commandOf(program, line) === program);
		expect(unknown).toEqual([]);
	});
});
