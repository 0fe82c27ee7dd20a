import { scanPrompt } from "../agent/injection.ts";
import { BadRequestError } from "../errors.ts";

/**
 * Scans text a caller hands the model: strict for a bare prompt, looser for injected data (where
 * invisible characters are stripped rather than refused). A refusal is a 400 saying why.
 */
export function screenPrompt(text: string, tier: "strict" | "data", field: string = tier === "strict" ? "prompt" : "(body)"): string {
	const result = scanPrompt(text, tier);
	if (!result.ok) {
		throw new BadRequestError(`${field === "(body)" ? "prompt" : field} refused by the injection scan: ${result.reason}`, {
			issues: [{ path: field, message: result.reason }],
		});
	}
	return result.text;
}
