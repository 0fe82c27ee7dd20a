// `npm run deploy`, after `npm run check`: D1's migrations, then the Worker. wrangler's
// `d1 migrations apply` exits 0 when its confirmation is answered "no" (it returns without applying
// and without a word), which let the Worker deploy onto a database behind its code: the migrations
// are listed again after it, and the Worker is deployed only when none is pending.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";

const ROOT = path.resolve(import.meta.dirname, "..");
const WRANGLER = path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");

/**
 * The names wrangler lists as not yet applied to D1 (`wrangler d1 migrations list DB`), empty when
 * it says there is none. Its own failure (no login, no network, a wrong database_id) throws, with
 * what it printed.
 * @param {string} root  the checkout (wrangler.toml, migrations/)
 * @param {"--remote" | "--local"} where
 * @returns {string[]}
 */
export function pendingMigrations(root, where) {
	// Its listing is logged at wrangler's "log" level: a WRANGLER_LOG of info, warn or error would hide it.
	const env = { ...process.env, WRANGLER_LOG: "log" };
	const r = spawnSync(process.execPath, [WRANGLER, "d1", "migrations", "list", "DB", where], { cwd: root, encoding: "utf8", env });
	const output = `${r.stdout ?? ""}${r.stderr ?? ""}`;
	if (r.status !== 0) throw new Error(`wrangler d1 migrations list DB ${where} failed:\n${output}`);
	if (/No migrations to apply/.test(output)) return [];
	const names = [...output.matchAll(/\b\d{4}_[\w.-]+?\.sql\b/g)].map((m) => m[0]);
	// A listing neither empty nor naming one: wrangler's words changed, so nothing is assumed applied.
	if (names.length === 0) throw new Error(`wrangler d1 migrations list DB ${where} said neither which migrations are pending nor that none is:\n${output}`);
	return [...new Set(names)];
}

/** @param {string[]} args */
function wrangler(args) {
	const r = spawnSync(process.execPath, [WRANGLER, ...args], { cwd: ROOT, stdio: "inherit" });
	if (r.status !== 0) process.exit(r.status ?? 1);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
	wrangler(["d1", "migrations", "apply", "DB", "--remote"]);
	let pending;
	try {
		pending = pendingMigrations(ROOT, "--remote");
	} catch (error) {
		console.error(`[drover] ${error instanceof Error ? error.message : String(error)}\n[drover] the Worker was not deployed.`);
		process.exit(1);
	}
	if (pending.length > 0) {
		console.error(
			`[drover] ${pending.length} D1 migration${pending.length === 1 ? " is" : "s are"} still not applied (${pending.join(", ")}), so the Worker was not deployed: ` +
				"its code reads what they add. Run `npm run deploy` again and answer yes, or apply them with `npx wrangler d1 migrations apply DB --remote` first.",
		);
		process.exit(1);
	}
	// `npm run deploy -- <args>` hands its arguments to wrangler deploy, as it did before this script.
	wrangler(["deploy", ...process.argv.slice(2)]);
}
