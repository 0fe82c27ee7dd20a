// Its bytes (a Data module, wrangler.toml's rules): as a Text module, bytes that are not UTF-8 would
// arrive as U+FFFD, past telling from the file's own text.
import fleetBytes from "../../fleet.yaml";
import { parseFleetBytes } from "./fleet.ts";
import type { AgentDefinition, Fleet } from "./schema.ts";

// Parsed once per isolate. An invalid file is remembered as its error, so every caller gets the same
// ConfigError and nothing ever runs from a half-loaded fleet.
let loaded: { fleet: Fleet } | { error: unknown } | undefined;

/** The bundled fleet.yaml, validated; throws its ConfigError on every call if the file is invalid. */
export function loadFleet(): Fleet {
	if (loaded === undefined) {
		try {
			loaded = { fleet: parseFleetBytes(new Uint8Array(fleetBytes)) };
		} catch (error) {
			loaded = { error };
		}
	}
	if ("error" in loaded) throw loaded.error;
	return loaded.fleet;
}

export function findAgent(name: string): AgentDefinition | undefined {
	return loadFleet().agents.find((agent) => agent.name === name);
}
