/**
 * A failed fetch's message as drover says and stores it. workerd ends its opaque errors with
 * "; reference = <id>", a new id each time ("internal error; reference = d5rhueo02csgfg97pjmg65p6"):
 * kept in an error's text, every failure of one cause read as another, each opening an incident of
 * its own (the signature hashes the text) and paging again. The id is only Cloudflare's to look up,
 * in the runtime's own log, which keeps it.
 */
export function fetchErrorMessage(err: unknown): string {
	const message = err instanceof Error ? err.message : String(err);
	return message.replace(/;?\s*reference\s*=\s*[0-9a-z]{8,}\b/gi, "");
}
