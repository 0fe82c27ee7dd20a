import { randomBytes } from "node:crypto";
import { readdirSync, rmSync } from "node:fs";
import path from "node:path";
import dotenv from "dotenv";

// What `npm start` hands `wrangler dev` besides .dev.vars. npm start always writes .dev.vars, and
// while it exists wrangler dev takes the Worker's vars and secrets from it and from `--var`, never
// from the environment: a value set only there reaches the Worker only if passed as a `--var`.

/**
 * .dev.vars's entries as wrangler dev reads them (dotenv: names with digits, quoted values, CRLF
 * lines, `export`), so npm start sees a secret set there as set, and never writes a second value
 * over it (dotenv would take the later one).
 * @param {string} text .dev.vars as it is
 * @returns {Record<string, string>}
 */
export function readDevVars(text) {
	return dotenv.parse(text);
}

/**
 * @param {{ devVars: Record<string, string>, env: Record<string, string | undefined>, base: string, urlSecrets: string[], webhookSecrets: string[], sink: string | null }} input
 *   devVars: .dev.vars as read; env: npm start's environment; base: the local server's origin;
 *   urlSecrets, webhookSecrets: the secrets fleet.yaml names; sink: the emulator's origin, or null
 *   when it does not run (a real API key).
 * @returns {{ vars: string[], secrets: string[], sunk: string[], madeHooks: string[], envOnly: string[] }}
 *   vars: `--var` values (NAME:value), none of them secret; secrets: secrets made for the run
 *   (NAME=value lines, for an env file: see runEnvFile); sunk: URL secrets pointed at the emulator's sink; madeHooks:
 *   webhook secrets to make into .dev.vars; envOnly: secrets set in the environment and not in
 *   .dev.vars, which the Worker does not get (to say so).
 */
export function localVars({ devVars, env, base, urlSecrets, webhookSecrets, sink }) {
	const vars = [];
	// Not a secret, so the environment's is passed on, and wins over .dev.vars's: `PUBLIC_URL=https://
	// <tunnel> npm start` is asked for this run (it was dropped, and the Worker got "").
	if (env.PUBLIC_URL) vars.push(`PUBLIC_URL:${env.PUBLIC_URL}`);
	else if (!devVars.PUBLIC_URL) vars.push(`PUBLIC_URL:${base}`);
	// Secrets are not put on wrangler's command line, which any local user can read: one set only in
	// the environment is treated as unset (sunk, or made), as the Worker sees it, and said.
	const unset = (name) => !devVars[name];
	const sunk = sink === null ? [] : urlSecrets.filter(unset);
	for (const name of sunk) vars.push(`${name}:${sink}/__sink/${name}`);
	// A sunk URL's posts are signed with a key made for the run, as a receiver's would be: unset, a
	// webhook tool signs with its URL, which drover doctor rightly warns of on a fresh start. The sink
	// checks no signature, so the key need not be kept; a URL of the user's own gets no made key.
	// Not a `--var`: wrangler's command line is there for any local user to read (ps).
	const secrets = [];
	for (const name of sunk) if (unset(`${name}_SIGNING_KEY`)) secrets.push(`${name}_SIGNING_KEY=${randomBytes(24).toString("hex")}`);
	const madeHooks = webhookSecrets.filter(unset);
	// The key first: a shell exporting ANTHROPIC_API_KEY (as Anthropic's SDKs read it) would otherwise
	// see the emulator answer with no word of why.
	const envOnly = ["ANTHROPIC_API_KEY", ...urlSecrets, ...webhookSecrets].filter((name) => unset(name) && env[name]);
	return { vars, secrets, sunk, madeHooks, envOnly };
}

/**
 * The env file that hands `wrangler dev` the run's secrets, read after .dev.vars (`--env-file .dev.vars
 * --env-file <this>`: wrangler reads no .dev.vars of its own once given an env file, and a later
 * file's values win). wrangler expands `$NAME` and `${NAME}` in env files, not in .dev.vars read as
 * such: a .dev.vars entry with a `$` is said again here with each `$` escaped (`\$`, which wrangler
 * reads as a `$`), so the Worker gets its value as before. Entries are found as wrangler's dotenv
 * finds them, so a quoted value over several lines is said again whole.
 * @param {string} devVarsText .dev.vars as it is
 * @param {string[]} secrets NAME=value lines (localVars's secrets)
 * @returns {string}
 */
export function runEnvFile(devVarsText, secrets) {
	const dollars = [];
	for (const [, name, value = ""] of devVarsText.replace(/\r\n?/g, "\n").matchAll(DOTENV_LINE)) {
		if (value.includes("$")) dollars.push(`${name}=${value.trim().replaceAll("$", "\\$")}`);
	}
	return [...dollars, ...secrets, ""].join("\n");
}

// dotenv 16's own expression for an entry (lib/main.js, BSD-2-Clause), which wrangler parses env files with.
const DOTENV_LINE = /(?:^|^)\s*(?:export\s+)?([\w.-]+)(?:\s*=\s*?|:\s+?)(\s*'(?:\\'|[^'])*'|\s*"(?:\\"|[^"])*"|\s*`(?:\\`|[^`])*`|[^#\r\n]+)?\s*(?:#.*)?(?:$|$)/gm;

/** The name's start of the private directory an `npm start` keeps its env file in; its pid follows. */
export const ENV_DIR_PREFIX = "drover-start-env-";

/**
 * A start killed outright (SIGKILL, a crash) could not remove its env file, which may say .dev.vars
 * entries again: a later start removes those of starts no longer running (the pid in the name).
 * @param {string} dir the temporary directory they are made in
 */
export function removeOrphanEnvDirs(dir) {
	for (const name of readdirSync(dir)) {
		const pid = Number(/^drover-start-env-(\d+)-/.exec(name)?.[1]);
		if (!pid || running(pid)) continue;
		try {
			rmSync(path.join(dir, name), { recursive: true, force: true });
		} catch {
			// Another user's (a shared /tmp): not ours to remove.
		}
	}
}

/** @param {number} pid */
function running(pid) {
	try {
		process.kill(pid, 0);
		return true;
	} catch (err) {
		// EPERM: running, as another user.
		return /** @type {NodeJS.ErrnoException} */ (err).code === "EPERM";
	}
}
