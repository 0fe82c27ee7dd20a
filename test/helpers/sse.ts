export interface SseEvent {
	id: string | null;
	event: string;
	data: string;
}

/** Reads Server-Sent Events from a response until `stop` says so or the stream ends. */
export async function readEvents(res: Response, stop: (e: SseEvent, all: SseEvent[]) => boolean = (e) => e.event === "end"): Promise<SseEvent[]> {
	const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
	const events: SseEvent[] = [];
	let buffer = "";
	for (;;) {
		const { value, done } = await reader.read();
		if (done) return events;
		buffer += value;
		let cut: number;
		while ((cut = buffer.indexOf("\n\n")) >= 0) {
			const frame = buffer.slice(0, cut);
			buffer = buffer.slice(cut + 2);
			const e: SseEvent = { id: null, event: "message", data: "" };
			let isComment = true;
			for (const line of frame.split("\n")) {
				if (line.startsWith(":")) continue;
				isComment = false;
				const [field, ...rest] = line.split(":");
				const v = rest.join(":").replace(/^ /, "");
				if (field === "id") e.id = v;
				else if (field === "event") e.event = v;
				else if (field === "data") e.data = e.data ? `${e.data}\n${v}` : v;
			}
			if (isComment || (e.event === "message" && e.data === "" && e.id === null)) continue;
			events.push(e);
			if (stop(e, events)) {
				await reader.cancel();
				return events;
			}
		}
	}
}
