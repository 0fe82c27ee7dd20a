// npm start skips `wrangler d1 migrations apply --local` when the local D1 database already records
// every migration (scripts/local-d1.mjs), reading Miniflare's SQLite file. Checked against the layout
// this wrangler really writes, in a scratch checkout (the repository's files linked in, its own
// migrations/ and .wrangler/).
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LOCAL_D1_DIR, localMigrationsCurrent } from "../../scripts/local-d1.mjs";

const ROOT = path.resolve(import.meta.dirname, "../..");
const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratchCheckout(): string {
	const checkout = mkdtempSync(path.join(tmpdir(), "drover-local-d1-"));
	dirs.push(checkout);
	for (const name of readdirSync(ROOT)) if (![".git", ".wrangler", ".dev.vars", "dist", "migrations"].includes(name)) symlinkSync(path.join(ROOT, name), path.join(checkout, name));
	mkdirSync(path.join(checkout, "migrations"));
	for (const name of readdirSync(path.join(ROOT, "migrations"))) copyFileSync(path.join(ROOT, "migrations", name), path.join(checkout, "migrations", name));
	return checkout;
}

/** `wrangler d1 migrations apply DB --local` there, as npm start runs it. */
function applyLocally(checkout: string): void {
	const r = spawnSync(process.execPath, [path.join(ROOT, "node_modules/wrangler/bin/wrangler.js"), "d1", "migrations", "apply", "DB", "--local"], {
		cwd: checkout,
		encoding: "utf8",
		env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", WRANGLER_SEND_METRICS: "false", WRANGLER_SEND_ERROR_REPORTS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" } as unknown as NodeJS.ProcessEnv,
	});
	expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
}

describe("npm start's check of the local D1 migrations", () => {
	it("finds them all applied once wrangler has applied them, and not before, nor once a new one is added", async () => {
		const checkout = scratchCheckout();
		expect(await localMigrationsCurrent(checkout)).toBe(false);
		applyLocally(checkout);
		expect(await localMigrationsCurrent(checkout)).toBe(true);
		// A pull brings a migration: wrangler must run again, and then it is applied.
		writeFileSync(path.join(checkout, "migrations", "0999_later.sql"), "CREATE TABLE later_table (id INTEGER PRIMARY KEY);\n");
		expect(await localMigrationsCurrent(checkout)).toBe(false);
		applyLocally(checkout);
		expect(await localMigrationsCurrent(checkout)).toBe(true);
	}, 60_000);

	it("leaves it to wrangler when it cannot tell: two databases there, or a file that is not one", async () => {
		const checkout = scratchCheckout();
		applyLocally(checkout);
		const dir = path.join(checkout, LOCAL_D1_DIR);
		const [file] = readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
		copyFileSync(path.join(dir, file!), path.join(dir, `other-${file}`));
		expect(await localMigrationsCurrent(checkout)).toBe(false);
		rmSync(path.join(dir, `other-${file}`));
		expect(await localMigrationsCurrent(checkout)).toBe(true);
		for (const f of readdirSync(dir).filter((f) => f.startsWith(file!))) rmSync(path.join(dir, f));
		writeFileSync(path.join(dir, file!), "not a database");
		expect(await localMigrationsCurrent(checkout)).toBe(false);
	}, 60_000);
});
