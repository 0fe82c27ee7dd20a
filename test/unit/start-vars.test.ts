import { describe, expect, it } from "vitest";
import dotenv from "dotenv";
import dotenvExpand from "dotenv-expand";
import { localVars, readDevVars, runEnvFile } from "../../scripts/local-vars.mjs";

// npm start always writes .dev.vars, and while it exists wrangler dev reads the Worker's vars from it
// and from --var only: what the environment sets reaches the Worker only as a --var.
const base = "http://localhost:8787";
const sink = "http://127.0.0.1:8788";
const fleet = { urlSecrets: ["DIGEST_SLACK_WEBHOOK_URL"], webhookSecrets: ["TRIAGE_WEBHOOK_SECRET"] };

describe("npm start's reading of .dev.vars", () => {
	it("reads it as wrangler dev does: a name with digits, a quoted or empty value, CRLF lines", () => {
		const text = 'API_TOKENS=local:admin:t0k3n\r\nHOOK2_SECRET=mine-already\r\nSLACK2_URL="https://hooks.slack.example/services/T/B/x"\r\nANTHROPIC_API_KEY=""\r\n# a comment\r\n';
		const vars = readDevVars(text);
		expect(vars).toEqual({ API_TOKENS: "local:admin:t0k3n", HOOK2_SECRET: "mine-already", SLACK2_URL: "https://hooks.slack.example/services/T/B/x", ANTHROPIC_API_KEY: "" });
		// So a secret set there is not made again (a second value would win) nor sunk.
		const out = localVars({ devVars: vars, env: {}, base, sink, urlSecrets: ["SLACK2_URL"], webhookSecrets: ["HOOK2_SECRET"] });
		expect(out.madeHooks).toEqual([]);
		expect(out.sunk).toEqual([]);
		expect(dotenv.parse(text)).toEqual(vars);
	});
});

describe("npm start's vars for wrangler dev", () => {
	it("passes a PUBLIC_URL set in the environment, over .dev.vars's", () => {
		const tunnel = "https://drover-dev.trycloudflare.example";
		expect(localVars({ devVars: {}, env: { PUBLIC_URL: tunnel }, base, sink, ...fleet }).vars).toContain(`PUBLIC_URL:${tunnel}`);
		expect(localVars({ devVars: { PUBLIC_URL: "https://from-dev-vars.example" }, env: { PUBLIC_URL: tunnel }, base, sink, ...fleet }).vars).toContain(`PUBLIC_URL:${tunnel}`);
		// .dev.vars's is read by wrangler itself; with neither, the local server's address.
		expect(localVars({ devVars: { PUBLIC_URL: "https://from-dev-vars.example" }, env: {}, base, sink, ...fleet }).vars.filter((v) => v.startsWith("PUBLIC_URL:"))).toEqual([]);
		expect(localVars({ devVars: {}, env: { PUBLIC_URL: "" }, base, sink, ...fleet }).vars).toContain(`PUBLIC_URL:${base}`);
	});

	it("treats a secret set only in the environment as unset, as the Worker sees it, and says so; never puts it on wrangler's command line", () => {
		const env = { DIGEST_SLACK_WEBHOOK_URL: "https://hooks.slack.example/services/T0/B0/secret", TRIAGE_WEBHOOK_SECRET: "from-the-environment" };
		const out = localVars({ devVars: {}, env, base, sink, ...fleet });
		expect(out.sunk).toEqual(["DIGEST_SLACK_WEBHOOK_URL"]);
		expect(out.vars).toContain(`DIGEST_SLACK_WEBHOOK_URL:${sink}/__sink/DIGEST_SLACK_WEBHOOK_URL`);
		expect(out.madeHooks).toEqual(["TRIAGE_WEBHOOK_SECRET"]);
		expect(out.envOnly).toEqual(["DIGEST_SLACK_WEBHOOK_URL", "TRIAGE_WEBHOOK_SECRET"]);
		expect(out.vars.join(" ")).not.toMatch(/secret|from-the-environment/);
		// Set in .dev.vars, wrangler reads them: nothing to do, nothing to say.
		const set = localVars({ devVars: { DIGEST_SLACK_WEBHOOK_URL: "https://x.example", TRIAGE_WEBHOOK_SECRET: "s" }, env, base, sink, ...fleet });
		expect(set).toMatchObject({ sunk: [], madeHooks: [], envOnly: [] });
		// With a real key there is no sink: the unset secret stays unset, and is still said.
		expect(localVars({ devVars: {}, env, base, sink: null, ...fleet })).toMatchObject({ sunk: [], envOnly: ["DIGEST_SLACK_WEBHOOK_URL", "TRIAGE_WEBHOOK_SECRET"] });
	});

	it("gives each URL sunk into the emulator a signing key of its own for the run, so its posts are signed as a receiver's, and no key to a URL of the user's", () => {
		const out = localVars({ devVars: {}, env: {}, base, sink, ...fleet });
		const keys = out.secrets.filter((v) => v.startsWith("DIGEST_SLACK_WEBHOOK_URL_SIGNING_KEY="));
		expect(keys).toHaveLength(1);
		expect(keys[0]).toMatch(/^DIGEST_SLACK_WEBHOOK_URL_SIGNING_KEY=[0-9a-f]{48}$/);
		// Made afresh each run: not a fixed key anyone could read here.
		expect(localVars({ devVars: {}, env: {}, base, sink, ...fleet }).secrets).not.toContain(keys[0]);
		// One the user set in .dev.vars is wrangler's to read; a URL of their own, or no sink, gets none.
		for (const devVars of [{ DIGEST_SLACK_WEBHOOK_URL_SIGNING_KEY: "k".repeat(32) }, { DIGEST_SLACK_WEBHOOK_URL: "https://x.example" }] as Record<string, string>[]) {
			expect(localVars({ devVars, env: {}, base, sink, ...fleet }).secrets).toEqual([]);
		}
		expect(localVars({ devVars: {}, env: {}, base, sink: null, ...fleet }).secrets).toEqual([]);
	});

	it("puts no made signing key on wrangler's command line (--var), which any local user can read with ps", () => {
		const out = localVars({ devVars: {}, env: {}, base, sink, ...fleet });
		const key = out.secrets[0]!.split("=")[1]!;
		expect(out.vars.filter((v) => v.includes("SIGNING_KEY") || v.includes(key))).toEqual([]);
		// The URL the key signs for is no secret (the emulator's sink): still a --var.
		expect(out.vars).toContain(`DIGEST_SLACK_WEBHOOK_URL:${sink}/__sink/DIGEST_SLACK_WEBHOOK_URL`);
	});

	it("writes the run's secrets to an env file read after .dev.vars, saying again each .dev.vars entry with a $, escaped, so wrangler does not expand it", () => {
		const devVars = ["# Local secrets", "API_TOKENS=local:admin:tok$HOME\\$x${USER}end", "ANTHROPIC_API_KEY=", 'export PASS = "a$b" # cost $5', "PLAIN=no-dollar", ""].join("\n");
		expect(runEnvFile(devVars, ["A_SIGNING_KEY=00ff"])).toBe(
			["API_TOKENS=local:admin:tok\\$HOME\\\\$x\\${USER}end", 'PASS="a\\$b"', "A_SIGNING_KEY=00ff", ""].join("\n"),
		);
		expect(runEnvFile("API_TOKENS=local:admin:plain\r\nX=1\n", ["K=1"])).toBe("K=1\n");
	});

	it("gives the Worker each .dev.vars value as written through wrangler's own reading of the two env files (dotenv, then dotenv-expand), a quoted value over several lines with a $ on any line too", () => {
		const devVars = [
			"API_TOKENS=local:admin:tok$HOME\\$x${USER}end",
			'PEM="-----BEGIN KEY-----',
			"ab$cd${HOME}",
			'-----END KEY-----"',
			"SINGLE='one",
			"two $PATH'",
			"CRLF=x$y\r",
			"PLAIN=no-dollar",
			"",
		].join("\n");
		const written = dotenv.parse(devVars);
		expect(written.PEM).toBe("-----BEGIN KEY-----\nab$cd${HOME}\n-----END KEY-----");
		// As wrangler's getVarsForDev reads `--env-file .dev.vars --env-file <run's>`: parsed in turn,
		// the later winning, then expanded once, with no process environment.
		const parsed = { ...dotenv.parse(devVars), ...dotenv.parse(runEnvFile(devVars, [])) };
		const seen: Record<string, string> = {};
		dotenvExpand.expand({ parsed, processEnv: seen });
		expect(seen).toEqual(written);
	});

	it("says an ANTHROPIC_API_KEY set only in the environment is not used (the emulator answers), and never passes it", () => {
		const env = { ANTHROPIC_API_KEY: "sk-ant-api03-from-the-shell" };
		const out = localVars({ devVars: {}, env, base, sink, ...fleet });
		expect(out.envOnly).toEqual(["ANTHROPIC_API_KEY"]);
		expect(out.vars.join(" ")).not.toContain("sk-ant");
		// In .dev.vars, wrangler reads it and there is no emulator: nothing to say.
		expect(localVars({ devVars: { ANTHROPIC_API_KEY: "sk-ant-api03-x" }, env, base, sink: null, ...fleet }).envOnly).toEqual([]);
	});
});
