import { Validator, type OutputUnit } from "@cfworker/json-schema";
import type { AgentDefinition } from "../../config/schema.ts";
import { toolParams } from "./definitions.ts";

/** The tool's own input_schema cannot be used to check input: the definition is at fault, not the input. */
export class InvalidToolSchemaError extends Error {}

/** Errors that only say a child failed: the child's own error says how. */
const UMBRELLA = new Set(["properties", "patternProperties", "items", "prefixItems", "allOf", "$ref", "dependentSchemas"]);
const MAX_PROBLEMS = 5;

/**
 * What is wrong with `input` for the tool `name` by the input_schema the model was given, [] when
 * nothing. For the model's own input (a webhook tool's, before it is POSTed) as for input a human
 * supplies in its place (an approval's edit): the Messages API does not hold tool_use input to the
 * schema (only strict tools are, and drover's are not), so a model can send a wrong type, a missing
 * field or one the schema does not allow. Validated without code generation, which Workers forbid.
 */
export function toolInputProblems(agent: AgentDefinition, name: string, input: Record<string, unknown>): { path: string; message: string }[] {
	const tool = toolParams(agent).find((t) => "name" in t && t.name === name);
	const schema = tool && "input_schema" in tool ? tool.input_schema : undefined;
	if (!schema) return [];
	let result: ReturnType<Validator["validate"]>;
	try {
		result = validatorFor(schema).validate(input);
	} catch (err) {
		// A schema stored before definitions were checked for this (a regex that does not compile).
		throw new InvalidToolSchemaError(`tool ${name}'s input_schema is not valid JSON Schema (${err instanceof Error ? err.message : String(err)})`);
	}
	const { valid, errors } = result;
	if (valid) return [];
	return errors
		.filter((e: OutputUnit) => !UMBRELLA.has(e.keyword))
		.slice(0, MAX_PROBLEMS)
		// The validator ends each message with a period, and every caller joins them with "; " or ends
		// its sentence after them: kept, it made `"body".; tool_input…` and `"body".. Call…`.
		.map((e: OutputUnit) => ({ path: `tool_input${e.instanceLocation.slice(1)}`, message: e.error.replace(/\.$/, "") }));
}

/**
 * Validators by the schema they check. A webhook tool's input is checked on every call, and building
 * a validator (with the copy it needs) costs more than the check; a stored definition is parsed once
 * and frozen (see jsonMemo), so its schema objects stand for it across calls.
 */
const validators = new WeakMap<object, Validator>();

function validatorFor(schema: object): Validator {
	let validator = validators.get(schema);
	if (!validator) {
		// A copy: the validator marks up the schema objects it is given, and an agent's definition is frozen.
		validator = new Validator(structuredClone(schema) as Record<string, unknown>, "2020-12", false);
		validators.set(schema, validator);
	}
	return validator;
}
