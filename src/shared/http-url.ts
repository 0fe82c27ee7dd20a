/** True when `value` parses as an http: or https: URL: what a URL secret must hold before it is fetched. */
export function isHttpUrl(value: string): boolean {
	const url = URL.parse(value);
	return url !== null && (url.protocol === "http:" || url.protocol === "https:");
}
