/**
 * Checks a tool's input_schema for the mistakes that make it unusable: the Messages API refuses a
 * tool whose schema is not valid JSON Schema (so every run of the agent would fail), and the
 * approval check could not hold edited input to it. Not a full meta-schema validation (that would
 * bundle the draft's vocabularies): the keywords whose values have a fixed shape, and every regex.
 * Optionally the prose too: the titles and descriptions the model reads about each field.
 */
export interface SchemaProblem {
	path: (string | number)[];
	message: string;
}

const TYPES = new Set(["null", "boolean", "object", "array", "number", "string", "integer"]);
const SUBSCHEMA = ["items", "additionalItems", "additionalProperties", "unevaluatedItems", "unevaluatedProperties", "contains", "propertyNames", "not", "if", "then", "else"];
const SUBSCHEMA_MAP = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const SUBSCHEMA_LIST = ["allOf", "anyOf", "oneOf", "prefixItems"];
const COUNT = ["maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties", "maxContains", "minContains"];
const NUMBER = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];
/** Text the model reads with the tool: the prose, and the values and names it is shown. */
const PROSE = ["title", "description", "$comment", "const", "default"];
const PROSE_LISTS = ["enum", "examples"];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function regexProblem(source: string): string | null {
	try {
		new RegExp(source, "u");
		return null;
	} catch (err) {
		return `is not a valid regular expression: ${err instanceof Error ? err.message : String(err)}`;
	}
}

/**
 * Every problem found, each at its path inside the schema; [] when none. Iterative: no recursion.
 * `prose` says what is wrong with a title's or description's text, if anything.
 */
export function jsonSchemaProblems(schema: unknown, prose?: (text: string) => string | null): SchemaProblem[] {
	const problems: SchemaProblem[] = [];
	const stack: [unknown, (string | number)[]][] = [[schema, []]];
	while (stack.length > 0) {
		const [node, path] = stack.pop()!;
		if (typeof node === "boolean") continue;
		if (!isObject(node)) {
			problems.push({ path, message: "a schema must be an object or a boolean" });
			continue;
		}
		const at = (key: string | number, ...more: (string | number)[]) => [...path, key, ...more];
		if ("type" in node) {
			const types = Array.isArray(node.type) ? node.type : [node.type];
			const bad = types.filter((t) => typeof t !== "string" || !TYPES.has(t));
			if (bad.length > 0 || types.length === 0) problems.push({ path: at("type"), message: `must be one of ${[...TYPES].join(", ")} (or a list of them), not ${JSON.stringify(node.type)}` });
		}
		if ("pattern" in node) {
			const problem = typeof node.pattern === "string" ? regexProblem(node.pattern) : "must be a string";
			if (problem) problems.push({ path: at("pattern"), message: problem });
		}
		if ("required" in node && !(Array.isArray(node.required) && node.required.every((r) => typeof r === "string"))) {
			problems.push({ path: at("required"), message: "must be a list of property names" });
		}
		if ("enum" in node && !Array.isArray(node.enum)) problems.push({ path: at("enum"), message: "must be a list of values" });
		for (const key of COUNT) {
			if (key in node && !(Number.isInteger(node[key]) && (node[key] as number) >= 0)) problems.push({ path: at(key), message: "must be a non-negative integer" });
		}
		for (const key of NUMBER) {
			if (key in node && typeof node[key] !== "number") problems.push({ path: at(key), message: "must be a number" });
		}
		if (prose) proseProblems(node, at, prose, problems);
		if ("multipleOf" in node && !(typeof node.multipleOf === "number" && node.multipleOf > 0)) problems.push({ path: at("multipleOf"), message: "must be a number above 0" });
		for (const key of SUBSCHEMA) {
			if (!(key in node)) continue;
			// Draft 7's `items` may be a list of schemas.
			if (key === "items" && Array.isArray(node.items)) node.items.forEach((s, i) => stack.push([s, at(key, i)]));
			else stack.push([node[key], at(key)]);
		}
		for (const key of SUBSCHEMA_MAP) {
			if (!(key in node)) continue;
			const map = node[key];
			if (!isObject(map)) {
				problems.push({ path: at(key), message: "must be an object of schemas" });
				continue;
			}
			for (const [name, sub] of Object.entries(map)) {
				if (key === "patternProperties") {
					const problem = regexProblem(name);
					if (problem) problems.push({ path: at(key, name), message: `key ${problem}` });
				}
				stack.push([sub, at(key, name)]);
			}
		}
		for (const key of SUBSCHEMA_LIST) {
			if (!(key in node)) continue;
			const list = node[key];
			if (!Array.isArray(list) || list.length === 0) {
				problems.push({ path: at(key), message: "must be a non-empty list of schemas" });
				continue;
			}
			list.forEach((s, i) => stack.push([s, at(key, i)]));
		}
	}
	return problems;
}

/** The model reads every string of a tool's schema, names and values as much as the prose. */
function proseProblems(
	node: Record<string, unknown>,
	at: (key: string | number, ...more: (string | number)[]) => (string | number)[],
	prose: (text: string) => string | null,
	problems: SchemaProblem[],
): void {
	const check = (text: unknown, path: (string | number)[], what = "") => {
		const problem = typeof text === "string" ? prose(text) : null;
		if (problem) problems.push({ path, message: what + problem });
	};
	for (const key of PROSE) check(node[key], at(key));
	for (const key of PROSE_LISTS) if (Array.isArray(node[key])) node[key].forEach((v, i) => check(v, at(key, i)));
	if (isObject(node.properties)) for (const name of Object.keys(node.properties)) check(name, at("properties", name), "its name is ");
}
