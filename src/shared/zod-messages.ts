import { z } from "@hono/zod-openapi";

// A field left out reads "required", whatever its type: zod's own words ("Invalid input: expected
// string, received undefined", "Invalid option: expected one of …") describe a value that was never sent.
z.config({
	customError: (iss) => (iss.input === undefined && (iss.code === "invalid_type" || iss.code === "invalid_value") ? "required" : undefined),
});
