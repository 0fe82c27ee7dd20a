/** A SqlStorage that sums the rows its statements read (what Cloudflare bills as rows read). */
export function countingReads(sql: SqlStorage): { sql: SqlStorage; rowsRead: () => number } {
	const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
	const counting = new Proxy(sql, {
		get(target, prop) {
			if (prop !== "exec") return Reflect.get(target, prop);
			return (query: string, ...bindings: unknown[]) => {
				const cursor = target.exec(query, ...bindings);
				cursors.push(cursor);
				return cursor;
			};
		},
	});
	return { sql: counting, rowsRead: () => cursors.reduce((n, c) => n + c.rowsRead, 0) };
}
