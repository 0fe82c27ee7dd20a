/**
 * A definition's fields that hold one of the Worker's secret values, and the definition as a read
 * token is shown it. An API write holding one is refused (definitions.ts), but a fleet.yaml agent is
 * not written through the API, one stored before that refusal existed is still stored, and a secret
 * set after a definition was written may be a value it already held: their reads show the marker in
 * its place, and the operator is told which agent and field (never the value).
 */
import { formatPath } from "../shared/zod-issues.ts";
import { REDACTED } from "./redact.ts";
import { replaceSecretValues } from "./secret-values.ts";

/** Where a value is: a string's own path, or for a key the path of the object it is in (the key itself is the value not to repeat). */
export interface HeldAt {
	path: string;
	key: boolean;
}

/** Each string and key of `value` that `holds` is true of, by path, in document order. */
function pathsWhere(value: unknown, holds: (text: string) => boolean): HeldAt[] {
	const found: HeldAt[] = [];
	const walk = (node: unknown, path: PropertyKey[]) => {
		if (typeof node === "string") {
			if (holds(node)) found.push({ path: formatPath(path), key: false });
		} else if (Array.isArray(node)) node.forEach((item, i) => walk(item, [...path, i]));
		else if (node !== null && typeof node === "object") {
			for (const [key, child] of Object.entries(node)) {
				if (holds(key)) found.push({ path: formatPath(path), key: true });
				else walk(child, [...path, key]);
			}
		}
	};
	walk(value, []);
	return found;
}

const holdsSecret = (text: string) => replaceSecretValues(text, REDACTED) !== text;

/** The fields of a definition (or any JSON value) holding one of the Worker's secret values. */
export const secretValuePaths = (definition: unknown): HeldAt[] => pathsWhere(definition, holdsSecret);

/** The fields of a definition holding the marker a read puts where a secret's value was. */
export const markerPaths = (definition: unknown): HeldAt[] => pathsWhere(definition, (text) => text.includes(REDACTED));

/**
 * A definition as read tokens are shown it: each of the Worker's secret values, in a string or a key,
 * replaced by the marker. The same object when it holds none (the usual case: a walk of string
 * searches, no copy).
 */
export function shownDefinition<T>(definition: T): T {
	if (secretValuePaths(definition).length === 0) return definition;
	const copy = (node: unknown): unknown => {
		if (typeof node === "string") return replaceSecretValues(node, REDACTED);
		if (Array.isArray(node)) return node.map(copy);
		if (node !== null && typeof node === "object") return Object.fromEntries(Object.entries(node).map(([k, v]) => [replaceSecretValues(k, REDACTED), copy(v)]));
		return node;
	};
	return copy(definition) as T;
}
