import { readFileSync } from "node:fs";
import { Command, CommanderError, Option } from "commander";
import { ApiError, CliError, DEFAULT_URL } from "./client.ts";
import { registerActions } from "./commands/actions.ts";
import { registerAgents } from "./commands/agents.ts";
import { registerCompletion } from "./commands/completion.ts";
import { registerDefine } from "./commands/define.ts";
import { registerEdit } from "./commands/edit.ts";
import { registerDoctor } from "./commands/doctor.ts";
import { registerIncidents } from "./commands/incidents.ts";
import { registerJobs } from "./commands/jobs.ts";
import { registerLogs } from "./commands/logs.ts";
import { registerNotepad } from "./commands/notepad.ts";
import { registerSessions } from "./commands/sessions.ts";
import { registerStatus } from "./commands/status.ts";
import { registerTick } from "./commands/tick.ts";
import { registerTrigger } from "./commands/trigger.ts";
import { registerUsage } from "./commands/usage.ts";
import { subcommandNamed } from "./completion/walk.ts";
import { fittedHelp } from "./help.ts";
import { outcome } from "./context.ts";
import { paint, printable, wantsColor } from "./format.ts";

function version(): string {
	try {
		return (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
	} catch {
		return "unknown";
	}
}

export function buildProgram(): Command {
	const program = new Command("drover")
		.description("Operate a drover fleet over its HTTPS API")
		.version(version(), "-V, --version")
		.addOption(new Option("--url <url>", "the drover Worker's base URL").env("DROVER_URL").default(DEFAULT_URL))
		.addOption(new Option("--token <token>", "an API token (read, operate or admin role); prefer DROVER_TOKEN: a command line shows in ps and shell history").env("DROVER_TOKEN"))
		.option("--no-color", "no colour even on a terminal or with FORCE_COLOR (NO_COLOR and TERM=dumb do the same, unless FORCE_COLOR is set)")
		// Throw instead of exiting, so usage errors get exit code 2 (commander's default is 1).
		.exitOverride()
		.showHelpAfterError("(add --help for usage)")
		// Before the commands are registered: each copies its parent's help configuration as it is made.
		.configureHelp(fittedHelp((cmd) => (cmd.parent === null ? EXIT_CODES : undefined)))
		// Commander's messages quote the arguments given, which may hold anything.
		.configureOutput({ outputError: (text, write) => write(printable(fromOtherTools(text).replace(/^error: /, "drover: "))) });
	registerJobs(program);
	registerLogs(program);
	registerStatus(program);
	registerTick(program);
	registerAgents(program);
	registerDefine(program);
	registerEdit(program);
	registerIncidents(program);
	registerTrigger(program);
	registerActions(program);
	registerSessions(program);
	registerNotepad(program);
	registerUsage(program);
	registerDoctor(program);
	registerCompletion(program);
	registerHelp(program);
	optionsToSubcommands(program);
	return program;
}

const EXIT_CODES =
	"Exit codes: 0 ok; 1 error (a refusal, a bad answer, the Worker's configuration unusable: config_invalid), or a failed job (--wait, --follow); 2 usage error, or a cancelled job (--wait, --follow); 3 a job's stream lost, its outcome unknown (--wait, logs --job --follow); 4 not found (the API's 404: no such job, agent, session, key…); 5 the server unreachable, timed out or failing (no answer, a 5xx, a 429, a 408): worth retrying later (a request that may have arrived, such as a trigger without --idempotency-key, may then run twice); 124 a --wait given up at its --wait-timeout; 130 a --wait stopped by Ctrl-C (the job goes on, as at 124).";

/**
 * The commands of the tools drover's users come from (Hermes' `cron run`, `cron list`; herdctl's
 * `trigger` is drover's own), said as drover's: commander's closest name for `run` was `runs`, which
 * lists the ledger rather than starting a run.
 */
const OTHER_TOOLS: Record<string, string> = {
	run: "to run an agent now: drover trigger <agent> [prompt] (Hermes' cron run); drover runs <agent> lists its occurrence ledger",
	list: "the agents, their next runs and last jobs: drover agents (Hermes' cron list), or drover status",
	// deputy's approvals list; commander's closest name, approve, decides a call without listing any.
	approvals: "the jobs waiting on an approval: drover jobs --status approval_pending; drover approve|deny <id> decides one (deputy's approvals)",
	// What apply would change (kubectl diff, terraform plan) is its dry run.
	diff: "what apply would change, as a diff of each agent's YAML: drover apply --dry-run <file>",
	plan: "what apply would change, as a diff of each agent's YAML: drover apply --dry-run <file>",
	cron: "drover's commands stand alone: drover status, agents, runs <agent>, incidents, notepad <agent>, doctor, tick (Hermes' cron status, list, runs, …)",
};

function fromOtherTools(text: string): string {
	const name = /^error: unknown command '([^']*)'/.exec(text)?.[1];
	const said = name === undefined ? undefined : Object.hasOwn(OTHER_TOOLS, name) ? OTHER_TOOLS[name] : undefined;
	return said === undefined ? text : `error: unknown command '${name}': ${said}\n`;
}

/**
 * `drover help [command...]`, in place of commander's: the help of the command its words name, however
 * deep (commander's took the first word only, so `help incidents close` showed incidents'), and a word
 * naming no command the usage error `drover nosuch` is, its did-you-mean included (commander's printed
 * the whole help, exit 2, without saying what was wrong). A command with subcommands and an action of
 * its own (`incidents`) gets one too, `drover incidents help close`: commander adds its implicit one
 * only to a command without an action. Not one whose action takes an argument (`sessions <agent>`),
 * where `help` is an agent's name.
 */
function registerHelp(program: Command): void {
	program.helpCommand(false);
	addHelpCommand(program, "show a command's help: drover help incidents close");
	for (const cmd of program.commands) {
		if (cmd.commands.length > 0 && cmd.registeredArguments.length === 0 && cmd.name() !== "help") {
			addHelpCommand(cmd, `show a subcommand's help: drover ${cmd.name()} help ${cmd.commands[0]?.name() ?? ""}`.trimEnd());
		}
	}
}

function addHelpCommand(root: Command, description: string): void {
	root
		.command("help")
		.description(description)
		.argument("[command...]", "the command's words")
		.action((words: string[]) => {
			let cmd: Command = root;
			for (const word of words) {
				const sub = subcommandNamed(cmd, word);
				if (sub === undefined) unknownCommand(cmd, word);
				cmd = sub;
			}
			cmd.help();
		});
}

/** Commander's own error for `word`, which names no subcommand of `cmd` (private in commander, and so looked for). */
function unknownCommand(cmd: Command, word: string): never {
	const own = (cmd as Command & { unknownCommand?: () => never }).unknownCommand;
	if (typeof own !== "function") cmd.error(`error: unknown command '${word}'`, { code: "commander.unknownCommand", exitCode: 2 });
	// It names the first of the command's arguments.
	cmd.args = [word];
	return own.call(cmd);
}

/**
 * Options written after a subcommand's name reach the subcommand. Commander parses the options of
 * every command on the way down from the whole command line, so `incidents close <id> --json` gave
 * --json to `incidents` (which defines it too) and close printed text. (Its positional-options
 * mode would fix that only by making --url and --token invalid after a command's name.) Before an
 * action runs, each option its command's parents took from the command line moves to the command
 * when the command defines it too, and is a usage error when it does not (`incidents close <id>
 * --state closed` filters nothing: it must not pass silently).
 */
function optionsToSubcommands(program: Command): void {
	program.hook("preAction", (_program, action) => {
		for (let parent = action.parent; parent && parent !== program; parent = parent.parent) {
			for (const option of parent.options) {
				const key = option.attributeName();
				if (parent.getOptionValueSource(key) !== "cli") continue;
				const own = action.options.find((o) => o.attributeName() === key);
				if (!own) action.error(`error: option '${option.flags}' does not apply to ${action.parent === parent ? `${parent.name()} ${action.name()}` : action.name()}`, { code: "drover.parentOption", exitCode: 2 });
				else if (action.getOptionValueSource(key) !== "cli") action.setOptionValueWithSource(key, parent.getOptionValue(key), "cli");
			}
		}
	});
}

/** Runs the CLI; resolves to the process exit code. */
export async function run(argv: readonly string[]): Promise<number> {
	// `drover jobs | head -1` closes the pipe early: that is the reader being done, not an error.
	process.stdout.on("error", (err: NodeJS.ErrnoException) => {
		if (err.code === "EPIPE") process.exit(outcome.exitCode);
		throw err;
	});
	// stderr carries only what a person watches (progress, reconnect notices, errors): one closed
	// early (`drover trigger a --wait 2>&1 | head -1`) must neither end a --wait or a --follow nor
	// change its exit code, which is the job's outcome. A failed write to it has nowhere to be
	// reported, so it is dropped; without a listener it would be an uncaught error, exit 1.
	process.stderr.on("error", () => {});
	const program = buildProgram();
	try {
		await program.parseAsync(argv);
		return outcome.exitCode;
	} catch (err) {
		if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
		const ep = paint(wantsColor(process.stderr, process.env, !process.argv.includes("--no-color")));
		if (err instanceof CliError) {
			// The message is often the API's, or quotes an answer or an argument: printable before it is styled.
			process.stderr.write(`${ep.red(`drover: ${printable(err.message)}`)}\n`);
			if (err.hint) process.stderr.write(`${ep.dim(`drover: hint: ${printable(err.hint)}`)}\n`);
			// What the Worker's logs file the request under: the one thing to quote to its operator. Only
			// where the operator's logs hold more than the message (a refused token, a server error): after
			// "job not found" it was a line of noise.
			if (err instanceof ApiError && err.requestId && (err.status === 401 || err.status === 403 || err.status >= 500)) process.stderr.write(`${ep.dim(`drover: request id: ${err.requestId} (the Worker's logs name the request by it)`)}\n`);
			return err.exitCode;
		}
		process.stderr.write(`drover: unexpected error: ${printable(err instanceof Error ? (err.stack ?? err.message) : String(err))}\n`);
		return 1;
	}
}
