import { createScheduledController, env } from "cloudflare:test";
import worker from "../../src/index.ts";

/** Delivers one cron tick to the real scheduled handler, as Cloudflare would, at an explicit time. */
export async function tick(at: string | number): Promise<void> {
	const scheduledTime = typeof at === "string" ? Date.parse(at) : at;
	await worker.scheduled(createScheduledController({ scheduledTime, cron: "* * * * *" }), env);
}
