import type { Command } from "commander";
import { ApiError, CliError } from "../client.ts";
import { act, type Context } from "../context.ts";
import { pauseReason, printable, relTime, when } from "../format.ts";
import type { Health, SchedulerHealth, Status } from "../types.ts";
import { shapes } from "../shapes.ts";
import { allAgents } from "./agents.ts";

type CheckStatus = "ok" | "fail" | "warn" | "skip";

interface Check {
	check: string;
	status: CheckStatus;
	message: string;
}

/**
 * The check a status warning is said under, by its kind (GET /v1/status's warning_kinds): definitions
 * holding a secret's value name agents and their fields, so they are said with the agents' warnings.
 */
const WARNING_CHECKS: Record<string, string> = { scheduler_behind: "scheduler", d1_storage: "d1", incidents_unpaged: "alerts", definition_secret: "agents" };

export function registerDoctor(program: Command): void {
	program
		.command("doctor")
		.description("check reachability, auth, the scheduler's heartbeat and the configuration; exits 1 on a problem")
		.option("--json", "print the checks as JSON")
		.action(act(doctor));
}

function failure(err: unknown): string {
	if (err instanceof CliError) return err.hint ? `${err.message} (${err.hint})` : err.message;
	return err instanceof Error ? err.message : String(err);
}

/** `fleetInvalid`: the config check failed, which is why ticks fail, and why drover status cannot say more. */
function heartbeat(hb: SchedulerHealth | null, fleetInvalid = false): Check {
	if (hb === null) return { check: "scheduler", status: "fail", message: "the heartbeat cannot be read (is D1 reachable?)" };
	if (hb.last_tick_at === null) return { check: "scheduler", status: "fail", message: "no tick has run yet: is the cron trigger (* * * * *) configured and firing?" };
	const age = `last tick ${relTime(hb.last_tick_at)}`;
	// Stalled is decided by the last good tick (ok or partial), not the last tick: ticks may still
	// arrive, every one failed.
	if (hb.stalled) {
		const since = hb.last_ok_at ? `no good tick since ${when(hb.last_ok_at)}` : "no good tick yet";
		// Ticks that arrive and fail, not a cron trigger that stopped: the last one is recent.
		const failingNow = fleetInvalid && hb.age_seconds !== null && hb.age_seconds <= 120;
		const why = failingNow ? "fleet.yaml is invalid (see config above): fix it, and the next tick runs" : "is the cron trigger firing? see drover status";
		return { check: "scheduler", status: "fail", message: `stalled: ${since}, longer than HEARTBEAT_STALE_SECONDS (${age}, ${hb.outcome ?? "unknown"}; ${why})` };
	}
	// Partial: the scheduler works, some agent it could not reach (the scheduler incident names it).
	if (hb.outcome === "partial") return { check: "scheduler", status: "warn", message: `${age}, outcome partial: some agents could not be reached (see drover status and drover incidents --agent scheduler)` };
	if (hb.outcome !== "ok") {
		const see = fleetInvalid ? "fleet.yaml is invalid (see config above): fix it, and the next tick runs" : "see drover status and drover incidents --agent scheduler";
		return { check: "scheduler", status: "warn", message: `${age}, outcome ${hb.outcome ?? "unknown"} (${see})` };
	}
	return { check: "scheduler", status: "ok", message: `${age} (ok)` };
}

/** D1's schema: missing migrations fail the heartbeat's writes and make /healthz answer 503; missing indexes alone only slow reads. */
function d1Check(d1: Health["d1"]): Check {
	if (d1.ok && d1.recorded === false) return { check: "d1", status: "warn", message: "D1 keeps no record of its migrations (no d1_migrations table): its schema is not checked" };
	const missing = d1.missing ?? [];
	// Ok with some missing: each only adds an index (an older server never answers so).
	if (d1.ok && missing.length > 0) {
		return {
			check: "d1",
			status: "warn",
			message: `D1 lacks ${missing.length === 1 ? "a migration that only adds an index" : `${missing.length} migrations that only add indexes`} (${missing.join(", ")}): nothing fails, but some reads scan where they would seek; run ${d1.fix ?? "npx wrangler d1 migrations apply DB --remote"}`,
		};
	}
	if (d1.ok) return { check: "d1", status: "ok", message: "every migration this release needs is applied" };
	if (missing.length === 0) return { check: "d1", status: "fail", message: "D1 cannot be read (the Worker's logs say why)" };
	return {
		check: "d1",
		status: "fail",
		message: `D1 lacks ${missing.length === 1 ? "a migration" : `${missing.length} migrations`} this release needs (${missing.join(", ")}): run ${d1.fix ?? "npx wrangler d1 migrations apply DB --remote"}; npm run deploy applies them before it deploys, a bare wrangler deploy or a Git build does not`,
	};
}

async function doctor(ctx: Context, opts: { json?: boolean }): Promise<number> {
	const checks: Check[] = [];
	const { client } = ctx;
	let health: Health | null = null;
	try {
		health = await client.json("/healthz", shapes.health, { auth: false, accept: [503] });
		checks.push({ check: "reachable", status: "ok", message: `${client.url} answers (drover ${health.version})` });
	} catch (err) {
		checks.push({ check: "reachable", status: "fail", message: failure(err) });
	}
	if (health) {
		checks.push(
			health.fleet.ok
				? { check: "config", status: "ok", message: `fleet.yaml loads: ${health.fleet.agents} agent${health.fleet.agents === 1 ? "" : "s"}` }
				: {
						check: "config",
						status: "fail",
						message: `fleet.yaml is invalid: ${(health.fleet.issues ?? []).map((i) => `${i.path}: ${i.message}`).join("; ") || "see /healthz"}`,
					},
		);
		// Absent from an older server's answer.
		const d1 = health.d1 as Health["d1"] | undefined;
		if (d1) checks.push(d1Check(d1));
		const variables = health.variables?.issues ?? [];
		if (variables.length > 0) checks.push({ check: "variables", status: "warn", message: variables.map((i) => i.message).join("; ") });
		// Also absent from an older server's answer. Not ok: no token works; issues alone: some entries do not.
		const tokens = health.api_tokens;
		const tokenIssues = (tokens?.issues ?? []).map((i) => `${i.path}: ${i.message}`).join("; ");
		if (tokens && !tokens.ok) checks.push({ check: "api_tokens", status: "fail", message: `the API_TOKENS secret does not load: ${tokenIssues || "see /healthz"}` });
		else if (tokenIssues) checks.push({ check: "api_tokens", status: "warn", message: tokenIssues });
		let status: Status | null = null;
		if (!client.hasToken) {
			checks.push({ check: "auth", status: "fail", message: "no token: set DROVER_TOKEN or pass --token" });
		} else {
			// Checked on a route that needs no fleet.yaml: an invalid one is the config check's to report.
			try {
				await client.json("/v1/jobs", shapes.jobPage, { query: { limit: 1 } });
				// Whose token, and what it may do; a Worker from before GET /v1/me still passes.
				const me = await client.json("/v1/me", shapes.me).catch(() => null);
				checks.push({ check: "auth", status: "ok", message: `the token is accepted${me ? `: ${me.name} (${me.role} role)` : ""}` });
				status = await client.json("/v1/status", shapes.status).catch(() => null);
			} catch (err) {
				checks.push({ check: "auth", status: "fail", message: failure(err) });
			}
		}
		checks.push(heartbeat(status ? status.scheduler : health.scheduler, !health.fleet.ok));
		// A shard behind its ticks (nothing is lost, but its agents claim later and later), or D1 filling
		// up (said under d1). Absent from an older server's answer.
		// Open incidents nobody was paged for are the alert webhook's to mend, not the scheduler's: under `alerts`.
		// By the warning's kind; a server before warning_kinds is read by the text's start.
		(status?.warnings ?? []).forEach((warning, i) => {
			// One that is no string (not drover's answer) is read as a server's before kinds.
			const given: unknown = (status?.warning_kinds as unknown[] | undefined)?.[i];
			const kind = typeof given === "string" ? given : undefined;
			// A kind this CLI does not know yet is said under its own name (made printable as it is shown).
			const check = kind === undefined ? (warning.startsWith("storage: D1") ? "d1" : warning.startsWith("alerts: ") ? "alerts" : "scheduler") : Object.hasOwn(WARNING_CHECKS, kind) ? WARNING_CHECKS[kind]! : kind;
			checks.push({ check, status: "warn", message: warning });
		});
		if (status) checks.push(...(await pausedAgents(ctx)));
	} else {
		for (const check of ["config", "auth", "scheduler"]) checks.push({ check, status: "skip", message: "not checked: drover is unreachable" });
	}
	const ok = checks.every((c) => c.status !== "fail");
	if (opts.json) {
		ctx.json({ ok, url: client.url, checks });
		return ok ? 0 : 1;
	}
	const { p } = ctx;
	const mark: Record<CheckStatus, string> = { ok: p.green("✓"), fail: p.red("✗"), warn: p.yellow("!"), skip: p.dim("-") };
	// A status warning's kind the CLI does not know is the server's text too.
	const width = Math.max(...checks.map((c) => printable(c.check).length));
	for (const c of checks) {
		// A message often quotes the server (its version, an error, a pause's reason): printable before it is styled.
		// A status warning led by its check's name ("alerts: …") is shown beside that name once, not twice.
		const message = printable(c.message.startsWith(`${c.check}: `) ? c.message.slice(c.check.length + 2) : c.message);
		ctx.out(`${mark[c.status]} ${printable(c.check).padEnd(width)}  ${c.status === "fail" ? p.red(message) : message}`);
	}
	if (!ok) ctx.err(ctx.ep.red("drover: doctor found problems"));
	return ok ? 0 : 1;
}

/**
 * Agents the scheduler paused by itself (a missing secret, a retired model…), and what will fail in
 * agents that run (a webhook trigger's or a hook's secret not set): warnings, since they resume or
 * work again once the secret is set.
 */
async function pausedAgents(ctx: Context): Promise<Check[]> {
	const checks: Check[] = [];
	let total = 0;
	try {
		const agents = await allAgents(ctx);
		total = agents.length;
		for (const a of agents) {
			if (a.paused?.by === "auto") checks.push({ check: "agents", status: "warn", message: `${a.name} is paused automatically: ${pauseReason(a.paused) || "no reason given"}` });
			// Absent from an older server's answer.
			for (const warning of a.warnings ?? []) checks.push({ check: "agents", status: "warn", message: `${a.name}: ${warning}` });
		}
	} catch (err) {
		if (err instanceof ApiError || err instanceof CliError) return [{ check: "agents", status: "fail", message: failure(err) }];
		throw err;
	}
	if (checks.length === 0) checks.push({ check: "agents", status: "ok", message: `${total} agent${total === 1 ? "" : "s"}, none paused automatically, no secret missing` });
	return checks;
}
