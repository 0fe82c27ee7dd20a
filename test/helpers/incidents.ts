import type { Incident } from "../../src/store/incidents.ts";

/** A freshly detected incident as the store returns it, for a test that sends one (`overrides` changes it). */
export function detectedIncident(overrides: Partial<Incident> = {}): Incident {
	return {
		id: "inc_0001",
		agent: "flaky",
		signature: "sig",
		class: "unknown",
		state: "detected",
		error: "boom",
		count: 1,
		first_seen_at: "2024-12-05T10:00:00.000Z",
		last_seen_at: "2024-12-05T10:00:00.000Z",
		last_job_id: null,
		alerted_at: null,
		resolved_at: null,
		closed_at: null,
		closed_by: null,
		failing: [],
		...overrides,
	};
}

/**
 * The real D1, the first statement whose SQL starts with `prefix` (run alone or in a batch) run
 * through `around`: what another writer does just before it, or an answer lost just after it.
 */
function interceptOnce(db: D1Database, prefix: string, around: (run: () => Promise<unknown>) => Promise<unknown>): D1Database {
	const marked = new WeakSet<object>();
	let pending = true;
	const once = (run: () => Promise<unknown>) => {
		if (!pending) return run();
		pending = false;
		return around(run);
	};
	return new Proxy(db, {
		get(target, prop) {
			if (prop === "batch") {
				return (statements: D1PreparedStatement[]) => (statements.some((s) => marked.has(s)) ? once(() => target.batch(statements)) : target.batch(statements));
			}
			if (prop !== "prepare") return Reflect.get(target, prop, target);
			return (query: string) => {
				const statement = target.prepare(query);
				if (!query.trimStart().startsWith(prefix)) return statement;
				const bind = statement.bind.bind(statement);
				statement.bind = (...values: unknown[]) => {
					const bound = bind(...values);
					marked.add(bound);
					for (const method of ["run", "first", "all", "raw"] as const) {
						const real = (bound[method] as (...a: unknown[]) => Promise<unknown>).bind(bound);
						(bound as unknown as Record<string, unknown>)[method] = (...a: unknown[]) => once(() => real(...a));
					}
					return bound;
				};
				return statement;
			};
		},
	});
}

/**
 * The real D1, but `write` runs on it just before the first statement whose SQL starts with
 * `prefix` reaches it: another writer's statement landing between a caller's read and its write,
 * in that order every time.
 */
export function writeBefore(db: D1Database, prefix: string, write: (db: D1Database) => Promise<unknown>): D1Database {
	return interceptOnce(db, prefix, async (run) => {
		await write(db);
		return run();
	});
}

/** The real D1, but the first statement whose SQL starts with `prefix` is taken and its answer lost, as a call timed out after its write landed. */
export function loseAnswer(db: D1Database, prefix: string): D1Database {
	return interceptOnce(db, prefix, async (run) => {
		await run();
		throw new Error("D1_ERROR: timed out");
	});
}
