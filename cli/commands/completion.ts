import { Argument, type Command } from "commander";
import { DEFAULT_URL } from "../client.ts";
import { candidateLine, SCRIPTS, SHELLS, type Shell } from "../completion/scripts.ts";
import { Lookups } from "../completion/sources.ts";
import { optionCandidates, slotOf, subcommandNamed, subcommandsOf, type Candidate, type Slot } from "../completion/walk.ts";
import { ACTIONS as NOTEPAD_ACTIONS } from "./notepad.ts";

export function registerCompletion(program: Command): void {
	program
		.command("completion")
		.description("print the shell completion script for bash, zsh or fish: commands, options, and the server's agents, jobs and incidents")
		.addArgument(new Argument("<shell>", "bash, zsh or fish").choices(SHELLS))
		.addHelpText(
			"after",
			[
				"",
				"Load it from the shell's start-up file:",
				"  bash, in ~/.bashrc:                 source <(drover completion bash)",
				"  zsh, in ~/.zshrc after compinit:    source <(drover completion zsh)",
				"  fish:  drover completion fish > ~/.config/fish/completions/drover.fish",
			].join("\n"),
		)
		.action((shell: Shell) => void process.stdout.write(SCRIPTS[shell]));

	// What the scripts ask at each Tab; not for people, so not in the help.
	program
		.command("__complete", { hidden: true })
		.argument("<shell>")
		.argument("[words...]")
		.allowUnknownOption()
		.helpOption(false)
		.action(async (shell: string, words: string[]) => {
			if (!(SHELLS as readonly string[]).includes(shell)) return;
			const current = words.at(-1) ?? "";
			const slot = slotOf(program, words.slice(0, -1), current);
			// An option's value written after its = (--status=c) is completed as the value, the option kept before it.
			const inline = slot.kind === "optionValue" ? (slot.inline ?? "") : "";
			const found = await candidatesFor(slot, current.slice(inline.length), lookupsFor(words));
			const candidates = found.candidates.map((c) => ({ ...c, value: inline + c.value }));
			const lines = candidates.filter((c) => c.value.startsWith(current)).map((c) => candidateLine(shell as Shell, c.value, c.description));
			process.stdout.write([...lines, found.files ? ":1" : ":0"].join("\n") + "\n");
		});
}

/** The server to ask: --url and --token written on the line being completed, else the environment, as the command would. */
function lookupsFor(words: readonly string[]): Lookups {
	const given = (flag: string) => {
		const i = words.lastIndexOf(flag);
		const inline = words.findLast((w) => w.startsWith(`${flag}=`));
		return inline !== undefined ? inline.slice(flag.length + 1) : i >= 0 && i < words.length - 2 ? words[i + 1] : undefined;
	};
	return new Lookups(given("--url") ?? process.env.DROVER_URL ?? DEFAULT_URL, given("--token") ?? process.env.DROVER_TOKEN);
}

async function candidatesFor(slot: Slot, current: string, api: Lookups): Promise<{ candidates: Candidate[]; files: boolean }> {
	if (slot.kind === "option") return { candidates: optionCandidates(slot.command), files: false };
	if (slot.kind === "optionValue") {
		const { option } = slot;
		if (option.argChoices) return { candidates: option.argChoices.map((value) => ({ value })), files: false };
		if (option.attributeName() === "agent") {
			// usage --agent takes a list: complete its last name, keeping the ones before.
			const comma = current.lastIndexOf(",");
			const head = current.slice(0, comma + 1);
			return { candidates: (await api.agents(current.slice(comma + 1))).map((c) => ({ value: head + c.value })), files: false };
		}
		if (option.attributeName() === "job") return { candidates: await api.jobs(), files: false };
		// No option takes a file: a value left to the user (a date, a reason, a number).
		return { candidates: [], files: false };
	}
	const { command, argument, before } = slot;
	// `drover help <command> [<subcommand>]` and `drover incidents help <subcommand>` (program.ts's help
	// commands): the commands to ask help of.
	if (command.name() === "help" && command.parent !== null) {
		let target: Command | undefined = command.parent;
		for (const word of before) target = target && subcommandNamed(target, word);
		return { candidates: target ? subcommandsOf(target).filter((c) => c.value !== "help") : [], files: false };
	}
	const subcommands = before.length === 0 ? subcommandsOf(command) : [];
	if (!argument) return { candidates: subcommands, files: false };
	if (argument.argChoices) return { candidates: [...subcommands, ...argument.argChoices.map((value) => ({ value }))], files: false };
	const named = await argumentCandidates(command, argument.name(), current, before, api);
	return { candidates: [...subcommands, ...(named ?? [])], files: named === null };
}

/** What fills an argument by its name; null for free text or a file, where the shell may offer file names. */
async function argumentCandidates(command: Command, name: string, current: string, before: readonly string[], api: Lookups): Promise<Candidate[] | null> {
	switch (name) {
		case "agent":
		case "session-or-agent":
			return api.agents(current);
		case "id":
			// An incident's id under `incidents` and of `incident`; a job's everywhere else.
			return command.parent?.name() === "incidents" || command.name() === "incident" ? api.incidents() : api.jobs();
		case "action":
			return NOTEPAD_ACTIONS.map((value) => ({ value }));
		case "key":
			return before[0] === undefined ? [] : api.notepadKeys(before[0]);
		case "file":
			return null;
		default:
			// A prompt, a value: the user's own words.
			return [];
	}
}
