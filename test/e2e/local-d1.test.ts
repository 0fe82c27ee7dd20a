// npm start skips `wrangler d1 migrations apply --local` when the local D1 database the last apply
// wrote, for the same wrangler.toml, already records every migration (scripts/local-d1.mjs), read
// from Miniflare's SQLite file. Checked against the layout this wrangler really writes, in a scratch
// checkout (the repository's files linked in; its own migrations/, wrangler.toml and .wrangler/).
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pendingMigrations } from "../../scripts/deploy.mjs";
import { LOCAL_D1_DIR, localD1Files, localMigrationsCurrent, recordLocalMigrations } from "../../scripts/local-d1.mjs";

const ROOT = path.resolve(import.meta.dirname, "../..");
const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratchCheckout(): string {
	const checkout = mkdtempSync(path.join(tmpdir(), "drover-local-d1-"));
	dirs.push(checkout);
	for (const name of readdirSync(ROOT)) if (![".git", ".wrangler", ".dev.vars", "dist", "migrations", "wrangler.toml"].includes(name)) symlinkSync(path.join(ROOT, name), path.join(checkout, name));
	copyFileSync(path.join(ROOT, "wrangler.toml"), path.join(checkout, "wrangler.toml"));
	mkdirSync(path.join(checkout, "migrations"));
	for (const name of readdirSync(path.join(ROOT, "migrations"))) copyFileSync(path.join(ROOT, "migrations", name), path.join(checkout, "migrations", name));
	return checkout;
}

/** `wrangler d1 migrations apply DB --local` there, and the note of it, as npm start makes them. */
function applyLocally(checkout: string): void {
	const before = localD1Files(checkout);
	const r = spawnSync(process.execPath, [path.join(ROOT, "node_modules/wrangler/bin/wrangler.js"), "d1", "migrations", "apply", "DB", "--local"], {
		cwd: checkout,
		encoding: "utf8",
		env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", WRANGLER_SEND_METRICS: "false", WRANGLER_SEND_ERROR_REPORTS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" } as unknown as NodeJS.ProcessEnv,
	});
	expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
	recordLocalMigrations(checkout, before);
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

	it("leaves it to wrangler when wrangler.toml changed (another database_id is another file), or the database cannot be read", async () => {
		const checkout = scratchCheckout();
		applyLocally(checkout);
		const dir = path.join(checkout, LOCAL_D1_DIR);
		const [file] = readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
		// Another database_id: Miniflare keeps that database in a file of its own, not yet migrated.
		const toml = readFileSync(path.join(checkout, "wrangler.toml"), "utf8");
		const id = /database_id\s*=\s*"([^"]+)"/.exec(toml)?.[1];
		expect(id).toBeTruthy();
		writeFileSync(path.join(checkout, "wrangler.toml"), toml.replace(id!, "00000000-0000-4000-8000-000000000001"));
		expect(await localMigrationsCurrent(checkout)).toBe(false);
		applyLocally(checkout);
		expect(readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite")).toHaveLength(2);
		expect(await localMigrationsCurrent(checkout)).toBe(true);
		// Back to the first: two files, and nothing says which wrangler reads, so wrangler runs each time.
		writeFileSync(path.join(checkout, "wrangler.toml"), toml);
		expect(await localMigrationsCurrent(checkout)).toBe(false);
		applyLocally(checkout);
		expect(await localMigrationsCurrent(checkout)).toBe(false);
		// One database again, so noted once wrangler has run; then a file that is not a database.
		for (const f of readdirSync(dir).filter((f) => !f.startsWith(file!) && !f.startsWith("metadata"))) rmSync(path.join(dir, f));
		applyLocally(checkout);
		expect(await localMigrationsCurrent(checkout)).toBe(true);
		for (const f of readdirSync(dir).filter((f) => f.startsWith(file!))) rmSync(path.join(dir, f));
		writeFileSync(path.join(dir, file!), "not a database");
		expect(await localMigrationsCurrent(checkout)).toBe(false);
	}, 60_000);
});

// `npm run deploy` (scripts/deploy.mjs) lists the migrations again after applying them, and deploys
// only when none is pending: wrangler's apply exits 0 when its question is answered "no", leaving the
// database just as it was before, which is the state checked here against the listing wrangler prints.
describe("npm run deploy's check that D1's migrations were applied", () => {
	it("names every migration of a database none was applied to, and none once they are", () => {
		const checkout = scratchCheckout();
		const all = readdirSync(path.join(checkout, "migrations")).filter((f) => f.endsWith(".sql")).sort();
		expect(pendingMigrations(checkout, "--local").sort()).toEqual(all);
		applyLocally(checkout);
		expect(pendingMigrations(checkout, "--local")).toEqual([]);
		writeFileSync(path.join(checkout, "migrations", "0999_later.sql"), "CREATE TABLE later_table (id INTEGER PRIMARY KEY);\n");
		expect(pendingMigrations(checkout, "--local")).toEqual(["0999_later.sql"]);
	}, 60_000);

	it("throws with wrangler's words when wrangler cannot list them", () => {
		const checkout = scratchCheckout();
		const toml = readFileSync(path.join(checkout, "wrangler.toml"), "utf8");
		writeFileSync(path.join(checkout, "wrangler.toml"), toml.replace(/binding\s*=\s*"DB"/, 'binding = "NOT_DB"'));
		expect(() => pendingMigrations(checkout, "--local")).toThrow(/wrangler d1 migrations list DB --local failed:[\s\S]*DB/);
	}, 60_000);
});
