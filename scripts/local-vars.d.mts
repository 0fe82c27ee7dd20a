export function localVars(input: {
	devVars: Record<string, string>;
	env: Record<string, string | undefined>;
	base: string;
	urlSecrets: string[];
	webhookSecrets: string[];
	sink: string | null;
}): { vars: string[]; sunk: string[]; madeHooks: string[]; envOnly: string[] };
