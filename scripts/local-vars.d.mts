export function readDevVars(text: string): Record<string, string>;
export function localVars(input: {
	devVars: Record<string, string>;
	env: Record<string, string | undefined>;
	base: string;
	urlSecrets: string[];
	webhookSecrets: string[];
	sink: string | null;
}): { vars: string[]; secrets: string[]; sunk: string[]; madeHooks: string[]; envOnly: string[] };
export function runEnvFile(devVarsText: string, secrets: string[]): string;
export const ENV_DIR_PREFIX: string;
export function removeOrphanEnvDirs(dir: string): void;
