import { readFile } from "node:fs/promises";
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig, type Plugin } from "vitest/config";
import { API_TOKENS, WEBHOOK_SECRET } from "./test/helpers/tokens.ts";

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

export default defineConfig(async () => {
	const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
	const workers = {
		plugins: [
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
						// A webhook tool target for agent-loop tests; the tests fake this origin.
						TEST_TICKETS_URL: "https://tickets.example.test/hook",
						// Delivery, hook and alert targets for the effects tests; the tests fake these origins.
						TEST_DELIVERY_URL: "https://deliver.example.test/webhook",
						TEST_SLACK_URL: "https://slack.example.test/services/T0/B0/xyz",
						TEST_DISCORD_URL: "https://discord.example.test/api/webhooks/1/abc",
						TEST_HOOK_URL: "https://hooks.example.test/after-run",
						TEST_ERROR_HOOK_URL: "https://hooks.example.test/on-error",
						ALERT_WEBHOOK_URL: "https://alerts.example.test/drover",
						// fleet.yaml's delivery targets (an agent whose target is unset is auto-paused); a
						// standing fake answers them (test/setup/outbound.ts).
						DIGEST_SLACK_WEBHOOK_URL: "https://fleet-deliveries.example.test/digest",
						SITE_WATCH_WEBHOOK_URL: "https://fleet-deliveries.example.test/site-watch",
					},
				},
			}),
		],
		test: {
			name: "workers",
			include: ["test/**/*.test.ts"],
			exclude: ["test/e2e/**"],
			setupFiles: ["./test/setup/apply-migrations.ts", "./test/setup/outbound.ts"],
		},
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
	return { test: { projects: [workers, e2e], reporters: ["default", "./test/reporters/categories.ts"] } };
});
