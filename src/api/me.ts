import { z } from "@hono/zod-openapi";
import { ROLES } from "./auth/roles.ts";
import { createApi, withRole } from "./factory.ts";

const Me = z
	.object({
		name: z.string().openapi({ description: "The token's name in API_TOKENS, as logs and job records show the caller" }),
		role: z.enum(ROLES),
	})
	.openapi("Me");

export type MeShape = z.infer<typeof Me>;

export const meApi = createApi().openapi(
	withRole("read", {
		method: "get",
		operationId: "getMe",
		path: "/",
		summary: "The caller: its token's name and role (the dashboard offers only the actions the role may take)",
		responses: { 200: { description: "The caller", content: { "application/json": { schema: Me } } } },
	}),
	(c) => c.json({ name: c.var.principal.name, role: c.var.principal.role }, 200),
);
