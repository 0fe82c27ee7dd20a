// Whether `npm start` may skip `wrangler d1 migrations apply --local`: about 3 s of wrangler's start
// on every start after the first, to find nothing to apply.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Where Miniflare keeps the local D1 databases under .wrangler/state (its layout, not an API). */
export const LOCAL_D1_DIR = path.join(".wrangler", "state", "v3", "d1", "miniflare-D1DatabaseObject");
/** What the last apply left: which file is the database, for which wrangler.toml. Gone with the state. */
const STAMP = path.join(".wrangler", "state", "drover-local-d1.json");

/** @param {string} root */
const configDigest = (root) => createHash("sha256").update(readFileSync(path.join(root, "wrangler.toml"))).digest("hex");

/**
 * True when the database the last apply wrote (its file, for this very wrangler.toml: a changed
 * database_id makes Miniflare use another file) records every migration in migrations/ as applied,
 * read from Miniflare's SQLite file itself. Anything else (no stamp yet, another wrangler.toml, a
 * file gone or unreadable, another layout) answers false, and wrangler applies them as it always did.
 * @param {string} root  the checkout
 * @returns {Promise<boolean>}
 */
export async function localMigrationsCurrent(root) {
	try {
		const stamp = JSON.parse(readFileSync(path.join(root, STAMP), "utf8"));
		if (stamp.config !== configDigest(root) || typeof stamp.file !== "string") return false;
		const wanted = readdirSync(path.join(root, "migrations")).filter((f) => f.endsWith(".sql"));
		if (wanted.length === 0) return false;
		// Imported here, not above: start.mjs says which Node it needs before anything fails to load.
		const { DatabaseSync } = await import("node:sqlite");
		const db = new DatabaseSync(path.join(root, LOCAL_D1_DIR, path.basename(stamp.file)), { readOnly: true });
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

/**
 * The local D1 databases' files there now (none before a first start).
 * @param {string} root  the checkout
 * @returns {string[]}
 */
export function localD1Files(root) {
	try {
		return readdirSync(path.join(root, LOCAL_D1_DIR)).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
	} catch {
		return [];
	}
}

/**
 * After wrangler applied the migrations: notes which file is the database, for which wrangler.toml.
 * Known when there is one, or when the apply made one (a first start, another database_id); with
 * two or more already there it cannot be told which wrangler wrote, and the note is removed, so each
 * start applies again.
 * @param {string} root  the checkout
 * @param {string[]} before  localD1Files as the apply began
 */
export function recordLocalMigrations(root, before) {
	const now = localD1Files(root);
	const made = now.filter((f) => !before.includes(f));
	const file = now.length === 1 ? now[0] : made.length === 1 ? made[0] : undefined;
	try {
		if (file) writeFileSync(path.join(root, STAMP), `${JSON.stringify({ config: configDigest(root), file })}\n`);
		else rmSync(path.join(root, STAMP), { force: true });
	} catch {
		// The next start applies them again.
	}
}
