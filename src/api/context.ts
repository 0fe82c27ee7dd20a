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
		/** The public message the request's error answered with, for its request line. */
		errorMessage?: string;
		/**
		 * The level of the request's failure line where it is not the status's own: a failure anyone
		 * may repeat every minute (a polled /healthz at 503, a webhook route left unconfigured, whose
		 * cause is said once at error) is a warning each time.
		 */
		failureLevel?: "warn";
	};
}
