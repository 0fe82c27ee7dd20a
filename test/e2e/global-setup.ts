import { execFileSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
// @ts-expect-error the bench harness is plain ESM without type declarations
import { bundle, startEmulator, startLocalWorker } from "../../bench/lib/local-worker.mjs";
import { API_TOKENS, TOKENS } from "../helpers/tokens.ts";

export interface E2eContext {
	/** The local Worker's base URL, as a deployed one's would be. */
	url: string;
	emulatorUrl: string;
	tokens: typeof TOKENS;
	/** The Worker's log lines, one a line, as its console wrote them. */
	logFile: string;
	/** The bundle's source map, as `wrangler deploy` would upload it. */
	sourceMap: string;
	/** Where the tests, and the CLIs and shells they run (as TMPDIR), make their temporary files: removed with the rest at the run's end. */
	scratchDir: string;
}

declare module "vitest" {
	export interface ProvidedContext {
		drover: E2eContext;
	}
}

/**
 * Starts drover once for the end-to-end tests: the bundle `wrangler deploy` would ship, in workerd,
 * with fresh local DO, D1 and R2 state, talking to the Messages API emulator (no key anywhere).
 */
export default async function setup(project: TestProject) {
	// The CLI tests run the bin as users do, on the bundle npm's prepare step builds: built again here,
	// so that it is of the sources under test. Its stderr, piped, is in the error should it fail.
	execFileSync(process.execPath, [path.join(import.meta.dirname, "../../scripts/build-cli.ts")], { stdio: ["ignore", "ignore", "pipe"] });
	const dir = mkdtempSync(path.join(tmpdir(), "drover-e2e-"));
	const scratchDir = path.join(dir, "scratch");
	mkdirSync(scratchDir);
	const scriptPath = bundle(path.join(dir, "dist"));
	const emulator = await startEmulator();
	const logFile = path.join(dir, "worker.log");
	const worker = await startLocalWorker({
		scriptPath,
		persistDir: path.join(dir, "state"),
		onLog: ({ message }: { message: string }) => appendFileSync(logFile, `${message}\n`),
		// E2E_TICKETS_URL: a webhook tool's target; the emulator answers it 404, which the tests ignore.
		// fleet.yaml's delivery targets go to the emulator's sink, as `npm start` sends them: an agent
		// whose target is unset is auto-paused.
		// LOG_LEVEL debug: an expected error's request.failed line carries its stack only then, and the
		// stack mapper's test reads one.
		secrets: {
			LOG_LEVEL: "debug",
			API_TOKENS,
			ANTHROPIC_API_KEY: "",
			ANTHROPIC_BASE_URL: emulator.url,
			E2E_TICKETS_URL: `${emulator.url}/tickets`,
			DIGEST_SLACK_WEBHOOK_URL: `${emulator.url}/__sink/DIGEST_SLACK_WEBHOOK_URL`,
			SITE_WATCH_WEBHOOK_URL: `${emulator.url}/__sink/SITE_WATCH_WEBHOOK_URL`,
		},
	});
	const url = (await worker.mf.ready).toString().replace(/\/$/, "");
	project.provide("drover", { url, emulatorUrl: emulator.url, tokens: TOKENS, logFile, sourceMap: `${scriptPath}.map`, scratchDir });
	return async () => {
		await worker.dispose();
		await emulator.stop();
		rmSync(dir, { recursive: true, force: true });
	};
}
