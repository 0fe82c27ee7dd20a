import { z } from "@hono/zod-openapi";

// A field left out reads "required", with the type it takes: zod's own words ("Invalid input: expected
// string, received undefined", "Invalid option: expected one of …") describe a value that was never
// sent. The API and fleet.yaml say it alike.
z.config({
	customError: (iss) => {
		if (iss.input !== undefined) return undefined;
		if (iss.code === "invalid_type") return `required (${iss.expected})`;
		return iss.code === "invalid_value" ? "required" : undefined;
	},
});
