import type { z } from "@hono/zod-openapi";

export interface Issue {
	path: string;
	message: string;
	/** Where a YAML body wrote the field (1-based), when it was sent as YAML. */
	line?: number;
	column?: number;
}

/** `["agents", 1, "schedules", "nightly"]` → `agents[1].schedules.nightly`. */
export function formatPath(path: readonly PropertyKey[]): string {
	let out = "";
	for (const segment of path) {
		if (typeof segment === "number") out += `[${segment}]`;
		else out += out ? `.${String(segment)}` : String(segment);
	}
	return out || "(root)";
}

type Position = { line: number; column: number } | undefined;

/**
 * zod's issues as a person reads them: an unknown key is reported at its own path. `at`, given for
 * a body sent as text, says where each path was written (the key's place for an issue of the key).
 */
export function issuesOf(error: z.ZodError, at?: (path: readonly PropertyKey[], isKey: boolean) => Position): Issue[] {
	return error.issues.map((iss) => {
		const unknownKey = iss.code === "unrecognized_keys" && iss.keys.length === 1;
		const own = unknownKey ? [...iss.path, iss.keys[0] ?? ""] : iss.path;
		const message = iss.code === "invalid_key" ? iss.issues.map((inner) => inner.message).join("; ") : iss.message;
		return { path: formatPath(own), message, ...at?.(own, unknownKey || iss.code === "invalid_key") };
	});
}
