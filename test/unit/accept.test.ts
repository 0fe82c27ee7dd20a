import { describe, expect, it } from "vitest";
import { negotiate, type Offer } from "../../src/shared/accept.ts";

const OFFERS = [
	{ key: "json", type: "application/json" },
	{ key: "yaml", type: "application/yaml", aliases: ["application/x-yaml", "text/yaml", "text/x-yaml"] },
] as const satisfies readonly [Offer<string>, ...Offer<string>[]];

describe("negotiate (RFC 9110 §12.5.1)", () => {
	it.each([
		// No preference, or no acceptable offer: the first offer (the header is disregarded, not a 406).
		[undefined, "json"],
		["", "json"],
		["*/*", "json"],
		["application/*", "json"],
		["text/html", "json"],
		["application/yaml;q=0", "json"],
		["application/yaml; q=0.000", "json"],
		["application/json;q=0", "json"],
		["garbage", "json"],
		// q=0 is "not acceptable", whatever else is listed.
		["application/yaml;q=0, */*", "json"],
		["*/*, application/yaml;q=0", "json"],
		["text/yaml;q=0, application/json;q=0.1", "json"],
		// Asked for by name.
		["application/yaml", "yaml"],
		["APPLICATION/YAML", "yaml"],
		["application/x-yaml", "yaml"],
		["text/yaml", "yaml"],
		["text/x-yaml;charset=utf-8", "yaml"],
		// Weights decide, then specificity, then the order the client listed them in.
		["application/json;q=0.5, application/yaml", "yaml"],
		["application/yaml;q=0.5, application/json", "json"],
		["application/yaml;q=0.9, application/json;q=0.8", "yaml"],
		["application/json;q=0, */*", "yaml"],
		["application/yaml, */*", "yaml"],
		["*/*;q=0.8, application/yaml", "yaml"],
		["application/yaml, application/json", "yaml"],
		["application/json, application/yaml", "json"],
		// A wildcard reaches the canonical type only, never an alias.
		["text/*", "json"],
		// A weight that is not a qvalue makes its element unreadable: it is left out.
		["application/yaml;q=2", "json"],
		["application/yaml;q=abc, application/json;q=0.1", "json"],
		["application/yaml;q=0.5;ext=1, application/json;q=0.4", "yaml"],
	])("Accept: %s gives %s", (header, expected) => {
		expect(negotiate(header, OFFERS)).toBe(expected);
	});
});
