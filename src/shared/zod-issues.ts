import type { z } from "@hono/zod-openapi";

export interface Issue {
	path: string;
	message: string;
}

/** `["agents", 1, "schedules", "nightly"]` → `agents[1].schedules.nightly`. */
function formatPath(path: readonly PropertyKey[]): string {
	let out = "";
	for (const segment of path) {
		if (typeof segment === "number") out += `[${segment}]`;
		else out += out ? `.${String(segment)}` : String(segment);
	}
	return out || "(root)";
}

/** zod's issues as a person reads them: an unknown key is reported at its own path. */
export function issuesOf(error: z.ZodError): Issue[] {
	return error.issues.map((iss) => {
		if (iss.code === "unrecognized_keys" && iss.keys.length === 1) {
			return { path: formatPath([...iss.path, iss.keys[0] ?? ""]), message: iss.message };
		}
		if (iss.code === "invalid_key") {
			return { path: formatPath(iss.path), message: iss.issues.map((inner) => inner.message).join("; ") };
		}
		return { path: formatPath(iss.path), message: iss.message };
	});
}
