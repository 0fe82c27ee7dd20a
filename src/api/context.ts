import type { Role } from "./auth/roles.ts";

/** Who made the request, resolved from the bearer token (never the token itself). */
export interface Principal {
	name: string;
	role: Role;
}

export interface AppEnv {
	Bindings: Env;
	Variables: {
		principal: Principal;
		requestId: string;
		/** When the request came in (Date.now()), for its log lines' `ms`. */
		startedAt?: number;
		/** The code of the error the request was answered with, for its request line. */
		errorCode?: string;
		/** The request's failure is logged already (request.failed, request.crashed): its request line is not. */
		errorLogged?: boolean;
	};
}
