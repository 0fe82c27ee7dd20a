import type { Argument, Command, Option } from "commander";

/** One word the shell may put in place of the word being completed, and what it is (zsh and fish show it). */
export interface Candidate {
	value: string;
	description?: string;
}

/**
 * What the word being completed is, read from the words before it the way commander reads them:
 * the subcommand they reach, the positional argument it fills, or an option's value.
 */
export type Slot =
	| { kind: "option"; command: Command }
	| { kind: "optionValue"; command: Command; option: Option; inline?: string }
	| { kind: "positional"; command: Command; argument: Argument | undefined; before: readonly string[] };

/** The options a command takes, its own first, then the program's (--url, --token, --no-color), as a user may write them after it. */
export function optionsOf(command: Command): Option[] {
	const root = rootOf(command);
	const help = root.createHelp();
	const own = help.visibleOptions(command);
	if (command === root) return own;
	const taken = new Set(own.map((o) => o.long));
	// -V/--version is the program's alone: after a subcommand commander reads it as unknown.
	return [...own, ...help.visibleOptions(root).filter((o) => !taken.has(o.long) && o.long !== "--version" && o.long !== "--help")];
}

/** The subcommand of `command` that `word` names (its name or an alias), as commander finds it. */
export function subcommandNamed(command: Command, word: string): Command | undefined {
	return command.commands.find((c) => c.name() === word || c.aliases().includes(word));
}

export function rootOf(command: Command): Command {
	let root = command;
	while (root.parent) root = root.parent;
	return root;
}

/** `words`: what follows `drover` on the line, before the word being completed. */
export function slotOf(program: Command, words: readonly string[], current: string): Slot {
	let command = program;
	const positionals: string[] = [];
	let optionsEnded = false;
	for (let i = 0; i < words.length; i++) {
		const word = words[i]!;
		if (!optionsEnded && word === "--") {
			optionsEnded = true;
			continue;
		}
		if (!optionsEnded && word.startsWith("-") && word !== "-") {
			const option = findOption(command, word);
			// Its value is the next word, unless written --name=value (or -nVALUE).
			if (option && takesValue(option) && !word.includes("=") && !/^-[^-]./.test(word)) {
				if (i === words.length - 1) return { kind: "optionValue", command, option };
				i++;
			}
			continue;
		}
		const sub = positionals.length === 0 ? subcommandNamed(command, word) : undefined;
		if (sub) {
			command = sub;
			continue;
		}
		positionals.push(word);
	}
	if (!optionsEnded && current.startsWith("--") && current.includes("=")) {
		// --status=c: the value written after the option's =, completed as its next word would be.
		const option = findOption(command, current);
		if (option && takesValue(option)) return { kind: "optionValue", command, option, inline: current.slice(0, current.indexOf("=") + 1) };
	}
	if (!optionsEnded && current.startsWith("-")) return { kind: "option", command };
	return { kind: "positional", command, argument: argumentAt(command, positionals.length), before: positionals };
}

function argumentAt(command: Command, index: number): Argument | undefined {
	const args = command.registeredArguments;
	const last = args.at(-1);
	return args[index] ?? (last?.variadic ? last : undefined);
}

function findOption(command: Command, word: string): Option | undefined {
	const flag = word.split("=")[0]!;
	const short = /^-[^-]/.test(flag) ? flag.slice(0, 2) : null;
	for (let c: Command | null = command; c; c = c.parent) {
		const found = c.options.find((o) => o.long === flag || (short !== null && o.short === short));
		if (found) return found;
	}
	return undefined;
}

function takesValue(option: Option): boolean {
	return option.required || option.optional;
}

/** The subcommands a user may type next (help too, as commander offers it). */
export function subcommandsOf(command: Command): Candidate[] {
	if (command.commands.length === 0) return [];
	return rootOf(command)
		.createHelp()
		.visibleCommands(command)
		.map((c) => ({ value: c.name(), description: firstClause(c.description()) }));
}

/** Each long option, with its description's first clause. */
export function optionCandidates(command: Command): Candidate[] {
	return optionsOf(command)
		.filter((o) => o.long !== undefined)
		.map((o) => ({ value: o.long!, description: firstClause(o.description) }));
}

/** A description cut to its first clause: a completion menu shows one line a candidate. */
export function firstClause(text: string): string {
	const cut = text.split(/[:;(]| — /)[0]!.trim();
	return cut.length > 60 ? `${cut.slice(0, 59)}…` : cut;
}
