import { describe, expect, it } from "vitest";
import { migrationsLine } from "../../scripts/migrations.mjs";

// What `wrangler d1 migrations apply DB --local` writes into a pipe (wrangler 4), cut short: on a
// first start it draws the table of all of them again after each one it applies, ~400 lines for 12.
const TABLE_ROW = (name: string, status = "") => `│ ${name.padEnd(36)} │${status ? ` ${status}     │` : ""}`;
const FIRST_RUN = [
	"",
	" ⛅️ wrangler 4.164.0",
	"────────────────────",
	"Resource location: local ",
	"",
	"Use --remote if you want to access the remote instance.",
	"",
	"Migrations to be applied:",
	"┌──────────────────────────────────────┐",
	TABLE_ROW("0001_create_job_index.sql"),
	TABLE_ROW("0012_incidents_by_agent_time.sql"),
	"└──────────────────────────────────────┘",
	"? About to apply 12 migration(s)",
	"Your database may not be available to serve requests during the migration, continue?",
	"🤖 Using fallback value in non-interactive context: yes",
	"🌀 Executing on local database DB (00000000-0000-0000-0000-000000000000) from .wrangler/state/v3/d1:",
	"🚣 7 commands executed successfully.",
	TABLE_ROW("0001_create_job_index.sql", "✅"),
	TABLE_ROW("0012_incidents_by_agent_time.sql", "✅"),
	"",
].join("\n");

describe("npm start's one line for the D1 migrations it applied", () => {
	it("says how many were applied, in place of wrangler's tables", () => {
		expect(migrationsLine(FIRST_RUN)).toBe("[drover] applied 12 D1 migrations to the local database (.wrangler/state)");
		expect(migrationsLine(FIRST_RUN.replace("apply 12 migration(s)", "apply 1 migration(s)"))).toBe("[drover] applied 1 D1 migration to the local database (.wrangler/state)");
	});

	it("says nothing when there was none to apply, as on every start after the first", () => {
		expect(migrationsLine("\n ⛅️ wrangler 4.164.0\n────────────────────\nResource location: local \n\nUse --remote if you want to access the remote instance.\n\n✅ No migrations to apply!\n")).toBeNull();
	});

	it("says they were applied, without a count, when wrangler's words change", () => {
		expect(migrationsLine("Done: 0013_next.sql ✅\n")).toBe("[drover] applied the D1 migrations to the local database (.wrangler/state)");
	});
});
