import { readFile } from "node:fs/promises";
import { structuredPatch } from "diff";
import type { Command } from "commander";
import { yamlText } from "../../src/shared/yaml-text.ts";
import { parseYaml12, positionIn, unreadable } from "../../src/config/yaml.ts";
import { ApiError, CliError } from "../client.ts";
import { act, agentNameError, pathSegment, type Context } from "../context.ts";
import { printable, when } from "../format.ts";
import { shapes } from "../shapes.ts";
import { confirm, readStdin, utf8Text } from "../stdin.ts";
import type { AgentDetail, AgentDryRun } from "../types.ts";

const agentPath = (agent: string) => `/v1/agents/${encodeURIComponent(agent)}`;

/** fleet.yaml's `version`, the only one its schema takes (src/config/schema.ts). */
const FLEET_VERSION = 1;

export function registerDefine(program: Command): void {
	program
		.command("apply")
		.description("define or redefine agents through the API (admin) from a YAML or JSON file: one agent, a list of them, or an `agents:` list as in fleet.yaml")
		.argument("<file>", 'the file ("-" reads stdin)')
		.option("--json", "print the API's answers (a JSON array, one agent each; at a refusal, those applied before it)")
		.option("--dry-run", "change nothing: say what each agent's apply would do (created, updated with the lines of its YAML that change, or unchanged), each checked by the API as the apply would be")
		.action(act(apply));

	program
		.command("definition")
		.description("an agent's definition as YAML, as apply takes it (fleet.yaml's agents too, though apply refuses them)")
		.argument("<agent>", "agent name", pathSegment)
		.option("--json", "print it as JSON")
		.action(act(definition));

	program
		.command("delete")
		.description("delete an agent defined through the API (admin); its jobs and runs stay readable")
		.argument("<agent>", "agent name", pathSegment)
		.option("-y, --yes", "do not ask first (required when stdin is not a terminal)")
		.option("--json", "print the API's JSON")
		.action(act(remove));
}

type Definition = Record<string, unknown> & { name: string };

/**
 * Where the file wrote a field of its `index`th agent, by the path an API issue names it by
 * ("schedules.daily.cron", "tools[1].name"), as "FILE line L:C"; undefined where it cannot say.
 */
type Locate = (index: number, path: string, isKey: boolean) => string | undefined;

interface Definitions {
	definitions: Definition[];
	locate: Locate;
}

/**
 * The agents a file defines, each checked only for what the CLI needs (a name, once): the API
 * validates the rest with the fleet schema and says what is wrong, field by field.
 */
function definitionsIn(text: string, source: string): Definitions {
	// Read as fleet.yaml is: YAML 1.2, no merge keys (the API takes the result as JSON either way).
	const parsed = parseYaml12(text, { uniqueKeys: true });
	const { doc, problems } = parsed;
	if (doc.errors.length > 0) {
		// As the API and fleet.yaml's check say it: an unclosed quote or bracket where it was opened.
		const { line, col, message } = unreadable(parsed)[0]!;
		throw new CliError(printable(`${source} is not valid YAML or JSON: ${line !== undefined ? `line ${line}:${col}: ` : ""}${message}`));
	}
	const problem = problems[0];
	if (problem) throw new CliError(printable(`${source}: line ${problem.line}:${problem.col}: ${problem.message}`));
	const value: unknown = doc.toJS();
	const isMap = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
	let list: unknown[];
	// Where the agents sit in the document: the whole of it, its items, or its agents: list's items.
	let prefix: (i: number) => (string | number)[];
	if (Array.isArray(value)) [list, prefix] = [value, (i) => [i]];
	else if (isMap(value) && "name" in value) [list, prefix] = [[value], () => []];
	else if (isMap(value) && Array.isArray(value.agents)) {
		prefix = (i) => ["agents", i];
		// fleet.yaml's other keys are the fleet's own (pricing, version): an API agent cannot carry them.
		const other = Object.keys(value).filter((k) => k !== "agents" && k !== "version");
		if (other.length > 0) throw new CliError(`${source}: ${other.map((k) => `\`${k}\``).join(", ")} ${other.length === 1 ? "is" : "are"} fleet.yaml's alone; apply takes agents`);
		// The one version fleet.yaml has (src/config/schema.ts): a file of another would be read as if it were it.
		if ("version" in value && value.version !== FLEET_VERSION) throw new CliError(printable(`${source}: version ${JSON.stringify(value.version)} is not one apply reads: fleet.yaml's is version ${FLEET_VERSION}`));
		list = value.agents;
	} else throw new CliError(`${source} holds no agent: expected an agent (a mapping with a name), a list of them, or an \`agents:\` list`);
	if (list.length === 0) throw new CliError(`${source} holds no agent: its list is empty`);
	const seen = new Set<string>();
	const definitions = list.map((a, i) => {
		const which = `agent ${i + 1} of ${source}`;
		if (!isMap(a)) throw new CliError(`${which} is not a mapping of fields`);
		if (typeof a.name !== "string" || a.name === "") throw new CliError(`${which} has no name`);
		if (seen.has(a.name)) throw new CliError(printable(`${source} defines ${a.name} twice`));
		seen.add(a.name);
		return a as Definition;
	});
	const at = positionIn(parsed);
	const locate: Locate = (index, path, isKey) => {
		const segments = [...path.matchAll(/\[(\d+)\]|([^.[\]]+)/g)].map(([, n, key]) => (n !== undefined ? Number(n) : key!));
		const pos = path === "" || path === "(root)" ? undefined : at([...prefix(index), ...segments], isKey);
		return pos && `${source} line ${pos.line}:${pos.column}`;
	};
	return { definitions, locate };
}

/**
 * The API's refusal of a field, said with where the file wrote it: the API was sent JSON, so its
 * issues name a path, which the reader of a YAML file would have to find by hand.
 */
function placed(err: unknown, locate: (path: string, isKey: boolean) => string | undefined): unknown {
	if (!(err instanceof ApiError) || err.issues.length === 0) return err;
	let message = err.message;
	for (const issue of err.issues) {
		const said = `${issue.path}: ${issue.message}`;
		// The API's issues of a key itself (an unknown key, a schedule's name) are placed at the key.
		const where = locate(issue.path, /^unknown key|^schedule names /.test(issue.message));
		// A function, not a string: an issue's text may hold "$&" or "$'", which a replacement string would read.
		if (where !== undefined && message.includes(said)) message = message.replace(said, () => `${said} (${where})`);
	}
	const answer = new ApiError(err.status, err.code, message, err.hint, err.requestId);
	answer.issues = err.issues;
	return answer;
}

async function readDefinitions(file: string): Promise<Definitions> {
	if (file === "-") return namesChecked(definitionsIn(await readStdin(), "stdin"), "stdin");
	let bytes: Uint8Array;
	try {
		bytes = await readFile(file);
	} catch (err) {
		throw new CliError(`cannot read ${printable(file)}: ${readProblem(err as NodeJS.ErrnoException)}`);
	}
	return namesChecked(definitionsIn(utf8Text(bytes, printable(file)), printable(file)), printable(file));
}

/**
 * Each agent's name checked as the API checks it (it becomes a path parameter, so the API's refusal
 * would name the parameter, "invalid param: agent", not the name field written in the file), before
 * any request: the first bad one is said with the field it is in.
 */
function namesChecked(read: Definitions, source: string): Definitions {
	const { definitions } = read;
	for (const [i, { name }] of definitions.entries()) {
		const problem = agentNameError(name);
		if (problem !== null) throw new CliError(printable(`${name}: name ${problem}${definitions.length === 1 ? "" : ` (agent ${i + 1} of ${source})`}`));
	}
	return read;
}

/** Why a file could not be read, in words: an errno code (ENOENT) means nothing to most readers. */
function readProblem(err: NodeJS.ErrnoException): string {
	switch (err.code) {
		case "ENOENT":
			return "no such file";
		case "EACCES":
		case "EPERM":
			return "permission denied";
		case "EISDIR":
			return "it is a directory";
		default:
			return err.code ?? err.message;
	}
}

/**
 * The lines of an agent's YAML a change would change, as a unified diff (its hunks alone: the
 * header would only name the agent twice), coloured for a terminal.
 */
function changedLines(ctx: Context, before: unknown, after: unknown): string[] {
	const { hunks } = structuredPatch("before", "after", printable(yamlText(before)), printable(yamlText(after)), "", "", { context: 2 });
	return hunks.flatMap((h) => [
		ctx.p.cyan(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`),
		...h.lines.map((l) => (l.startsWith("-") ? ctx.p.red(l) : l.startsWith("+") ? ctx.p.green(l) : l)),
	]);
}

/** What the API would do with an agent's definition (dry_run=true: nothing changes), and the agent as it is now. */
async function dryRun(ctx: Context, definition: Definition): Promise<{ before: AgentDetail | null; answer: AgentDryRun }> {
	const before = await currentDefinition(ctx, definition.name);
	const answer = before
		? await ctx.client.json(agentPath(definition.name), shapes.agentDryRun, { method: "PUT", query: { dry_run: "true" }, body: definition, headers: { "if-match": `"${before.definition_revision}"` } })
		: await ctx.client.json("/v1/agents", shapes.agentDryRun, { method: "POST", query: { dry_run: "true" }, body: definition });
	return { before, answer };
}

/** What apply would do to each agent, asked of the API with dry_run=true: nothing changes. */
async function plan(ctx: Context, { definitions, locate }: Definitions, opts: { json?: boolean }): Promise<number> {
	const answers: AgentDryRun[] = [];
	for (const [index, definition] of definitions.entries()) {
		const name = printable(definition.name);
		try {
			const { before, answer } = await dryRun(ctx, definition);
			answers.push(answer);
			if (opts.json) continue;
			if (answer.action === "create") ctx.out(`would create ${name} (revision ${printable(answer.definition_revision)})`);
			else if (answer.action === "unchanged") ctx.out(`unchanged ${name} (revision ${printable(answer.definition_revision)})`);
			else {
				ctx.out(`would update ${name} (revision ${printable(answer.previous_revision ?? "?")} → ${printable(answer.definition_revision)})`);
				for (const line of changedLines(ctx, before?.definition, answer.definition)) ctx.out(`  ${line}`);
			}
			if (answer.action !== "unchanged") for (const line of nextRuns(answer)) ctx.out(`  ${line}`);
			for (const warning of answer.warnings) ctx.err(`${name}: warning: ${printable(warning)}`);
		} catch (err) {
			if (opts.json) ctx.json(answers);
			throw refusalOf(placed(err, (path, isKey) => locate(index, path, isKey)), name, answers.length, "checked");
		}
	}
	if (opts.json) ctx.json(answers);
	return 0;
}

/**
 * Each schedule's next run as the API computed it, in UTC and, for a cron in another zone, on that
 * zone's clock: a schedule translated from another tool is checked by it (09:00 Berlin is 08:00Z in
 * winter) before it is applied. A server that sends no schedules says nothing.
 */
function nextRuns(answer: AgentDryRun): string[] {
	return (answer.schedules ?? []).map((s) => {
		const name = `schedule ${printable(s.name)}`;
		// A disabled agent's schedules have no next run (the API's null), as a disabled schedule has none.
		if (!s.enabled || answer.definition.enabled === false) return `${name}: disabled${s.enabled ? " (the agent is)" : ""}`;
		if (!s.next_run) return `${name}: no next run`;
		const zone = s.timezone && s.timezone !== "UTC" ? `, ${onClockOf(s.next_run, s.timezone)} ${printable(s.timezone)}` : "";
		return `${name}: next run ${when(s.next_run)}${zone}`;
	});
}

/** An instant as the clock in `timeZone` shows it, "2026-12-07 09:00"; the instant as given when the zone is unknown here. */
function onClockOf(iso: string, timeZone: string): string {
	try {
		// sv-SE writes the ISO order, with a 24-hour clock.
		return new Intl.DateTimeFormat("sv-SE", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(new Date(iso));
	} catch {
		return iso;
	}
}

/** The agent as the API has it now, or null when it has none by the name. */
function currentDefinition(ctx: Context, agent: string): Promise<AgentDetail | null> {
	return ctx.client.json(agentPath(agent), shapes.agentDetail).catch((err: unknown) => {
		if (err instanceof ApiError && err.status === 404) return null;
		throw err;
	});
}

/** A refusal, said with the agent it was about: a file of several would leave the reader guessing. */
function refusalOf(err: unknown, name: string, before: number, done: string): unknown {
	if (!(err instanceof CliError)) return err;
	const message = `${name}: ${err.message}${done === "" ? "" : before === 0 ? "" : ` (${before} before it ${done})`}`;
	// Still the API's error, so its request id is printed after a 401, a 403 or a 5xx.
	if (err instanceof ApiError) {
		const answer = new ApiError(err.status, err.code, message, err.hint, err.requestId);
		answer.issues = err.issues;
		return answer;
	}
	return new CliError(message, err.exitCode, err.hint);
}

/** Each agent created (POST) when the API has none by its name, else replaced (PUT); in file order, stopping at the first refusal. */
async function apply(ctx: Context, file: string, opts: { json?: boolean; dryRun?: boolean }): Promise<number> {
	const read = await readDefinitions(file);
	if (opts.dryRun) return plan(ctx, read, opts);
	const { definitions, locate } = read;
	// Every agent is checked first, as a dry run checks it (its validation, a name fleet.yaml holds, an
	// unpriced cost limit): a file one agent of which the API refuses changes nothing. A refusal the
	// writes meet after that (a change made meanwhile) still stops them there.
	if (definitions.length > 1) {
		for (const [index, definition] of definitions.entries()) {
			const name = printable(definition.name);
			try {
				await dryRun(ctx, definition);
			} catch (err) {
				// A server from before dry runs refuses the parameter (or, older still, ignores it and writes):
				// it cannot be asked first, and what its answer did is not known here.
				if (!(err instanceof ApiError) || (err.status === 400 && /\bdry_run\b/.test(err.message))) {
					throw new CliError(`${name}: the server did not answer apply's check as a dry run (a drover from before dry runs?), so nothing more was sent; ${name} may have been applied: see drover agents`);
				}
				if (opts.json) ctx.json([]);
				throw refusalOf(placed(err, (path, isKey) => locate(index, path, isKey)), `${name} (nothing was applied)`, 0, "");
			}
		}
	}
	const answers: AgentDetail[] = [];
	for (const [index, definition] of definitions.entries()) {
		const name = printable(definition.name);
		try {
			const before = await currentDefinition(ctx, definition.name);
			const answer = before
				? await ctx.client.json(agentPath(definition.name), shapes.agentDetail, { method: "PUT", body: definition })
				: await ctx.client.json("/v1/agents", shapes.agentDetail, { method: "POST", body: definition });
			answers.push(answer);
			if (opts.json) continue;
			if (!before) ctx.out(`created ${name} (revision ${answer.definition_revision})`);
			else if (before.definition_revision === answer.definition_revision) ctx.out(`unchanged ${name} (revision ${answer.definition_revision})`);
			else ctx.out(`updated ${name} (revision ${before.definition_revision} → ${answer.definition_revision})`);
		} catch (err) {
			// --json: what was applied before the refusal (maybe nothing: []), for a script to read;
			// the refusal is on stderr and the exit code stays 1.
			if (opts.json) ctx.json(answers);
			throw refusalOf(placed(err, (path, isKey) => locate(index, path, isKey)), name, answers.length, "applied");
		}
	}
	if (opts.json) ctx.json(answers);
	return 0;
}

async function definition(ctx: Context, agent: string, opts: { json?: boolean }): Promise<number> {
	const answer = await ctx.client.json(agentPath(agent), shapes.agentDetail);
	// As stored, for a person to edit and apply back: every string holding a control character (C0,
	// DEL, C1) or a bidirectional one is written double-quoted, with YAML escapes for them (\e, \x7f,
	// \x9b, \u202e), so the text is safe on a terminal and applies back unchanged (yamlText), as the
	// API's GET /v1/agents/{agent}/definition writes it.
	if (opts.json) ctx.json(answer.definition);
	else process.stdout.write(`# ${answer.source === "file" ? "from fleet.yaml (change it there and deploy)" : "defined through the API"}; revision ${printable(answer.definition_revision)}\n${printable(yamlText(answer.definition))}`);
	return 0;
}

async function remove(ctx: Context, agent: string, opts: { yes?: boolean; json?: boolean }): Promise<number> {
	if (!opts.yes) {
		// A usage error (exit 2): the command line lacks --yes; nothing was asked of the API.
		if (!ctx.stdinIsTTY) throw new CliError(`not deleting agent ${printable(agent)} without confirmation`, 2, "stdin is not a terminal to ask on: pass --yes");
		if (!(await confirm(`Delete agent ${printable(agent)}? Its schedules stop; its jobs and runs stay readable. [y/N] `))) {
			ctx.err("not deleted");
			return 1;
		}
	}
	const answer = await ctx.client.json(agentPath(agent), shapes.agentDeleted, { method: "DELETE" });
	if (opts.json) ctx.json(answer);
	else ctx.out(`deleted ${printable(answer.deleted)}; its jobs and runs stay readable`);
	return 0;
}
