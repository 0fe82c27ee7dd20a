/**
 * A cost in dollars as people read it: four decimals, or the API's six where four would round a cost
 * that is not zero to $0.0000 (a small model's job costs millionths, and a day of them summed showed
 * $0.0001 above jobs that each read $0.0000). Shared by the CLI and the dashboard (whose copy is this
 * function's source), so both say it alike; without imports for that reason.
 */
export function usd(cost: number): string {
	const size = Math.abs(cost);
	return (cost < 0 ? "-$" : "$") + (size !== 0 && size < 0.00005 ? size.toFixed(6) : size.toFixed(4));
}
