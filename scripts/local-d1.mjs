// Whether `npm start` may skip `wrangler d1 migrations apply --local`: about 3 s of wrangler's start
// on every start after the first, to find nothing to apply.
import { readdirSync } from "node:fs";
import path from "node:path";

/** Where Miniflare keeps the local D1 databases under .wrangler/state (its layout, not an API). */
export const LOCAL_D1_DIR = path.join(".wrangler", "state", "v3", "d1", "miniflare-D1DatabaseObject");

/**
 * True when the local D1 database already records every migration in migrations/ as applied, read
 * from Miniflare's SQLite file itself. drover binds one D1 database, so the directory holds one such
 * file; anything else (no state yet, another layout, two files, one that cannot be read) answers
 * false, and wrangler applies the migrations as it always did.
 * @param {string} root  the checkout
 * @returns {Promise<boolean>}
 */
export async function localMigrationsCurrent(root) {
	try {
		// Imported here, not above: start.mjs says which Node it needs before anything fails to load.
		const { DatabaseSync } = await import("node:sqlite");
		const wanted = readdirSync(path.join(root, "migrations")).filter((f) => f.endsWith(".sql"));
		const dir = path.join(root, LOCAL_D1_DIR);
		const files = readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
		if (files.length !== 1 || wanted.length === 0) return false;
		const db = new DatabaseSync(path.join(dir, files[0]), { readOnly: true });
		try {
			const applied = new Set(db.prepare("SELECT name FROM d1_migrations").all().map((row) => row.name));
			return wanted.every((name) => applied.has(name));
		} finally {
			db.close();
		}
	} catch {
		return false;
	}
}
