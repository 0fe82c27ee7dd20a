/** The API_TOKENS the test Worker runs with (see vitest.config.mts). */
export const TOKENS = {
	read: "read-token-3f9a1c7e5b2d4f60",
	operate: "operate-token-8c1e7a3b9d5f2e40",
	admin: "admin-token-6d2b8f4a1c9e7b30",
} as const;

export const API_TOKENS = `reader:read:${TOKENS.read},operator:operate:${TOKENS.operate},root:admin:${TOKENS.admin}`;

/** The secret the example `triage` agent's webhooks are signed with in tests. */
export const WEBHOOK_SECRET = "whsec-test-5a1f0c9e3b7d2a6f";
/** A second agent's webhook secret (OTHER_WEBHOOK_SECRET): one agent's signature must not start another's jobs. */
export const OTHER_WEBHOOK_SECRET = "whsec-test-other-8c2e4b1d7f09";
