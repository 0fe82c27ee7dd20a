import { exports } from "cloudflare:workers";
import { Validator, type Schema } from "@cfworker/json-schema";

/**
 * Every answer a test gets through call() is held to the published contract (GET /openapi.json):
 * its status must be one the route documents, and a JSON body must match the schema documented
 * for that status. The CLI and the dashboard are written against that document; an answer drifting
 * from it breaks them where no test of theirs looks.
 */
interface Operation {
	responses: Record<string, ResponseObject | { $ref: string }>;
}
interface ResponseObject {
	content?: Record<string, { schema?: Schema }>;
}
interface Document {
	paths: Record<string, Record<string, Operation>>;
	components: { schemas?: Record<string, Schema>; responses?: Record<string, ResponseObject> };
}
interface Route {
	method: string;
	template: string;
	pattern: RegExp;
	operation: Operation;
}

/** Templates in the order a router tries them: at the first segment they differ, a literal before a parameter. */
function literalFirst(a: Route, b: Route): number {
	const [x, y] = [a.template.split("/"), b.template.split("/")];
	for (let i = 0; i < Math.min(x.length, y.length); i++) {
		const [px, py] = [x[i]!.startsWith("{"), y[i]!.startsWith("{")];
		if (px !== py) return px ? 1 : -1;
	}
	return x.length - y.length;
}

let loaded: Promise<{ doc: Document; routes: Route[] }> | undefined;
const validators = new Map<string, Validator>();
const validated = new Map<string, number>();
const BODIES_CHECKED = 4;

function load(): Promise<{ doc: Document; routes: Route[] }> {
	loaded ??= (async () => {
		const res = await exports.default.fetch(new Request("https://drover.test/openapi.json"));
		if (!res.ok) throw new Error(`GET /openapi.json answered ${res.status}`);
		const doc = (await res.json()) as Document;
		const routes: Route[] = [];
		for (const [template, operations] of Object.entries(doc.paths)) {
			const source = template.split(/\{\w+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
			for (const [method, operation] of Object.entries(operations)) {
				routes.push({ method: method.toUpperCase(), template, pattern: new RegExp(`^${source.join("[^/]+")}$`), operation });
			}
		}
		routes.sort(literalFirst);
		return { doc, routes };
	})();
	// A load that failed is tried again at the next call, not held against every call after it.
	loaded.catch(() => (loaded = undefined));
	return loaded;
}

/** What is wrong with this answer against the document, or null when nothing is (or the route is not in it). */
export async function contractBreach(method: string, url: string, res: Response): Promise<string | null> {
	const { pathname } = new URL(url);
	if (pathname === "/openapi.json") return null;
	const { doc, routes } = await load();
	const asked = method === "HEAD" ? "GET" : method;
	const route = routes.find((r) => r.method === asked && r.pattern.test(pathname));
	// Dashboard pages, static files and routes the API does not publish: not the API's contract.
	if (!route) return null;
	const where = `${method} ${route.template} answered ${res.status}`;
	let documented = route.operation.responses[String(res.status)] ?? route.operation.responses.default;
	if (!documented) return `${where}, a status the document does not list (it lists ${Object.keys(route.operation.responses).join(", ")})`;
	if ("$ref" in documented) documented = doc.components.responses?.[documented.$ref.split("/").at(-1)!] ?? {};
	const type = (res.headers.get("content-type") ?? "").split(";")[0]!.trim();
	if (method === "HEAD" || res.status === 304) return null;
	const types = Object.keys((documented as ResponseObject).content ?? {});
	if (types.length > 0 && type !== "" && !types.includes(type)) return `${where} as ${type}, which the document does not list for it (it lists ${types.join(", ")})`;
	if (type !== "application/json") return null;
	const key = `${route.method} ${route.template} ${res.status}`;
	// A few bodies of each route and status an isolate: the shape is the code's, not the data's, and
	// validating every answer doubled the time of the tests that make hundreds of calls.
	const seen = validated.get(key) ?? 0;
	if (seen >= BODIES_CHECKED) return null;
	validated.set(key, seen + 1);
	const schema = (documented as ResponseObject).content?.["application/json"]?.schema;
	if (!schema) return `${where} with a JSON body the document gives no schema for`;
	const text = await res.clone().text();
	let body: unknown;
	try {
		body = JSON.parse(text);
	} catch {
		return `${where} with a body that is not JSON: ${text.slice(0, 200)}`;
	}
	let validator = validators.get(key);
	if (!validator) {
		validator = new Validator({ ...(schema as object), components: doc.components } as Schema, "2020-12", false);
		validators.set(key, validator);
	}
	const result = validator.validate(body);
	if (result.valid) return null;
	// The leaves say what is wrong; "a subschema had errors" and the like only lead to them.
	const leaves = result.errors.filter((e) => !/^(?:A subschema had errors|Property "[^"]*" does not match schema|Items did not match schema|Item at index \d+ does not match schema)/.test(e.error));
	return `${where} with a body the document's schema refuses: ${(leaves.length ? leaves : result.errors).slice(0, 3).map((e) => `${e.instanceLocation}: ${e.error}`).join("; ")}`;
}
