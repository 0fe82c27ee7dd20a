/**
 * Cloudflare caps the subrequests of one invocation (10,000 on Workers Paid unless wrangler.toml's
 * `[limits] subrequests` says otherwise): every fetch counts, and every call to R2, D1 or another
 * Durable Object. Past the cap each one throws, so a model call reads as a network failure and a
 * webhook tool's effect as unknown. An agent's pass runs every job of the agent for up to ten
 * minutes in one alarm invocation: it counts what it sends through the env it hands its jobs and
 * closing work (countedEnv), and hands over to a fresh alarm before the cap (see PassBudget).
 */

/**
 * The share of the limit an invocation plans to use. The rest is for what is under way when it
 * stops: an agent pass's running steps (a model call and its retries, a tool call and its
 * redirects) and closing work (outputs to R2, the index to D1, deliveries).
 */
export const SUBREQUEST_SHARE = 0.8;

/** Subrequests an invocation has made, against its share of the limit (`limit`: SUBREQUEST_LIMIT). */
export class SubrequestBudget {
	private readonly share: number;
	made = 0;

	constructor(limit: number) {
		this.share = Math.floor(limit * SUBREQUEST_SHARE);
	}

	note(count = 1): void {
		this.made += count;
	}

	/** How many more the invocation may make. */
	get left(): number {
		return Math.max(0, this.share - this.made);
	}
}

/** Where a counted env keeps its counter: read by outboundFetch, never a binding. */
const NOTE = Symbol("drover.subrequest");

type Note = () => void;

/**
 * The fetch an outbound request is made with: counted when `env` is a pass's counted env, the
 * global fetch (looked up per call, as tests replace it) either way.
 */
export function outboundFetch(env: object): typeof fetch {
	const note = (env as { [NOTE]?: Note })[NOTE];
	return (input, init) => {
		note?.();
		return fetch(input, init);
	};
}

/** `env` with its D1 and R2 bindings counting each request, and outboundFetch counting each fetch, through `note`. */
export function countedEnv(env: Env, note: Note): Env {
	const counted: Env & { [NOTE]: Note } = {
		...env,
		DB: countedDatabase(env.DB, note),
		OUTPUT: countedBucket(env.OUTPUT, note),
		AGENT: countedNamespace(env.AGENT, note),
		SCHEDULER_SHARD: countedNamespace(env.SCHEDULER_SHARD, note),
		[NOTE]: note,
	};
	return counted;
}

/**
 * Every R2 operation is one request (resumeMultipartUpload only builds a handle), and so is each
 * call on a multipart upload's handle (a part, the completion, an abort).
 */
function countedBucket(bucket: R2Bucket, note: Note): R2Bucket {
	return new Proxy(bucket, {
		get(target, prop) {
			const value = Reflect.get(target, prop, target) as unknown;
			if (typeof value !== "function") return value;
			return (...args: unknown[]) => {
				if (prop === "resumeMultipartUpload") return countedCalls(value.apply(target, args) as R2MultipartUpload, note);
				note();
				const result = (value as (...a: unknown[]) => unknown).apply(target, args);
				if (prop === "createMultipartUpload") return (result as Promise<R2MultipartUpload>).then((upload) => countedCalls(upload, note));
				return result;
			};
		},
	});
}

/** An object each of whose method calls is one request: a multipart upload's handle, a Durable Object's stub. */
function countedCalls<T extends object>(object: T, note: Note): T {
	return new Proxy(object, {
		get(target, prop) {
			const value = Reflect.get(target, prop, target) as unknown;
			// Not a method: a stub answers every name, and `then` would make it look like a promise.
			if (typeof value !== "function" || typeof prop !== "string" || prop === "then") return value;
			return (...args: unknown[]) => {
				note();
				// Reflect.apply, not value.apply: an RPC method's `apply` would be taken for a method named so.
				return Reflect.apply(value as (...a: unknown[]) => unknown, target, args);
			};
		},
	});
}

/** A Durable Object namespace whose stubs count each call (an RPC or a fetch is one subrequest). */
function countedNamespace<T extends Rpc.DurableObjectBranded | undefined>(namespace: DurableObjectNamespace<T>, note: Note): DurableObjectNamespace<T> {
	return new Proxy(namespace, {
		get(target, prop) {
			const value = Reflect.get(target, prop, target) as unknown;
			if (typeof value !== "function") return value;
			return (...args: unknown[]) => {
				const result = (value as (...a: unknown[]) => unknown).apply(target, args);
				return prop === "get" || prop === "getByName" ? countedCalls(result as object, note) : result;
			};
		},
	});
}

/** The statements a counted database prepared, to hand the real ones to batch(). */
const realStatements = new WeakMap<object, D1PreparedStatement>();

/** A statement is one request when it runs (first, run, all, raw); a batch is one, whatever it holds. */
function countedDatabase(db: D1Database, note: Note): D1Database {
	return new Proxy(db, {
		get(target, prop) {
			const value = Reflect.get(target, prop, target) as unknown;
			if (prop === "prepare") return (query: string) => countedStatement(target.prepare(query), note);
			if (prop === "batch") {
				return (statements: D1PreparedStatement[]) => {
					note();
					return target.batch(statements.map((s) => realStatements.get(s) ?? s));
				};
			}
			if (typeof value !== "function") return value;
			return (...args: unknown[]) => {
				if (prop === "exec" || prop === "dump") note();
				return (value as (...a: unknown[]) => unknown).apply(target, args);
			};
		},
	});
}

function countedStatement(statement: D1PreparedStatement, note: Note): D1PreparedStatement {
	const counted = new Proxy(statement, {
		get(target, prop) {
			const value = Reflect.get(target, prop, target) as unknown;
			if (typeof value !== "function") return value;
			if (prop === "bind") return (...values: unknown[]) => countedStatement(target.bind(...values), note);
			return (...args: unknown[]) => {
				if (prop === "first" || prop === "run" || prop === "all" || prop === "raw") note();
				return (value as (...a: unknown[]) => unknown).apply(target, args);
			};
		},
	});
	realStatements.set(counted, statement);
	return counted;
}
