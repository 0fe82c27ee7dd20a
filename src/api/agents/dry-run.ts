import { z } from "@hono/zod-openapi";
import { agentRpc } from "../../../durable-objects/agent/client.ts";
import { alreadyDefined, definitionRevision, deletedSince, notDefined, revisionChanged } from "../../config/fleet.ts";
import { readinessProblems, readinessWarnings } from "../../config/readiness.ts";
import { scheduleWarnings } from "../../config/warnings.ts";
import { AgentSchema, type AgentDefinition } from "../../config/schema.ts";
import { ConflictError, NotFoundError, PreconditionFailedError } from "../../errors.ts";
import { getRegisteredAgent } from "../../store/agent-registry.ts";
import { ScheduleView, scheduleViews } from "./views.ts";

export const DryRunQuery = z.strictObject({
	dry_run: z
		.enum(["true", "false"])
		.optional()
		.openapi({ description: "true: the definition is checked as the write would check it and answered as AgentDryRun (200), nothing stored" }),
});

export const AgentDryRun = z
	.object({
		dry_run: z.literal(true),
		name: z.string(),
		action: z.enum(["create", "update", "unchanged"]).openapi({ description: "What the write would do: unchanged when the definition is the agent's already" }),
		definition: AgentSchema.openapi({ description: "As it would be stored, defaults filled in" }),
		definition_revision: z.string().openapi({ description: "The revision it would have" }),
		previous_revision: z.string().nullable().openapi({ description: "The agent's revision now; null for a create" }),
		schedules: z.array(ScheduleView).openapi({ description: "Its schedules with the next run each would have" }),
		warnings: z.array(z.string()).openapi({ description: "What would fail though it runs (a secret it names not set), as the agent's own warnings say" }),
	})
	.openapi("AgentDryRun");

/** The answer's shape, for the CLI (a type-only import). */
export type AgentDryRunT = z.infer<typeof AgentDryRun>;

/**
 * A write checked, not made: refused as it would be (a create of a live agent, a replace of none,
 * an If-Match of another revision), on the D1 registry's word, which the agent's own object decides
 * the real write on (the two differ only while a write's sync is under way).
 */
export async function dryRun(env: Env, agent: AgentDefinition, expect: "create" | "replace", ifRevision?: string): Promise<AgentDryRunT> {
	const registered = await getRegisteredAgent(env.DB, agent.name);
	const current = registered?.definition && registered.deletedAt === null ? registered.definitionRevision : null;
	if (expect === "create" && current !== null) throw new ConflictError(alreadyDefined(agent.name));
	// A deleted agent's is the edit's own 404, saying when (the registry row read above holds it).
	if (expect === "replace" && current === null) {
		throw new NotFoundError(registered?.deletedAt != null ? deletedSince(agent.name, registered.deletedAt) : notDefined(agent.name));
	}
	if (ifRevision !== undefined && ifRevision !== current) throw new PreconditionFailedError(revisionChanged(agent.name, ifRevision, current));
	const revision = await definitionRevision(agent);
	const problems = readinessProblems(agent, env, new Date());
	// An operator's pause stands over an automatic one (the object keeps it): only then is the object
	// asked, so a dry run of a definition that can run costs no Durable Object request.
	const paused = problems.length > 0 && current !== null ? (await agentRpc(env, agent.name).status(agent.name, "api")).paused : null;
	const pausedBy = paused && paused.by !== "auto" ? paused.by : null;
	return {
		dry_run: true,
		name: agent.name,
		action: current === null ? "create" : current === revision ? "unchanged" : "update",
		definition: agent,
		definition_revision: revision,
		previous_revision: current,
		schedules: scheduleViews(agent, new Date()),
		warnings: [
			// A definition the Worker cannot run is paused as it is stored (paused_by auto): said before.
			...problems.map((problem) =>
				pausedBy === null
					? `it would be paused at once, until this is mended: ${problem}`
					: `it is paused (by ${pausedBy}) and stays so; resumed, it would be paused again at once until this is mended: ${problem}`,
			),
			...readinessWarnings(agent, env),
			...scheduleWarnings(agent),
		],
	};
}
