import { describe, expect, it } from "vitest";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { jobOf, runToRest } from "../helpers/jobs.ts";
import { fake, outboundLog } from "../helpers/outbound.ts";
import { ticketTool } from "../helpers/tools.ts";

// Two operators acting on one job at once: one on the dashboard, one with the CLI. The object takes
// their actions one at a time; the one that comes second is refused, and its refusal must say what
// the first did (whose decision or cancel won, and why), not only the state it left.

const post = (path: string, body?: unknown, as: "operate" | "admin" = "operate") => call(path, { method: "POST", as, body });

/** A job of a new agent waiting for its create_ticket call's approval. */
async function waitingJob(name: string) {
	const emulator = useEmulator();
	emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "Disk full on db-1" } } }, { text: "Done." });
	await createAgent({ name, tools: [ticketTool] });
	fake("https://tickets.example.test", () => Response.json({ id: 44 }));
	const job = await runToRest(name);
	expect(job.status).toBe("approval_pending");
	return { ...job, call: job.pending_approval!.tool_use_id };
}

const ticketsFiled = () => outboundLog.filter((r) => r.url.startsWith("https://tickets")).length;

describe("a decision crossing a cancel", () => {
	it("an approve with edited input, read before the cancel and sent after it, is refused saying whose cancel it was and that the call will not run", async () => {
		const job = await waitingJob("cross-cancel-approve");
		const filed = ticketsFiled();
		expect((await post(`/v1/jobs/${job.id}/cancel`, { reason: "wrong host" })).status).toBe(200);

		const approve = await post(`/v1/jobs/${job.id}/approval`, { decision: "approve", tool_use_id: job.call, tool_input: { title: "Disk full on db-2" } }, "admin");
		expect(approve.status).toBe(409);
		expect((await errorOf(approve)).message).toBe(
			`job ${job.id} is cancelled (cancelled by operator: wrong host), not waiting for an approval; create_ticket (${job.call}) was never decided, and will not run`,
		);
		await settle("cross-cancel-approve");
		expect(await jobOf("cross-cancel-approve", job.id)).toMatchObject({ status: "cancelled" });
		expect(ticketsFiled()).toBe(filed);
	});

	it("a decision naming no call says so too", async () => {
		const job = await waitingJob("cross-cancel-deny");
		expect((await post(`/v1/jobs/${job.id}/cancel`, { reason: "duplicate" }, "admin")).status).toBe(200);
		const deny = await post(`/v1/jobs/${job.id}/approval`, { decision: "deny" });
		expect(deny.status).toBe(409);
		expect((await errorOf(deny)).message).toBe(`job ${job.id} is cancelled (cancelled by root: duplicate), not waiting for an approval`);
	});
});

describe("two decisions crossing", () => {
	it("a deny naming no call, after another operator's approve, is refused saying who approved the call", async () => {
		const job = await waitingJob("cross-approve-deny");
		const [approve, deny] = await Promise.all([post(`/v1/jobs/${job.id}/approval`, { decision: "approve" }), post(`/v1/jobs/${job.id}/approval`, { decision: "deny" }, "admin")]);
		expect(approve.status).toBe(200);
		expect(deny.status).toBe(409);
		expect((await errorOf(deny)).message).toMatch(
			new RegExp(`^job ${job.id} is (running|completed), not waiting for an approval; create_ticket \\(${job.call}\\), the call decided last, was already approved by operator$`),
		);
		await settle("cross-approve-deny");
		expect(await jobOf("cross-approve-deny", job.id)).toMatchObject({ status: "completed" });
	});
});

describe("two cancels crossing", () => {
	it("the second, forced or not, is refused saying whose cancel ended the job, and why", async () => {
		const job = await waitingJob("cross-cancels");
		const first = await post(`/v1/jobs/${job.id}/cancel`, { reason: "wrong host" });
		expect(first.status).toBe(200);
		for (const body of [{ reason: "stale" }, { force: true }]) {
			const again = await post(`/v1/jobs/${job.id}/cancel`, body, "admin");
			expect(again.status).toBe(409);
			expect((await errorOf(again)).message).toBe(`job ${job.id} is already cancelled (cancelled by operator: wrong host)`);
		}
	});
});
