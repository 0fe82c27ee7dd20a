#!/usr/bin/env node
// `npm test` runs the dashboard tests in Debian's Chromium (playwright-core never downloads a
// browser here), and the CLI's completion tests in zsh and fish as well as bash. On a fresh machine
// they are not installed yet: install them once from Debian's packages when we can (root with apt),
// or say exactly what is missing.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const TOOLS = [
	{ path: "/usr/bin/chromium", pkg: "chromium", for: "the dashboard tests" },
	{ path: "/usr/bin/zsh", pkg: "zsh", for: "the CLI's zsh completion test" },
	{ path: "/usr/bin/fish", pkg: "fish", for: "the CLI's fish completion test" },
];
const missing = TOOLS.filter((t) => !existsSync(t.path));
if (missing.length > 0) {
	const root = process.getuid?.() === 0;
	const apt = spawnSync("sh", ["-c", "command -v apt-get"], { stdio: "ignore" }).status === 0;
	if (!root || !apt) {
		for (const t of missing) console.error(`${t.for} need Debian's ${t.pkg} at ${t.path}`);
		console.error(`install them with \`sudo apt-get install ${missing.map((t) => t.pkg).join(" ")}\``);
		process.exit(1);
	}
	console.log(`Installing Debian's ${missing.map((t) => t.pkg).join(", ")} for the tests (once)…`);
	const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
	for (const args of [["update"], ["install", "-y", "--no-install-recommends", ...missing.map((t) => t.pkg)]]) {
		const r = spawnSync("apt-get", args, { stdio: "inherit", env });
		if (r.status !== 0) process.exit(r.status ?? 1);
	}
}
