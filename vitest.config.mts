import { readFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig, type Plugin } from "vitest/config";
import { API_TOKENS, OTHER_WEBHOOK_SECRET, WEBHOOK_SECRET } from "./test/helpers/tokens.ts";

// wrangler bundles fleet.yaml as its bytes (an ArrayBuffer) and the dashboard's *.client.js as text
// (the `rules` in wrangler.toml); Vite needs the same rules for tests.
function textModules(): Plugin {
	return {
		name: "drover-text-modules",
		async load(id) {
			if (id.endsWith(".yaml")) {
				const base64 = (await readFile(id)).toString("base64");
				return `export default Uint8Array.from(atob(${JSON.stringify(base64)}), (c) => c.charCodeAt(0)).buffer;`;
			}
			if (!id.endsWith(".client.js")) return null;
			return `export default ${JSON.stringify(await readFile(id, "utf8"))};`;
		},
	};
}

// Every package the Worker, the emulator and the tests import, by the specifier they use. One not
// listed still loads, module by module, beside the bundled copy of its package: two copies of its
// classes, which instanceof tells apart. A new import of a package belongs here.
const PREBUNDLED = [
	"hono",
	"hono/accepts",
	"hono/body-limit",
	"hono/factory",
	"hono/http-exception",
	"hono/jsx",
	"hono/jsx/jsx-runtime",
	"hono/jsx/jsx-dev-runtime",
	"hono/route",
	"hono/router/pattern-router",
	"hono/types",
	"hono/utils/http-status",
	"@hono/zod-openapi",
	"zod",
	"@anthropic-ai/sdk",
	"@anthropic-ai/sdk/client",
	"@anthropic-ai/sdk/core/error",
	"@anthropic-ai/sdk/lib/MessageStream",
	"@anthropic-ai/sdk/resources/messages/messages",
	"@anthropic-ai/sdk/_vendor/partial-json-parser/parser",
	"@cfworker/json-schema",
	"croner",
	"yaml",
];

export default defineConfig(async () => {
	const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
	// A plugin per project: it keeps per-project state.
	const plugins = () => [
		textModules(),
		cloudflareTest({
			wrangler: { configPath: "./wrangler.toml" },
			miniflare: {
				bindings: {
					TEST_MIGRATIONS: migrations,
					API_TOKENS,
					// Never sent anywhere real: outbound requests in tests go to fakes declared in the test.
					ANTHROPIC_API_KEY: "sk-ant-test-0000000000000000",
					TRIAGE_WEBHOOK_SECRET: WEBHOOK_SECRET,
					OTHER_WEBHOOK_SECRET,
					// A webhook tool target for agent-loop tests; the tests fake this origin.
					TEST_TICKETS_URL: "https://tickets.example.test/hook",
					// Delivery, hook and alert targets for the effects tests; the tests fake these origins.
					TEST_DELIVERY_URL: "https://deliver.example.test/webhook",
					TEST_SLACK_URL: "https://slack.example.test/services/T0/B0/xyz",
					TEST_DISCORD_URL: "https://discord.example.test/api/webhooks/1/abc",
					TEST_HOOK_URL: "https://hooks.example.test/after-run",
					TEST_ERROR_HOOK_URL: "https://hooks.example.test/on-error",
					// A target whose URL carries a user and password, sent as Basic auth.
					TEST_BASIC_AUTH_URL: "https://drover-bot:p%40ss-w0rd-0123@basic.example.test/in",
					ALERT_WEBHOOK_URL: "https://alerts.example.test/drover",
					// fleet.yaml's delivery targets (an agent whose target is unset is auto-paused); a
					// standing fake answers them (test/setup/outbound.ts).
					DIGEST_SLACK_WEBHOOK_URL: "https://fleet-deliveries.example.test/digest",
					SITE_WATCH_WEBHOOK_URL: "https://fleet-deliveries.example.test/site-watch",
				},
			},
		}),
	];
	const inWorkerd = {
		// Each test file's runtime loads the whole Worker: with its dependencies pre-bundled that is
		// about 200 module fetches (125 of them drover's own) instead of about 360, and a file's runtime
		// starts in about 2.5 s instead of 3.6. Listed, not discovered, so that no run re-bundles midway.
		deps: { optimizer: { ssr: { enabled: true, include: PREBUNDLED } } },
		setupFiles: ["./test/setup/apply-migrations.ts", "./test/setup/outbound.ts"],
		// vitest's 5 s default fails tests that take under 2 s on a quiet machine when a shared 2-core
		// one is loaded (5.7 s and 9.9 s seen for two such); a test that hangs still fails, later.
		testTimeout: 20_000,
	};
	// Storage is isolated per file by giving each file a runtime of its own (a workerd process, its
	// Worker loaded afresh: about 2.5 s). Unit tests check functions, not what storage holds, so they
	// share one runtime per vitest worker: a unit test must not depend on storage another file writes.
	const workers = {
		plugins: plugins(),
		test: { name: "workers", include: ["test/**/*.test.ts"], exclude: ["test/e2e/**", "test/unit/**", "test/probes/**"], ...inWorkerd },
	};
	// Walks too long for every run (weeks of ticks), run on demand: `npm run probe`.
	const probes = {
		plugins: plugins(),
		test: { name: "probes", include: ["test/probes/**/*.test.ts"], ...inWorkerd, testTimeout: 3_600_000 },
	};
	const unit = {
		plugins: plugins(),
		test: { name: "unit", include: ["test/unit/**/*.test.ts"], isolate: false, ...inWorkerd },
	};
	// End-to-end: the real bundle in workerd (Miniflare's Node API) and the real CLI and browser.
	const e2e = {
		test: {
			name: "e2e",
			include: ["test/e2e/**/*.test.ts"],
			environment: "node",
			globalSetup: ["./test/e2e/global-setup.ts"],
			testTimeout: 60_000,
			hookTimeout: 120_000,
			// One local Worker serves every e2e file: run them one at a time.
			fileParallelism: false,
		},
	};
	// vitest's default in a run is one worker fewer than the cores, which on two cores runs the
	// workerd files one at a time; their runtimes wait on module fetches and storage as much as they
	// compute, so one per core runs the suite about a third faster (a measured 361 s against 244 s).
	const maxWorkers = availableParallelism();
	return { test: { maxWorkers, projects: process.env.DROVER_PROBES ? [probes] : [workers, unit, e2e], reporters: ["default", "./test/reporters/categories.ts"] } };
});
