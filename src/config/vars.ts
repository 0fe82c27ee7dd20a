import { log } from "../log.ts";

/**
 * The Worker's numeric [vars]: what each takes, and the default used when it is unset. A var is
 * text (wrangler.toml, the dashboard), so "30d" or "" can reach the Worker; read through numberVar,
 * a bad value falls back to the default, logged, rather than becoming NaN (a NaN retention set
 * every agent's alarm to an invalid date and stopped their passes).
 */
const NUMBER_VARS = {
	RETENTION_DAYS: { fallback: 30, min: 1, max: 3650, unit: "days" },
	// The scheduler ticks once a minute, and a tick is recorded as it ends, dated when it began: the
	// last good one is over a minute old while the next one runs, so a minute would flap.
	// Raised to its minimum, not reset to the default, when set below it: the minimum was 60 before,
	// and an operator who asked for a tight check must not get a looser one than the code allows.
	HEARTBEAT_STALE_SECONDS: { fallback: 180, min: 120, max: 7 * 86_400, unit: "seconds", raiseToMin: true },
	// The platform's subrequests per invocation: Workers Paid's default, or wrangler.toml's
	// `[limits] subrequests` when it sets one (up to 10 million). A pass hands over at 80 % of it.
	SUBREQUEST_LIMIT: { fallback: 10_000, min: 10, max: 10_000_000, unit: "subrequests" },
} as const satisfies Record<string, { fallback: number; min: number; max: number; unit: string; raiseToMin?: boolean }>;
export type NumberVarName = keyof typeof NUMBER_VARS;

/** What is wrong with a var's value, or null when it is a whole number in range or unset (blank). */
export function numberVarProblem(name: NumberVarName, value: string | undefined): string | null {
	if (value === undefined || value.trim() === "") return null;
	const { min, max, unit } = NUMBER_VARS[name];
	if (!/^\d+$/.test(value.trim())) return `${name} ${JSON.stringify(value)} is not a whole number of ${unit} (${min}..${max})`;
	const n = Number(value.trim());
	return n < min || n > max ? `${name} ${n} is outside ${min}..${max} ${unit}` : null;
}

/** What a var whose value has a problem is read as: its default, or its minimum for one set below a minimum it is raised to. */
function usedFor(name: NumberVarName, value: string | undefined): number {
	const spec: { fallback: number; min: number; raiseToMin?: boolean } = NUMBER_VARS[name];
	const trimmed = value?.trim() ?? "";
	return spec.raiseToMin && /^\d+$/.test(trimmed) && Number(trimmed) < spec.min ? spec.min : spec.fallback;
}

/** A numeric var's value, or its default when unset or not valid (logged as config.var_invalid). */
export function numberVar(env: Partial<Record<NumberVarName, string>>, name: NumberVarName): number {
	const value = env[name];
	const { fallback } = NUMBER_VARS[name];
	const problem = numberVarProblem(name, value);
	if (problem !== null) {
		const using = usedFor(name, value);
		// Once an isolate per bad value: a var is read on every pass and tick.
		log.once("error", "config.var_invalid", `${name}=${value}`, { variable: name, error_message: problem, using });
		return using;
	}
	return value === undefined || value.trim() === "" ? fallback : Number(value.trim());
}

/** Every numeric var's problem, as /healthz lists issues (a path and a message). */
export function numberVarIssues(env: Partial<Record<NumberVarName, string>>): { path: string; message: string }[] {
	return (Object.keys(NUMBER_VARS) as NumberVarName[]).flatMap((name) => {
		const problem = numberVarProblem(name, env[name]);
		if (problem === null) return [];
		const using = usedFor(name, env[name]);
		return [{ path: name, message: `${problem}; ${using === NUMBER_VARS[name].fallback ? `the default ${using}` : `its minimum ${using}`} is used` }];
	});
}

/**
 * PUBLIC_URL: the Worker's public origin (https://drover.example.workers.dev), which the Worker cannot
 * learn on its own in an alarm, where deliveries are sent. What is wrong with a value, or null when it
 * is an http(s) origin (a trailing slash allowed) or unset (blank).
 */
function publicUrlProblem(value: string | undefined): string | null {
	if (value === undefined || value.trim() === "") return null;
	const url = URL.parse(value.trim());
	const origin = url !== null && (url.protocol === "https:" || url.protocol === "http:") && url.pathname === "/" && !url.search && !url.hash && !url.username && !url.password;
	return origin ? null : `PUBLIC_URL ${JSON.stringify(shown(value.trim()))} is not an http(s) origin (such as https://drover.example.workers.dev): deliveries and alerts carry no dashboard link`;
}

/**
 * The value's scheme and host, what an origin is, with each other part it has marked and elided (a
 * user and password `…@`, a path `/…`, a query `?…`, a fragment `#…`): /healthz answers anyone, and
 * a URL pasted with its token (a webhook's is often its path) is not an origin either. Read as a URL
 * parser reads it; a value without `scheme://` as one after `https://` (`drover.example.test/jobs`),
 * shown without it. An `@` after a `/`, `?` or `#` cannot be told from a password holding one
 * (`bot:1234/5678@host` parses as host `bot`, port 1234; `bot:ab@cd/ef@host` as password `ab`, host
 * `cd`), so such a value shows its scheme only.
 * A value no parser reads (a password holding `?` or `#`, a space in the host) is read to its last
 * `@`, then to its first `/`, `?` or `#`.
 */
function shown(value: string): string {
	const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(value)?.[0] ?? "";
	const url = URL.parse(scheme ? value : `https://${value}`);
	// An @ after the authority's first /, ? or # (or \, which http(s) URLs read as /): a password's (holding one of them) or the path's.
	if (url && /[/?#\\][\s\S]*@/.test(value.slice(scheme.length))) return `${scheme ? `${url.protocol}//` : ""}…`;
	const written = url ? null : /^(?:([\s\S]*)@)?([^/?#]*)([^?#]*)(\?[^#]*)?(#[\s\S]*)?$/.exec(value.slice(scheme.length));
	const [user, host, path, query, fragment] = url
		? [url.username || url.password, url.host, url.pathname, url.search, url.hash]
		: [written?.[1], written?.[2] ?? "", written?.[3] ?? "", written?.[4], written?.[5]];
	const rest = [path.length > 1 ? "/…" : path, query ? "?…" : "", fragment ? "#…" : ""].join("");
	return `${url && scheme ? `${url.protocol}//` : scheme}${user ? "…@" : ""}${host}${rest}`;
}

/** PUBLIC_URL's origin, or null when it is unset or not valid (logged once as config.var_invalid). */
export function publicUrl(env: { PUBLIC_URL?: string }): string | null {
	const value = env.PUBLIC_URL;
	const problem = publicUrlProblem(value);
	if (problem !== null) {
		log.once("error", "config.var_invalid", `PUBLIC_URL=${value}`, { variable: "PUBLIC_URL", error_message: problem, using: null });
		return null;
	}
	return value === undefined || value.trim() === "" ? null : new URL(value.trim()).origin;
}

/** Every var's problem (the numeric ones and PUBLIC_URL), as /healthz lists issues. */
export function varIssues(env: Partial<Record<NumberVarName | "PUBLIC_URL", string>>): { path: string; message: string }[] {
	const problem = publicUrlProblem(env.PUBLIC_URL);
	return [...numberVarIssues(env), ...(problem === null ? [] : [{ path: "PUBLIC_URL", message: problem }])];
}
