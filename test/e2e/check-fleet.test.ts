// `npm run check` (and wrangler's build step) validate fleet.yaml with scripts/check-fleet.ts, as the
// Worker will load it: from its bytes, so a file that is not UTF-8 stops the deploy.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { scratchDir } from "./cli-process.ts";

const SCRIPT = path.resolve(import.meta.dirname, "../../scripts/check-fleet.ts");
const FLEET = 'version: 1\nagents:\n  - name: digest\n    prompt: "Grüße an Müller"\n';

function checkFleet(bytes: Buffer, devBuild = ""): { status: number | null; stdout: string; stderr: string } {
	const file = path.join(scratchDir("check-fleet-"), "fleet.yaml");
	writeFileSync(file, bytes);
	const env = { ...process.env, DROVER_DEV_BUILD: devBuild };
	const r = spawnSync(process.execPath, ["--experimental-strip-types", "--no-warnings=ExperimentalWarning", SCRIPT, file], { encoding: "utf8", env });
	// Said of the file as given: its path.
	return { status: r.status, stdout: r.stdout.replaceAll(file, "<file>"), stderr: r.stderr.replaceAll(file, "<file>") };
}

describe("npm run check on fleet.yaml", () => {
	it("fails a Latin-1 file, naming the offset of its first byte that is not UTF-8, where it passed with the names mangled", () => {
		const r = checkFleet(Buffer.from(FLEET, "latin1"));
		expect(r.status).toBe(1);
		expect(r.stdout).toBe("");
		expect(r.stderr).toBe(
			"<file> is invalid:\n  - (file): the file is not valid UTF-8: byte fc at offset 51 is no UTF-8 character; save it as UTF-8 (iconv -f latin1 -t utf-8 converts a Latin-1 file)\n",
		);
	});

	it("fails a UTF-16 file saying it is UTF-16, where it said the root was a string", () => {
		const r = checkFleet(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(FLEET, "utf16le")]));
		expect(r.status).toBe(1);
		expect(r.stderr).toContain("the file is UTF-16, not UTF-8 (it begins with ff fe, UTF-16's byte order mark); save it as UTF-8 (iconv -f utf-16 -t utf-8 converts a UTF-16 file)");
	});

	it("lets an invalid file through with DROVER_DEV_BUILD=1 (npm start sets it), saying loudly that a deploy with it left set ships it", () => {
		const r = checkFleet(Buffer.from(FLEET, "latin1"), "1");
		expect(r.status).toBe(0);
		expect(r.stderr).toContain("<file> is invalid:");
		expect(r.stderr).toContain(
			"drover: DROVER_DEV_BUILD=1 is set, so this build goes on with an invalid fleet.yaml, as npm start needs; anywhere else unset it: a Worker deployed so answers 503 and runs no agent\n",
		);
	});

	it("passes a file that says what it likely does not mean, warning of each: a wait for approval past the job's timeout, a cron running every minute of an hour or on either day field, a webhook secret two agents share", () => {
		const fleet = [
			"version: 1",
			"agents:",
			"  - name: gated",
			"    prompt: Go.",
			"    approval_timeout: 24h",
			"    tools: [{ type: http_fetch, allow_hosts: [example.com], requires_approval: true }]",
			"    webhook: { secret: SHARED_HOOK_SECRET }",
			"    schedules:",
			"      morning: { cron: '* 9 * * *' }",
			"      first-monday: { cron: '0 9 1-7 * 1' }",
			"  - name: twin",
			"    prompt: Go.",
			"    webhook: { secret: SHARED_HOOK_SECRET }",
			"",
		].join("\n");
		const r = checkFleet(Buffer.from(fleet, "utf8"));
		expect(r.status).toBe(0);
		expect(r.stdout).toBe("<file>: 2 agents, 2 schedules OK\n");
		expect(r.stderr.split("\n").filter(Boolean)).toEqual([
			expect.stringMatching(/^warning: gated: approval_timeout 24h is not shorter than timeout 30m \(tool http_fetch needs approval\)/),
			'warning: gated: schedule morning: cron "* 9 * * *" runs every minute of hour 9, 60 runs an hour; for one run at its start write "0 9 …"',
			'warning: gated: schedule first-monday: cron "0 9 1-7 * 1" runs on the days of the month 1-7 and also on the weekdays 1 (either day field matching, not both): to run on one of them only, write * in the other',
			"warning: agents gated, twin share the webhook secret SHARED_HOOK_SECRET: a caller of either can start the other's runs; give each its own",
		]);
	});

	it("passes the same file in UTF-8", () => {
		const r = checkFleet(Buffer.from(FLEET, "utf8"));
		expect(r.stderr).toBe("");
		expect(r.stdout).toBe("<file>: 1 agents, 0 schedules OK\n");
		expect(r.status).toBe(0);
	});
});
