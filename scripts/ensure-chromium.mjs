#!/usr/bin/env node
// `npm test` runs the dashboard tests in Debian's Chromium (playwright-core never downloads a
// browser here). On a fresh machine it is not installed yet: install it once from Debian's
// packages when we can (root with apt), or say exactly what is missing.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const CHROMIUM = "/usr/bin/chromium";
if (!existsSync(CHROMIUM)) {
	const root = process.getuid?.() === 0;
	const apt = spawnSync("sh", ["-c", "command -v apt-get"], { stdio: "ignore" }).status === 0;
	if (!root || !apt) {
		console.error(`The dashboard tests need Debian's Chromium at ${CHROMIUM}: install it with \`sudo apt-get install chromium\`.`);
		process.exit(1);
	}
	console.log("Installing Debian's chromium for the dashboard tests (once)…");
	const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
	for (const args of [["update"], ["install", "-y", "--no-install-recommends", "chromium"]]) {
		const r = spawnSync("apt-get", args, { stdio: "inherit", env });
		if (r.status !== 0) process.exit(r.status ?? 1);
	}
}
