import type { Command } from "commander";
import { act, type Context } from "../context.ts";
import { SCHEDULER_SHARDS } from "../../src/scheduler/shards.ts";
import { shapes } from "../shapes.ts";

export function registerTick(program: Command): void {
	program
		.command("tick")
		.description("run one scheduler tick now, as the cron trigger would (admin): each due slot is claimed once, whichever tick gets there first")
		.option("--json", "print the API's JSON")
		.action(act(tick));
}

/** A tick's shards that did not answer (their agents not called that minute), as `drover tick` and `drover status` say it. */
export function shardsUnanswered(n: number): string {
	return `${n} shard${n === 1 ? "" : "s"} of ${SCHEDULER_SHARDS} did not answer`;
}

async function tick(ctx: Context, opts: { json?: boolean }): Promise<number> {
	const answer = await ctx.client.json("/v1/tick", shapes.tick, { method: "POST" });
	if (opts.json) {
		ctx.json(answer);
		return 0;
	}
	const { p } = ctx;
	const outcome = answer.outcome === "ok" ? p.green("ok") : p.yellow(`${answer.outcome}: see drover status`);
	const agents = `${answer.agents_called} agent${answer.agents_called === 1 ? "" : "s"} called`;
	// Absent from an older server's answer.
	const deferred = answer.deferred ? `, ${answer.deferred} left to follow-ups` : "";
	const behind = answer.shards_behind ? p.yellow(` (${answer.shards_behind} shard${answer.shards_behind === 1 ? "" : "s"} behind: see drover status)`) : "";
	const unanswered = answer.shards_failed ? p.yellow(`, ${shardsUnanswered(answer.shards_failed)}`) : "";
	ctx.out(`ticked ${answer.scheduled_time}: ${outcome}, ${agents}, ${answer.claimed} claimed, ${answer.skipped} skipped${unanswered}${deferred}${behind}`);
	return 0;
}
