import { z } from "zod";
import { ApiClient } from "../client.ts";
import type { Shape } from "../shapes.ts";
import type { Candidate } from "./walk.ts";

// A Tab that waits on a slow server hangs the user's prompt: what is not back by then is not offered.
const LOOKUP_MS = 1_500;

const names = z.object({ agents: z.array(z.object({ name: z.string() })) });
const jobs = z.object({ jobs: z.array(z.object({ id: z.string(), agent: z.string(), status: z.string() })) });
const incidents = z.object({ incidents: z.array(z.object({ id: z.string(), agent: z.string(), state: z.string(), error: z.string() })) });
const notepad = z.record(z.string(), z.string());
const shape = <T>(schema: z.ZodType): Shape<T> => ({ schema });

/**
 * What the API can offer for a word: agents' names, recent jobs' ids, open incidents' ids, a
 * notepad's keys. A lookup that fails (no server, no token, a refusal) offers nothing: completion
 * must never print an error into the user's command line.
 */
export class Lookups {
	readonly #client: ApiClient | null;

	constructor(url: string, token: string | undefined) {
		let client: ApiClient | null = null;
		try {
			client = new ApiClient({ url, token });
		} catch {
			// A malformed --url/DROVER_URL: said by the command itself once it runs.
		}
		this.#client = client;
	}

	async #get<T>(path: string, s: Shape<T>, query: Record<string, string | number | undefined>): Promise<T | null> {
		if (!this.#client) return null;
		try {
			return await this.#client.json(path, s, { query, timeoutMs: LOOKUP_MS });
		} catch {
			return null;
		}
	}

	/** Names starting with `prefix`, by the names-only view, which asks no agent's object. */
	async agents(prefix: string): Promise<Candidate[]> {
		// A prefix no name can start with is a 400 from the API: nothing to offer either way.
		const page = await this.#get<z.infer<typeof names>>("/v1/agents", shape(names), { view: "names", limit: 200, prefix: prefix === "" ? undefined : prefix });
		return (page?.agents ?? []).map((a) => ({ value: a.name }));
	}

	/** The fleet's newest jobs, with their agent and status. */
	async jobs(): Promise<Candidate[]> {
		const page = await this.#get<z.infer<typeof jobs>>("/v1/jobs", shape(jobs), { limit: 50 });
		return (page?.jobs ?? []).map((j) => ({ value: j.id, description: `${j.agent} ${j.status}` }));
	}

	/** Open incidents first: the ones an operator closes or resolves. */
	async incidents(): Promise<Candidate[]> {
		const page = await this.#get<z.infer<typeof incidents>>("/v1/incidents", shape(incidents), { state: "open", limit: 50 });
		return (page?.incidents ?? []).map((i) => ({ value: i.id, description: `${i.agent} ${i.state}: ${i.error.slice(0, 40)}` }));
	}

	async notepadKeys(agent: string): Promise<Candidate[]> {
		const pad = await this.#get<Record<string, string>>(`/v1/agents/${encodeURIComponent(agent)}/notepad`, shape(notepad), {});
		return Object.keys(pad ?? {}).map((key) => ({ value: key }));
	}
}
