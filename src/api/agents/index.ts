import { createApi } from "../factory.ts";
import { agentActionsApi } from "./actions.ts";
import { agentDefinitionsApi } from "./definitions.ts";
import { notepadApi } from "./notepad.ts";
import { agentSessionsApi } from "./sessions.ts";

/** /v1/agents: definitions (list, create, change, delete), actions (run, pause, resume, runs, jobs), notepad, sessions. */
export const agentsApi = createApi().route("/", agentDefinitionsApi).route("/", agentActionsApi).route("/", notepadApi).route("/", agentSessionsApi);
