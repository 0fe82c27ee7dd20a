import type { Role } from "./auth/roles.ts";

/** Who made the request, resolved from the bearer token (never the token itself). */
export interface Principal {
	name: string;
	role: Role;
}

export interface AppEnv {
	Bindings: Env;
	Variables: { principal: Principal; requestId: string };
}
