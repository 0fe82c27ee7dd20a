/**
 * The real bucket, recording the gets (their ranges), puts and multipart uploads made through it:
 * for tests that check which reads and writes a reader or writer makes, not only what it answers.
 */
export function recording(inner: R2Bucket): { bucket: R2Bucket; gets: (R2Range | null)[]; puts: string[]; uploads: R2MultipartUpload[] } {
	const gets: (R2Range | null)[] = [];
	const puts: string[] = [];
	const uploads: R2MultipartUpload[] = [];
	const wrapped: R2Bucket = {
		head: (key) => inner.head(key),
		get: ((key: string, options?: R2GetOptions) => {
			gets.push((options?.range as R2Range | undefined) ?? null);
			return inner.get(key, options);
		}) as R2Bucket["get"],
		put: ((key: string, value: ArrayBufferView, options?: R2PutOptions) => {
			puts.push(key);
			return inner.put(key, value, options);
		}) as R2Bucket["put"],
		createMultipartUpload: async (key, options) => {
			const upload = await inner.createMultipartUpload(key, options);
			uploads.push(upload);
			return upload;
		},
		resumeMultipartUpload: (key, uploadId) => inner.resumeMultipartUpload(key, uploadId),
		delete: (keys) => inner.delete(keys),
		list: (options) => inner.list(options),
	};
	return { bucket: wrapped, gets, puts, uploads };
}
