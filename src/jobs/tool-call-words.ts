/**
 * What the API's tool-call tally counts as failed, in words: calls whose result said they failed, and
 * calls cut off with their effect unknown, which only an indeterminate job (its run ended while a
 * call was executing: one, at least) or a force-cancelled one has. One such call in an indeterminate
 * job is that call. Shared by the CLI and the dashboard (whose copy is this function's source), so
 * both say it alike; without imports for that reason.
 */
export function failedCallsWord(status: string, failed: number): string {
	if (status === "indeterminate") return failed === 1 ? "cut off, effect unknown" : "failed or cut off";
	return status === "cancelled" ? "failed or cut off" : "failed";
}
